package sim

import (
	"fmt"
	"time"
)

// EventAction is what an Event does.
type EventAction string

// The events a scenario or a fault plan may schedule.
const (
	// EventStop stops a replica gracefully: it takes no more deliveries, what
	// its handlers hold gets For to finish (the drain), then it is down until
	// an EventStart. What is still held then comes back after the ack wait.
	EventStop EventAction = "stop"
	// EventKill takes a replica down at once, until an EventStart.
	EventKill EventAction = "kill"
	// EventStart starts a replica that a stop or kill took down.
	EventStart EventAction = "start"
	// EventPause freezes a replica for For (a GC pause, a suspended VM).
	EventPause EventAction = "pause"
	// EventStoreLoss fails the store over to a copy For behind: every write
	// acknowledged in the last For is forgotten. The environment breaks its
	// contract; the checker attributes what follows to it.
	EventStoreLoss EventAction = "store-loss"
	// EventBrokerLoss crashes the broker, which comes back without the
	// messages it stored (and acknowledged) in the last For: a lazy fsync.
	// The environment breaks its contract, as with a store loss.
	EventBrokerLoss EventAction = "broker-loss"
	// EventBrokerRestart restarts the broker, which forgets the acks it took
	// in the last For and delivers those messages again. Within the
	// at-least-once contract: nothing is excused.
	EventBrokerRestart EventAction = "broker-restart"
)

// Event is an operator's or the environment's action at a virtual time. A
// rolling deploy is a list of them: each replica stopped with a drain and
// started again, in turn.
type Event struct {
	At     time.Duration
	Action EventAction
	// Replica is the replica acted on, 1-based (stop, kill, start, pause).
	Replica int `json:",omitempty"`
	// For is the drain bound of a stop, the length of a pause, and how far
	// behind the copy a store loss fails over to is.
	For time.Duration `json:",omitempty"`
}

func (e Event) String() string {
	switch e.Action {
	case EventStoreLoss:
		return fmt.Sprintf("%s at %s: the last %s of writes", e.Action, e.At, e.For)
	case EventBrokerLoss:
		return fmt.Sprintf("%s at %s: the last %s of stored messages", e.Action, e.At, e.For)
	case EventBrokerRestart:
		return fmt.Sprintf("%s at %s: the last %s of acks", e.Action, e.At, e.For)
	case EventStop, EventPause:
		return fmt.Sprintf("%s replica-%d at %s for %s", e.Action, e.Replica, e.At, e.For)
	}
	return fmt.Sprintf("%s replica-%d at %s", e.Action, e.Replica, e.At)
}

// validate says what is wrong with e in a world of n replicas.
func (e Event) validate(n int) error {
	switch e.Action {
	case EventStoreLoss, EventBrokerLoss, EventBrokerRestart:
		if e.For <= 0 || e.For > e.At {
			return fmt.Errorf("event %s: the span lost must be positive and no longer than the time before it", e)
		}
		return nil
	case EventStop, EventKill, EventStart, EventPause:
	default:
		return fmt.Errorf("event at %s: unknown action %q", e.At, e.Action)
	}
	if e.Replica < 1 || e.Replica > n {
		return fmt.Errorf("event %s: there are replicas 1 to %d", e, n)
	}
	if e.Action == EventPause && e.For <= 0 {
		return fmt.Errorf("event %s: a pause needs a length", e)
	}
	return nil
}

// drainPoll is how often a stopping replica is looked at for deliveries it
// still holds.
const drainPoll = 100 * time.Millisecond

// Schedule stages e. Scenarios list events in Config.Events; fault kinds that
// draw them (a rolling deploy, a store failover) call Schedule during setup.
func (w *World) Schedule(e Event) error {
	if err := e.validate(len(w.replicas)); err != nil {
		return err
	}
	if e.Action == EventStoreLoss {
		w.k.At(e.At-e.For, func() {
			snap, err := w.store.Snapshot()
			if err != nil {
				panic(fmt.Sprintf("sim: %s: %v", e, err)) // the store holds a type it cannot copy: a harness bug
			}
			w.k.At(e.At, func() {
				w.record(e, "store")
				if _, err := w.store.Lose(snap, "store/failover"); err != nil {
					panic(fmt.Sprintf("sim: %s: %v", e, err)) // as above
				}
			})
		})
		return nil
	}
	switch e.Action {
	case EventBrokerLoss:
		w.k.At(e.At, func() {
			w.record(e, "bus")
			w.simBus().Lose(e.At - e.For)
		})
	case EventBrokerRestart:
		w.k.At(e.At-e.For, w.simBus().RememberSettles)
		w.k.At(e.At, func() {
			w.record(e, "bus")
			w.simBus().ForgetSettles()
		})
	default:
		w.k.At(e.At, func() { w.act(e) })
	}
	return nil
}

// act carries out a replica event now.
func (w *World) act(e Event) {
	i := e.Replica - 1
	r := w.replicas[i]
	w.record(e, r.name)
	switch e.Action {
	case EventPause:
		w.pauseReplica(i, e.For)
	case EventKill:
		r.down = true
		w.crashReplica(i)
	case EventStart:
		r.down = false
		if w.k.Group(r.name).Crashed() {
			w.k.Tracef(r.name, "replica started")
			w.startReplica(r)
		}
	case EventStop:
		r.down = true
		w.bus.StopDeliveries(r.name)
		w.k.Tracef(r.name, "replica stopping: no more deliveries, %s to drain", e.For)
		w.drain(r, w.k.Now()+e.For)
	}
}

// drain waits until r holds no delivery or the deadline passes, then takes
// it down; what it still held comes back after the ack wait.
func (w *World) drain(r *replica, deadline time.Duration) {
	held := 0
	for _, f := range w.bus.Unsettled() {
		if f.Group == r.name {
			held++
		}
	}
	if held > 0 && w.k.Now() < deadline {
		w.k.At(w.k.Now()+drainPoll, func() { w.drain(r, deadline) })
		return
	}
	if w.k.Group(r.name).Crashed() {
		return // it crashed while draining
	}
	// The process goes down now, with whatever its handlers were still
	// doing: recorded as the crash it is for them (a write they made while
	// draining is never followed by what came next).
	w.hist.Faults = append(w.hist.Faults, FaultRecord{Step: w.k.Step(), Time: w.k.Now(), Actor: r.name,
		Kind: "Event:" + string(EventStop), Effect: EffectCrash,
		Target: fmt.Sprintf("%s down at the drain's end, %d deliveries still held", r.name, held)})
	w.k.CrashGroup(r.name)
	w.k.Tracef(r.name, "replica stopped (%d deliveries still held)", held)
}

// record puts an event into the history beside the faults, so reports and
// checkers see it where it happened.
func (w *World) record(e Event, actor string) {
	effect := Effect("")
	switch e.Action {
	case EventPause:
		effect = EffectPause
	case EventKill:
		effect = EffectCrash
	}
	w.hist.Faults = append(w.hist.Faults, FaultRecord{Step: w.k.Step(), Time: w.k.Now(), Actor: actor,
		Kind: "Event:" + string(e.Action), Effect: effect, Target: e.String()})
	w.k.Tracef(actor, "event %s", e)
}
