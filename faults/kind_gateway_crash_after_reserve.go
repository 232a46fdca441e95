package faults

import "github.com/dispatchsim/dispatchsim/sim"

// GatewayCrashAfterReserve: the gateway dies serving a run start right after
// it reserved the idempotency key, before the run exists (seed 002's window).
// The client sees no reply and retries with the same key; the reservation is
// left behind until it goes stale.
var GatewayCrashAfterReserve = register(Kind{
	Name:        "GatewayCrashAfterReserve",
	Description: "the gateway dies right after reserving an idempotency key, before the run is created",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectCrashAfterApply,
	Defaults:    KindOptions{Probability: 0.2},
	needs:       needAdmission,
	applies:     func(p *sim.Point) bool { return p.Group == "gateway" && isReservationWrite(p) },
	hint:        "the gateway's reservation of an idempotency key (Observer.Command's Reserve); Spec.RunAdmission declares admission",
})

// isReservationWrite: the observer's fact for the admission writes that bind
// a key to a new run id (the reservation, and the takeover of a stale one).
func isReservationWrite(p *sim.Point) bool { return p.Kind == sim.PointRedis && p.Fact.Reserve }
