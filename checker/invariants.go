package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

type dispatchKey struct {
	job string
	gen int
}

// DedupLayer names the layer that failed to absorb a repeated dispatch, so an
// exactly-once finding says where de-duplication broke down.
type DedupLayer string

// The layers an exactly-once finding can name.
const (
	// DedupEngineOrdering: the engine dispatched again while the first copy was
	// live, and nothing downstream could absorb it (a new message id for one
	// generation, or a broker without de-duplication).
	DedupEngineOrdering DedupLayer = "engine ordering"
	// DedupBrokerWindow: the same message id was published again after the
	// broker's de-duplication window had passed, in true time.
	DedupBrokerWindow DedupLayer = "broker window exceeded"
	// DedupWorker: a worker executed one stored message twice.
	DedupWorker DedupLayer = "worker"
	// DedupBroker: the broker stored a message id again inside its own window:
	// the environment broke its contract, the engine did not.
	DedupBroker DedupLayer = "broker"
)

// defaultBrokerDedupWindow is the simulated broker's window when its config
// does not say (history.BusConfig's default).
const defaultBrokerDedupWindow = 2 * time.Minute

// checkExactlyOnce: per job, each dispatch generation is stored by the broker at
// most once and executed at most once; a generation beyond the first is
// legitimate only after as many RETRYING commits. Each finding names the layer
// that failed to de-duplicate.
func checkExactlyOnce(c *run) {
	stored, keys := c.storedDispatches()
	uncovered := map[dispatchKey]bool{}
	for _, k := range keys {
		ps := stored[k]
		if len(ps) > 1 && c.uncovered(ps) {
			c.out.Figures.UncoveredRepublishes++
			uncovered[k] = true
		} else if len(ps) > 1 {
			steps := make([]uint64, len(ps))
			for i, p := range ps {
				steps[i] = p.Step
			}
			layer, why := c.repeatLayer(ps[:1], ps[1])
			c.violateDedup(layer, "exactly_once_publish", k.job, ps[1].Step, ps[1].Time,
				"job %s published %d times for dispatch %d (steps %v); not de-duplicated by %s: %s",
				k.job, len(ps), k.gen, steps, layer, why)
		}
		if retries := c.countTo(k.job, c.in.System.Retrying); k.gen > retries {
			c.violateDedup(DedupEngineOrdering, "exactly_once_publish", k.job, ps[0].Step, ps[0].Time,
				"job %s dispatched as generation %d after only %d RETRYING commits; not de-duplicated by %s: a new message id for a dispatch nothing re-opened",
				k.job, k.gen, retries, DedupEngineOrdering)
		}
	}

	ids := map[dispatchKey]map[string]history.Execution{}
	var execKeys []dispatchKey
	for _, e := range c.in.History.Executions {
		k := dispatchKey{e.JobID, e.Gen}
		if _, ok := ids[k]; !ok {
			ids[k] = map[string]history.Execution{}
			execKeys = append(execKeys, k)
		}
		if first, dup := ids[k][e.DispatchID]; dup {
			// One stored message ran twice: only the worker could have dropped
			// it. A per-process consumer forgets across a restart, which the
			// history does not record, so this is a finding only where workers
			// promise to remember; otherwise it is a measured figure.
			c.out.Figures.DuplicateExecutions++
			if c.spec.WorkersDedupDurably {
				c.violateDedup(DedupWorker, "exactly_once_execution", k.job, e.Step, e.Time,
					"job %s executed twice for dispatch %d from one stored message (dispatch id %s, steps %d and %d); not de-duplicated by %s: %s ran it again",
					k.job, k.gen, e.DispatchID, first.Step, e.Step, DedupWorker, e.Worker)
			}
			continue
		}
		ids[k][e.DispatchID] = e
		if len(ids[k]) == 2 && !uncovered[k] {
			layer, why := DedupEngineOrdering, "two stored copies are not in the history"
			if ps := stored[k]; len(ps) > 1 {
				layer, why = c.repeatLayer(ps[:1], ps[1])
			}
			c.violateDedup(layer, "exactly_once_execution", k.job, e.Step, e.Time,
				"job %s executed twice for dispatch %d under different dispatch ids; not de-duplicated by %s: %s",
				k.job, k.gen, layer, why)
		}
	}
}

