package faults

import (
	"sort"

	"github.com/dispatchsim/dispatchsim/sim"
)

// WorkerHeartbeatsStop: for a window drawn at setup, one worker's heartbeats
// fail to publish (it keeps running jobs): past the engine's 30s worker TTL the
// scheduler believes it gone while its results still arrive.
var WorkerHeartbeatsStop = register(Kind{
	Name:         "WorkerHeartbeatsStop",
	Description:  "one worker's heartbeats stop for a bounded window while it keeps working",
	Timing:       Window,
	Point:        sim.PointPublish,
	Effect:       sim.EffectFailClean,
	Defaults:     KindOptions{Probability: 1, DurationMsMin: 35_000, DurationMsMax: 60_000},
	applies:      func(p *sim.Point) bool { return isWorker(p.Group) && p.Heartbeat },
	windowGroups: workerGroups,
})

func workerGroups(w *sim.World) []string {
	var out []string
	for _, s := range w.Config().WorkerSpecs {
		out = append(out, "worker-"+s.ID)
	}
	sort.Strings(out)
	return out
}
