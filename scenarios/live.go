package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/live"
)

// LiveTarget is where a live run goes: real servers, real time.
type LiveTarget struct {
	Redis *redis.Options
	NATS  *nats.Conn
	// Flush empties the database and deletes the streams first; without it
	// a target holding data is refused.
	Flush bool
	// Duration is how long the workload runs (the fault phase); zero: until
	// the scenario's last submit or event, plus a margin.
	Duration time.Duration
	// Drain keeps the run going this long after every job ended (10s): late
	// redeliveries and results get a chance, though not a whole ack wait.
	Drain time.Duration
	// HealBound is how long every job has to end after the workload; zero:
	// the scenario's own (30m unless it says), since a shorter one turns a
	// slow recovery into a liveness failure.
	HealBound time.Duration
	// AckWait replaces the scenario's ack wait (10m by default) when set:
	// a delivery whose replica was killed mid-handler comes back after it,
	// and a live run cannot wait ten minutes of real time for that.
	AckWait time.Duration
	// BrokerRestarts are when, into the run, RestartBroker is called: the
	// broker restarted from outside while the system runs (the history
	// records each as an event). Latency is applied by the caller, with a
	// proxy in front of a server (live.Proxy).
	BrokerRestarts []time.Duration
	RestartBroker  func() error
}

// liveMargin follows the last submit or event before the heal phase begins.
const liveMargin = 5 * time.Second

// LiveApplicable says why the scenario cannot run live, or nil: a live run
// applies no fault kind (they are injected inside the simulated store, bus
// and workers), and of the scheduled events only the replicas' own (stop,
// kill, start, pause), which an operator applies from outside.
func (s Scenario) LiveApplicable() error {
	if s.Swarm {
		return errors.New("it draws its faults and world from the seed (swarm); a live run applies none")
	}
	if len(s.Faults) > 0 {
		names := make([]string, len(s.Faults))
		for i, k := range s.Faults {
			names[i] = k.Name
		}
		return fmt.Errorf("it declares fault kinds a live run cannot inject (%s)", strings.Join(names, ", "))
	}
	for _, e := range s.World.Events {
		switch e.Action {
		case sim.EventStoreLoss, sim.EventBrokerLoss, sim.EventBrokerRestart:
			return fmt.Errorf("its event %s needs a server to lose data", e)
		}
	}
	return nil
}

// RunLive runs the seed's workload against t's servers on the wall clock and
// judges it with the same checkers. The seed draws the workload, the workers'
// behaviour and the scheduling picks, but the servers and the Go scheduler
// decide the order: the outcome is not reproducible and its checksum
// identifies nothing. An error is a target that could not be used.
func (s Scenario) RunLive(seed uint64, t LiveTarget) (*Outcome, error) {
	if err := s.LiveApplicable(); err != nil {
		return nil, fmt.Errorf("scenario %s cannot run live: %w", s.Name, err)
	}
	if len(t.BrokerRestarts) > 0 && t.RestartBroker == nil {
		return nil, errors.New("broker restarts without a way to restart the broker")
	}
	start := time.Now() // determinism-ok: wall time is a reported figure only
	inj := s.Injector(seed, nil)
	cfg := s.Config(seed, inj)
	cfg.Injector = nil // nothing to inject: see LiveApplicable
	cfg.KeepTrace = true
	cfg = sim.WithDefaults(cfg)
	cfg.FaultPhase = t.Duration
	if cfg.FaultPhase == 0 {
		last := cfg.Workload.SubmitWindow
		for _, e := range cfg.Events {
			last = max(last, e.At)
		}
		for _, at := range t.BrokerRestarts {
			last = max(last, at)
		}
		cfg.FaultPhase = last + liveMargin
	}
	cfg.Workload.SubmitWindow = min(cfg.Workload.SubmitWindow, cfg.FaultPhase)
	cfg.Drain = t.Drain
	if cfg.Drain == 0 {
		cfg.Drain = 10 * time.Second
	}
	if t.AckWait > 0 {
		cfg.Bus.AckWait = t.AckWait
	}
	if t.HealBound > 0 {
		cfg.HealBound = t.HealBound
	}
	nc := t.NATS
	cfg.Live = &sim.Live{Redis: t.Redis, Flush: t.Flush,
		NewBroker: func(env kernel.Env, bc history.BusConfig, flush bool) (sim.LiveBroker, error) {
			return live.New(env, nc, bc, flush)
		}}
	beats := recordHeartbeats(cfg.System)
	if beats != nil {
		cfg.System = beats
	}
	w, err := sim.NewLiveWorld(cfg)
	if err != nil {
		return nil, err
	}
	for _, at := range t.BrokerRestarts {
		if err := w.AtOutside(at, "broker-restart", t.RestartBroker); err != nil {
			return nil, err
		}
	}
	res := w.Run()
	return s.judge(seed, inj, w, res, beats, start), nil
}

// WorkloadOnly is the case as a live run runs it when told to leave fault
// kinds out: its workload and world alone. The kinds, and the goals only
// they could reach (its sometimes-expectations and expected violation), go
// to Dropped, each with why. A case without fault kinds, or a swarm (which
// draws its faults, and cannot run live), is returned as it is.
func (c Case) WorkloadOnly() Case {
	sc := c.Scenario
	if len(sc.Faults) == 0 || sc.Swarm {
		return c
	}
	dropped := append([]string(nil), c.Dropped...)
	kinds := make([]string, len(sc.Faults))
	for i, k := range sc.Faults {
		kinds[i] = k.Name
	}
	dropped = append(dropped, fmt.Sprintf("fault kinds %s: left out of a live run (workload only)", strings.Join(kinds, ", ")))
	for _, b := range c.Sometimes {
		dropped = append(dropped, fmt.Sprintf("sometimes %s: a goal of the fault kinds left out", b))
	}
	if sc.ExpectViolation != "" {
		dropped = append(dropped, fmt.Sprintf("expected violation %s: a goal of the fault kinds left out", sc.ExpectViolation))
	}
	sc.Faults, sc.Options, sc.Sometimes, sc.ExpectViolation = nil, nil, nil, ""
	c.Scenario, c.Sometimes, c.Dropped = sc, nil, dropped
	return c
}
