package checker

import (
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/model"
	"github.com/dispatchsim/dispatchsim/sim"
)

type dispatchKey struct {
	job string
	gen int
}

func isDispatch(p sim.PublishRecord) bool { return strings.HasPrefix(p.Subject, "worker.") }

// checkExactlyOnce: per job, each dispatch generation is stored by the broker at
// most once and executed under at most one dispatch id; a generation beyond the
// first is legitimate only after as many RETRYING commits.
func checkExactlyOnce(c *run) {
	stored := map[dispatchKey][]sim.PublishRecord{}
	var keys []dispatchKey
	for _, p := range c.in.History.Publishes {
		if !isDispatch(p) || !p.Stored() || p.JobID == "" {
			continue
		}
		k := dispatchKey{p.JobID, p.Gen}
		if _, ok := stored[k]; !ok {
			keys = append(keys, k)
		}
		stored[k] = append(stored[k], p)
	}
	sortKeys(keys)
	for _, k := range keys {
		ps := stored[k]
		if len(ps) > 1 {
			steps := make([]uint64, len(ps))
			for i, p := range ps {
				steps[i] = p.Step
			}
			c.violate(LayerInvariants, "exactly_once_publish", k.job, ps[1].Step, ps[1].Time,
				"job %s published %d times for dispatch %d (steps %v)", k.job, len(ps), k.gen, steps)
		}
		if retries := c.countTo(k.job, engine.StateRetrying); k.gen > retries {
			c.violate(LayerInvariants, "exactly_once_publish", k.job, ps[0].Step, ps[0].Time,
				"job %s dispatched as generation %d after only %d RETRYING commits", k.job, k.gen, retries)
		}
	}

	ids := map[dispatchKey]map[string]sim.Execution{}
	var execKeys []dispatchKey
	for _, e := range c.in.History.Executions {
		k := dispatchKey{e.JobID, e.Gen}
		if _, ok := ids[k]; !ok {
			ids[k] = map[string]sim.Execution{}
			execKeys = append(execKeys, k)
		}
		if _, dup := ids[k][e.DispatchID]; dup {
			c.out.Figures.DuplicateExecutions++
			continue
		}
		ids[k][e.DispatchID] = e
		if len(ids[k]) == 2 {
			c.violate(LayerInvariants, "exactly_once_execution", k.job, e.Step, e.Time,
				"job %s executed twice for dispatch %d under different dispatch ids", k.job, k.gen)
		}
	}
}

func sortKeys(keys []dispatchKey) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].job != keys[j].job {
			return keys[i].job < keys[j].job
		}
		return keys[i].gen < keys[j].gen
	})
}

// countTo counts the job's commits into state.
func (c *run) countTo(job string, state engine.JobState) int {
	n := 0
	for _, s := range c.jobStates[job] {
		if s.To == state {
			n++
		}
	}
	return n
}

// checkNoResurrection: once a job is terminal its state never changes again,
// and every committed transition is an edge of the specification's graph.
func checkNoResurrection(c *run) {
	for _, id := range c.jobIDs {
		var terminal *sim.StateChange
		for i, s := range c.jobStates[id] {
			if !model.TransitionAllowed(string(s.From), string(s.To)) {
				c.violate(LayerInvariants, "transition_graph", id, s.Step, s.Time,
					"job %s moved %s -> %s, which the transition graph forbids", id, stateOrNone(s.From), s.To)
			}
			if terminal != nil {
				c.violate(LayerInvariants, "no_resurrection", id, s.Step, s.Time,
					"job %s left terminal %s (step %d) for %s at step %d", id, terminal.To, terminal.Step, s.To, s.Step)
				break
			}
			if s.To.Terminal() {
				terminal = &c.jobStates[id][i]
			}
		}
	}
}

func stateOrNone(s engine.JobState) string {
	if s == "" {
		return "<none>"
	}
	return string(s)
}
