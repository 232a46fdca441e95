package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/store"
)

// Live is a live run's target: real servers instead of the simulated store
// and bus, and the wall clock instead of virtual time. Actors still run one
// at a time through the kernel, and the store's hook and the broker record
// the same history, so the same checkers judge it; but the order of events
// is the servers' and the Go scheduler's, not the seed's. A live run is not
// deterministic: its checksum reproduces nothing.
type Live struct {
	// Redis is the server and database the store runs on.
	Redis *redis.Options
	// Flush empties the database (and the broker's streams) first; without
	// it a target holding data is refused.
	Flush bool
	// NewBroker connects the world's bus to the real broker.
	NewBroker func(env kernel.Env, cfg history.BusConfig, flush bool) (LiveBroker, error)
}

// LiveBroker is a real broker as the world uses it; Close stops its
// consumers when the run ends.
type LiveBroker interface {
	bus.Broker
	Close()
}

// NewLiveWorld builds a world on cfg.Live's servers; nothing runs until
// Run. The events it can apply from outside are the replicas' (stop, kill,
// start, pause); the store's and the broker's own failures need the
// simulator.
func NewLiveWorld(cfg Config) (*World, error) {
	if cfg.Live == nil || cfg.Live.Redis == nil || cfg.Live.NewBroker == nil {
		return nil, errors.New("sim: a live world needs Config.Live with a Redis target and a broker")
	}
	for _, e := range cfg.Events {
		switch e.Action {
		case EventStoreLoss, EventBrokerLoss, EventBrokerRestart:
			return nil, fmt.Errorf("event %s: a live run cannot make a real server lose data; run it in the simulator", e)
		}
	}
	return newWorld(cfg)
}

// Live reports whether the world runs against real servers.
func (w *World) Live() bool { return w.cfg.Live != nil }

// connectLive puts the kernel on the wall clock and connects the store and
// the bus to the real servers.
func (w *World) connectLive() error {
	w.k.UseRealTime()
	st, err := store.NewLive(w.env(), w.spec, w.cfg.Live.Redis, w.cfg.Live.Flush)
	if err != nil {
		return err
	}
	b, err := w.cfg.Live.NewBroker(w.env(), w.cfg.Bus, w.cfg.Live.Flush)
	if err != nil {
		st.Close()
		return err
	}
	w.store, w.bus = st, b
	return nil
}

// closeLive stops a live broker's consumers; nothing in a simulation.
func (w *World) closeLive() {
	if b, ok := w.bus.(LiveBroker); ok {
		b.Close()
	}
}

// simBus is the simulated bus, for the broker's own failures, which only a
// simulated world schedules (NewLiveWorld refuses them).
func (w *World) simBus() *bus.Bus { return w.bus.(*bus.Bus) }

// AtOutside schedules, in a live world, something done to a server from
// outside at the given time into the run (a broker restart): do runs off
// the controller, since a server takes its time to come back and the run
// goes on meanwhile, and the history records it as an event, with how it
// ended once it did.
func (w *World) AtOutside(at time.Duration, what string, do func() error) error {
	if !w.Live() {
		return fmt.Errorf("sim: %s from outside needs a live world", what)
	}
	if at <= 0 {
		return fmt.Errorf("sim: %s at %s: want a time into the run", what, at)
	}
	w.k.At(at, func() {
		w.recordOutside(what, fmt.Sprintf("%s at %s", what, at))
		go func() { // determinism-ok: live mode only; the server answers when it is back
			err := do()
			w.k.Post(func() {
				outcome := "done"
				if err != nil {
					outcome = "failed: " + err.Error()
				}
				w.recordOutside(what+"-end", fmt.Sprintf("%s at %s: %s", what, at, outcome))
			})
		}()
	})
	return nil
}

// recordOutside keeps an outside action in the history, as an event.
func (w *World) recordOutside(kind, target string) {
	w.hist.Faults = append(w.hist.Faults, FaultRecord{Step: w.k.Step(), Time: w.k.Now(), Actor: "outside",
		Kind: "Event:" + kind, Target: target})
	w.k.Tracef("outside", "event %s", target)
}
