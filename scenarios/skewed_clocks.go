package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// skewUpTo90s puts every replica's clock 30 to 90 seconds ahead or behind,
// so two replicas may disagree by three minutes.
func skewUpTo90s(o faults.Options) faults.Options {
	return o.Enable(faults.ClockSkew, faults.KindOptions{Probability: 1, DurationMsMin: 30_000, DurationMsMax: 90_000})
}

// skewedGrace is no-pool-mapping-race on replica clocks minutes apart: a
// pick grace window one replica opens and another judges must last its 30 s
// in true time, so every job is still dispatched once its mapping arrives.
// Judged with no clock excuse unless the system declares it measures on its
// replicas' clocks.
var skewedGrace = Scenario{
	Name:   "skewed-grace",
	Source: "clocks",
	Description: "replica clocks up to 90s ahead or behind while a topic's pool mapping arrives inside the grace window: " +
		"a window one replica opens and another judges must not shrink, so every job still succeeds",
	Faults: []faults.Kind{faults.ClockSkew, faults.PoolMappingMissing},
	Options: func(o faults.Options) faults.Options {
		o = skewUpTo90s(o)
		return o.Enable(faults.PoolMappingMissing, faults.KindOptions{Probability: 1, DurationMsMin: 2000, DurationMsMax: 15000})
	},
	// Its point is a grace window measured across replicas: a system
	// without one is not held to one.
	Needs: []Feature{FeaturePickGrace},
	Spec:  checker.Spec{AllSucceed: true, Timely: true},
	Seeds: SeedRange{First: 3500, Count: 8},
}

// skewedTimeouts is reconciler-vs-late-result on replica clocks minutes
// apart: a job stamped DISPATCHED or RUNNING by one replica and timed out by
// another's reconciler must have been in that state for its whole timeout in
// true time.
var skewedTimeouts = Scenario{
	Name:   "skewed-timeouts",
	Source: "clocks",
	Description: "replica clocks up to 90s ahead or behind while results come late past short timeouts and RUNNING " +
		"writes fail: no reconciler may time a job out before its timeout elapsed in true time",
	Faults: []faults.Kind{faults.ClockSkew, faults.WorkerResultLate, faults.RunningWriteFails},
	Options: func(o faults.Options) faults.Options {
		return often(0.3, faults.WorkerResultLate, faults.RunningWriteFails)(skewUpTo90s(o))
	},
	World: World{
		Workload: &sim.Workload{Jobs: 30, StatusReads: 10},
		Workers:  &sim.WorkerProfile{JobDurationMin: time.Second, JobDurationMax: 60 * time.Second},
		Options:  sut.Options{DispatchTimeout: 30 * time.Second, RunningTimeout: 45 * time.Second, ReconcileInterval: 5 * time.Second},
	},
	Spec:  checker.Spec{DispatchTimeout: 30 * time.Second, ReconcileInterval: 5 * time.Second},
	Seeds: SeedRange{First: 7200, Count: 8},
}
