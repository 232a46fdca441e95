package faults

import (
	"fmt"
	"strings"

	"github.com/dispatchsim/dispatchsim/sim"
)

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
	applies:     func(p *sim.Point) bool { return p.Group == "gateway" && isReservationWrite(p) },
})

// isReservationWrite recognises the admission scripts that bind a key to a
// new run id: the reservation (KEYS idempotency, reservations; ARGV value,
// key, now) and the takeover of a stale one (a third key, the old run, and
// ARGV old, new, key, now).
func isReservationWrite(p *sim.Point) bool {
	if p.Kind != sim.PointRedis || (p.Cmd != "evalsha" && p.Cmd != "eval") ||
		!strings.HasPrefix(p.Key, "wf:run:idempotency:") || len(p.Args) < 3 {
		return false
	}
	switch keys, argv := fmt.Sprint(p.Args[2]), len(p.Args)-3; {
	case keys == "2" && argv == 2+3, keys == "3" && argv == 3+4:
		return true
	}
	return false
}