// storedDispatches are the dispatches the broker stored, by job and
// generation, with their keys in order.
func (c *run) storedDispatches() (map[dispatchKey][]history.PublishRecord, []dispatchKey) {
	stored := map[dispatchKey][]history.PublishRecord{}
	var keys []dispatchKey
	for _, p := range c.in.History.Publishes {
		if !p.Dispatch || !p.Stored() || p.JobID == "" {
			continue
		}
		k := dispatchKey{p.JobID, p.Gen}
		if _, ok := stored[k]; !ok {
			keys = append(keys, k)
		}
		stored[k] = append(stored[k], p)
	}
	sortKeys(keys)
	return stored, keys
}

// uncovered reports whether every repeat of a dispatch follows an ambiguous
// publish of the copy before it in a world where nothing de-duplicates it:
// the fault made the first outcome unknown, and only that repeat is excused.
func (c *run) uncovered(ps []history.PublishRecord) bool {
	if !c.spec.ExactlyOnceUncovered {
		return false
	}
	if dedup, _, known := c.brokerDedup(); dedup || !known {
		return false
	}
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Outcome != history.PublishFailedStored || ps[i].MsgID != ps[i-1].MsgID {
			return false
		}
	}
	return true
}

// repeatLayer attributes the stored copy p of a dispatch that the stored
// copies before it preceded. The broker measures its window from the last
// copy of the same message id it stored, in true time.
func (c *run) repeatLayer(before []history.PublishRecord, p history.PublishRecord) (DedupLayer, string) {
	var prev *history.PublishRecord
	for i := range before {
		if before[i].MsgID == p.MsgID {
			prev = &before[i]
		}
	}
	if prev == nil {
		return DedupEngineOrdering, fmt.Sprintf("message id %s was stored, then a second id %s for the same dispatch",
			before[len(before)-1].MsgID, p.MsgID)
	}
	gap := p.Time - prev.Time
	dedup, window, known := c.brokerDedup()
	first, again := c.streamOf(prev.Subject), c.streamOf(p.Subject)
	switch {
	case first != again:
		return DedupEngineOrdering, fmt.Sprintf("%s published again %s after the stored copy, to %s on stream %s: the copy on stream %s (%s) is in another duplicate window",
			p.MsgID, gap, p.Subject, again, first, prev.Subject)
	case !dedup:
		return DedupEngineOrdering, fmt.Sprintf("%s published again %s after the stored copy, with broker de-duplication off", p.MsgID, gap)
	case gap >= window:
		return DedupBrokerWindow, fmt.Sprintf("%s published again %s after the stored copy, past the broker's %s window", p.MsgID, gap, window)
	case known:
		return DedupBroker, fmt.Sprintf("%s stored again %s after the stored copy, inside the broker's %s window", p.MsgID, gap, window)
	default:
		// Without the broker's config: a copy stored inside the default window
		// means the broker was not de-duplicating.
		return DedupEngineOrdering, fmt.Sprintf("%s published again %s after the stored copy, which a de-duplicating broker would have dropped", p.MsgID, gap)
	}
}

// streamOf names the broker stream that held subject in the world's
// deployment ("" when the input does not carry the broker's config).
func (c *run) streamOf(subject string) string {
	if c.in.Bus == nil {
		return ""
	}
	return c.in.Bus.StreamOf(subject)
}

// brokerDedup is the broker's de-duplication as the world ran it; known is
// false when the input does not carry the broker's config, and the default
// window is assumed.
func (c *run) brokerDedup() (on bool, window time.Duration, known bool) {
	if c.in.Bus == nil {
		return true, defaultBrokerDedupWindow, false
	}
	window = c.in.Bus.DedupWindow
	if window == 0 {
		window = defaultBrokerDedupWindow
	}
	return c.in.Bus.Dedup, window, true
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
func (c *run) countTo(job string, state string) int {
	n := 0
	for _, s := range c.jobStates[job] {
		if c.in.System.Entered(s.From, s.To, state) {
			n++
		}
	}
	return n
}

// checkNoResurrection: once a job is terminal its state never changes again,
// and every committed transition is an edge of the specification's graph.
func checkNoResurrection(c *run) {
	for _, id := range c.jobIDs {
		var terminal *history.StateChange
		for i, s := range c.jobStates[id] {
			if !c.in.System.Allowed(s.From, s.To) {
				c.violate(LayerInvariants, "transition_graph", id, s.Step, s.Time,
					"job %s moved %s -> %s, which the transition graph forbids", id, history.StateOrNone(s.From), s.To)
			}
			if terminal != nil {
				c.violate(LayerInvariants, "no_resurrection", id, s.Step, s.Time,
					"job %s left terminal %s (step %d) for %s at step %d", id, terminal.To, terminal.Step, s.To, s.Step)
				break
			}
			if c.in.System.IsTerminal(s.To) {
				terminal = &c.jobStates[id][i]
			}
		}
	}
}
