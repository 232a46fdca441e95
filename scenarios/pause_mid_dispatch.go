package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// pauseMidDispatch pauses replicas past the job lock's TTL while their
// handlers are in the middle of dispatches whose publishes fail ambiguously.
//
// A pause fires at one handler's fenced write and stops the whole replica,
// so its other handlers stop wherever they are: between an ambiguous publish
// and its rollback, say. The stored copy runs, its result lands under
// another replica's lock once the paused one's lease has run out, and the
// paused handler then wakes believing it still holds the lock: its rollback
// must leave the job alone, and its release must not free a lock it lost.
// Nothing here is beyond the engine's recovery, so every job must succeed.
// All jobs arrive in one burst so that many handlers of one replica are in
// flight together when it pauses.
var pauseMidDispatch = Scenario{
	Name:   "pause-mid-dispatch",
	Source: "seed 000, DEF-3",
	Description: "replicas pause past the lock TTL while other handlers of theirs are between an ambiguous publish " +
		"and its rollback; the result of the stored copy lands under another replica's lock, the woken handlers' " +
		"rollbacks and lock releases must change nothing, and every job must succeed",
	Faults: []faults.Kind{faults.PublishFailsAfterStored, faults.ReplicaPauseBeyondLockTTL},
	Options: func(o faults.Options) faults.Options {
		o = often(0.3, faults.PublishFailsAfterStored)(o)
		o = o.Enable(faults.ReplicaPauseBeyondLockTTL, faults.KindOptions{Probability: 0.1, DurationMsMin: 61_000,
			DurationMsMax: 90_000})
		o.Budget.ReplicaPausesMax = 6
		return o
	},
	World: World{
		Replicas: 3,
		Workload: &sim.Workload{Jobs: 40, SubmitWindow: time.Nanosecond, StatusReads: 10},
		// What the engine assumes of its environment, given pauses of up to
		// 90s (six of them, 9 minutes at most on one replica): a pause
		// between the re-publish window check and the publish is publish
		// latency, so the broker's window covers the engine's 90s plus the
		// pause; and a handler paused between its DISPATCHED write and its
		// publish must not be timed out under it, so the dispatch timeout
		// outlasts every pause a replica can take.
		Bus:     &sim.BusConfig{DedupWindow: 5 * time.Minute},
		Options: sut.Options{DispatchTimeout: 15 * time.Minute},
	},
	Spec:  checker.Spec{AllSucceed: true},
	Seeds: SeedRange{First: 5500, Count: 60},
}

// lockRenewals: a short lock TTL and slow publishes make sections outlive
// their first renewals, and renewals fail now and then: a section's lease
// holds while it runs unless its renewals fail, and it gives its lock up only
// when a renewal finds it gone or the system's limit of failures in a row is
// reached; the lock-fenced counter says so.
var lockRenewals = Scenario{
	Name:   "lock-renewals",
	Source: "DEF-3 (renewal and fencing)",
	Description: "a 1.5s lock TTL (renewed every 500ms) while publishes take up to 5s, and 40% of background renewals " +
		"fail before they apply: leases hold while sections run, and sections give their lock up after three failures " +
		"in a row or a renewal that finds it gone, never sooner",
	Faults:  []faults.Kind{faults.LockRenewalFails, faults.PublishLatency},
	Options: often(0.4, faults.LockRenewalFails, faults.PublishLatency),
	World: World{
		Workload: &sim.Workload{Jobs: 20, StatusReads: 10, CancelRate: 0.1},
		Options:  sut.Options{LockTTL: 1500 * time.Millisecond},
	},
	Sometimes: []string{"lock_fenced"},
	Needs:     []Feature{FeatureJobLock},
	Seeds:     SeedRange{First: 5600, Count: 8},
}
