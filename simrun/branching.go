package simrun

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// Exploration that branches where it matters (moonpool's fork at discovery):
// every run reports its moments, the first step at which each
// checker-relevant event happened; the campaign keeps a coverage map of them,
// and when a seed's run reaches one that is still rare (few seeds reached
// it), N branches continue that seed from that step with fresh randomness.
// A bug that needs two rare events in a row then costs about 1/p1 seeds and
// 1/p2 branches, not 1/(p1·p2) seeds. A moment is branched from again by
// later seeds while it stays rare, up to a few times: the second event is
// drawn afresh after each, and the first seed to reach a moment rarely
// reaches it in the state the second event needs.

// moment is a step where something happened that the campaign counts.
type moment struct {
	Key  string `json:"key"`
	Step uint64 `json:"step"`
	// Job is the job the moment's event touched, if any: a branch from
	// the moment favours its faults (sim.Branch.Focus).
	Job string `json:"job,omitempty"`
}

// momentsOf lists a run's moments, each key at its first step: each fault
// that fired, keyed by its kind, its point and the committed state of the
// job it hit (a (state, fault) combination), and each kind of state
// transition a job made.
func momentsOf(o *scenarios.Outcome) []moment {
	first := map[string]event{}
	eachEvent(o, func(e event) {
		if f, seen := first[e.key]; !seen || e.step < f.step {
			first[e.key] = e
		}
	})
	out := make([]moment, 0, len(first))
	for k, e := range first {
		out = append(out, moment{Key: k, Step: e.step, Job: e.job})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Step != out[j].Step {
			return out[i].Step < out[j].Step
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// event is one fault or state transition of a run, keyed as moments are;
// job is the job it touched ("" none).
type event struct {
	key  string
	step uint64
	time time.Duration
	job  string
}

// eachEvent calls fn for every event of the run that a moment's key names:
// each fault that fired and each state transition, in history order.
func eachEvent(o *scenarios.Outcome, fn func(e event)) {
	h := o.Run.History
	var ids []string
	for _, j := range h.Submitted {
		ids = append(ids, j.JobID)
	}
	// Longest first: "job-12" is not "job-1".
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	type publishKey struct {
		step  uint64
		actor string
	}
	publishedBy := map[publishKey]string{}
	for _, p := range h.Publishes {
		if p.JobID != "" {
			publishedBy[publishKey{p.Step, p.Actor}] = p.JobID
		}
	}
	for _, f := range h.Faults {
		state, job := "-", ""
		for _, id := range ids {
			if id != "" && strings.Contains(f.Target, id) {
				state, job = stateAt(h.States, id, f.Step), id
				break
			}
		}
		if job == "" && f.Point == history.PointPublish {
			// A publish fault's target is the subject; the publish at its
			// step by its actor names the job. The key stays as it was:
			// explore's coverage map counts it.
			job = publishedBy[publishKey{f.Step, f.Actor}]
		}
		point := string(f.Point)
		if point == "" {
			point = "a set time" // a window or an operator's event
		}
		fn(event{fmt.Sprintf("fault %s at %s in %s", f.Kind, point, state), f.Step, f.Time, job})
	}
	for _, s := range h.States {
		if s.From != "" && s.From != s.To {
			fn(event{"transition " + s.From + "->" + s.To, s.Step, s.Time, s.JobID})
		}
	}
}

// stateAt is the job's committed state at step ("new" before its first).
func stateAt(states []sim.StateChange, job string, step uint64) string {
	state := "new"
	for _, s := range states {
		if s.Step > step {
			break
		}
		if s.JobID == job {
			state = s.To
		}
	}
	return state
}

// campaign is an exploration's coverage map and the branches it still owes.
type campaign struct {
	perDiscovery int // branches spawned per discovery: its energy
	perRun       int // discoveries branched per seed at most
	warmup       int // seeds that only fill the map before anything branches
	// A moment is rare while at most rareShare of the seeds so far reached
	// it (at least one); a moment is branched from by perKey seeds at most.
	rareShare    float64
	perKey       int
	coverage     map[string]int // runs, branches too, that reached each moment
	seedsReached map[string]int // seeds that did
	branchedFrom map[string]int // seeds branched from each moment
	seeds        int
	held         []heldRun // the warm-up's runs, judged when it ends
	pending      []task
	discoveries  int
}

type heldRun struct {
	t  task
	ms []moment
}

// Energy bounds. A seed branches from at most three moments (its earliest
// rare ones), so one that reaches much that is new does not take the budget;
// a moment is rare while at most 2% of the seeds reached it, and four seeds
// at most branch from it.
// The first 20 seeds only fill the coverage map: at the start everything is
// new, and a moment is rare only against a base; what one warm-up seed
// alone reached is then a discovery of that seed.
const (
	defaultDiscoveriesPerRun = 3
	defaultWarmupSeeds       = 20
	defaultRareShare         = 0.02
	defaultBranchingsPerKey  = 4
)

func newCampaign(perDiscovery int) *campaign {
	return &campaign{perDiscovery: perDiscovery, perRun: defaultDiscoveriesPerRun, warmup: defaultWarmupSeeds,
		rareShare: defaultRareShare, perKey: defaultBranchingsPerKey,
		coverage: map[string]int{}, seedsReached: map[string]int{}, branchedFrom: map[string]int{}}
}

// observe counts a run's moments. For a seed's own run, each moment still
// rare is a discovery: up to perRun of them, earliest first, each gets
// perDiscovery branches from its step. Branches count their moments but do
// not branch again: a key is one (seed, step, branch).
func (c *campaign) observe(w io.Writer, t task, ms []moment) {
	for _, m := range ms {
		c.coverage[m.Key]++
	}
	if t.Branch != "" {
		return
	}
	for _, m := range ms {
		c.seedsReached[m.Key]++
	}
	c.seeds++
	switch {
	case c.seeds < c.warmup:
		c.held = append(c.held, heldRun{t, ms})
		return
	case c.seeds == c.warmup:
		for _, h := range append(c.held, heldRun{t, ms}) {
			c.discover(w, h.t, h.ms)
		}
		c.held = nil
		return
	}
	c.discover(w, t, ms)
}

// discover spawns the branches of the run's moments that are still rare.
func (c *campaign) discover(w io.Writer, t task, ms []moment) {
	found := 0
	rare := max(1, int(c.rareShare*float64(c.seeds)))
	for _, m := range ms {
		if c.seedsReached[m.Key] > rare || c.branchedFrom[m.Key] >= c.perKey {
			continue
		}
		if found == c.perRun {
			break
		}
		found++
		c.discoveries++
		c.branchedFrom[m.Key]++
		fmt.Fprintf(w, "explore: seed %d reached %q (seed %d of %d to reach it), at step %d: %d branches\n", t.Seed,
			m.Key, c.seedsReached[m.Key], c.seeds, m.Step, c.perDiscovery)
		for n := 1; n <= c.perDiscovery; n++ {
			b := t
			b.Branch = sim.Branch{Step: m.Step, N: uint64(n), Focus: m.Job}.String()
			c.pending = append(c.pending, b)
		}
	}
}

// round picks the next tasks: owed branches first, up to three quarters of
// size, then fresh seeds from next.
func (c *campaign) round(size int, fresh []task) (branches, seeds []task) {
	take := min(len(c.pending), size*3/4)
	if len(fresh) == 0 {
		take = min(len(c.pending), size)
	}
	branches, c.pending = c.pending[:take:take], c.pending[take:]
	seeds = fresh[:min(len(fresh), size-take)]
	return branches, seeds
}

// runBranching runs the seeds of tasks as runSeeds does, and the branches
// their discoveries spawn, in rounds: each round's results are taken in task
// order, so which branches run depends on the seeds, not on which worker was
// quicker. It returns the seeds' runs, and every result, the branches' too,
// in the order the campaign took them.
func runBranching(intr *interrupts, workers []worker, tasks []task, f runFlags, c *campaign, prog *progress,
	log io.Writer) (*seedRuns, []reports.SeedResult) {
	rs := &seedRuns{tasks: tasks, done: make([]*seedRun, len(tasks)), told: map[int]string{}}
	ctx, cancel := context.WithTimeout(intr.ctx, f.budget) // determinism-ok: a wall-clock budget on the CLI
	defer cancel()
	var all []reports.SeedResult
	next := 0
	fired := ""
	for ctx.Err() == nil && fired == "" {
		branches, seeds := c.round(4*len(workers), tasks[next:])
		if len(branches)+len(seeds) == 0 {
			break
		}
		round := append(branches, seeds...)
		got := make([]*outcome, len(round))
		for i := range round {
			round[i].Index, round[i].Moments = i, true
		}
		runPool(ctx, intr.abandon, workers, round, func(o outcome) { got[o.task.Index] = &o })
		for i, o := range got {
			if o == nil {
				continue
			}
			if o.err != nil {
				rs.errs = append(rs.errs, o.err)
				prog.fail(o.err.Error())
			}
			if o.run.Result.Scenario == "" {
				continue
			}
			if !passed(o.run.Result) {
				prog.fail(oneLineFailure(o.run.Result) + branchSuffix(o.run.Result))
			}
			if fired == "" {
				fired = firedOneOf(o.run.Result, f.until)
			}
			c.observe(log, round[i], o.run.Moments)
			o.run.Moments = nil
			all = append(all, o.run.Result)
			if i < len(branches) {
				continue
			}
			run := o.run
			rs.done[next+i-len(branches)] = &run
			prog.done(passed(run.Result))
		}
		next += len(seeds)
	}
	prog.finish()
	switch {
	case rs.notRun() == 0 || intr.interrupted():
	case fired != "":
		rs.stopped = untilStop(fired)
	default:
		rs.stopped = budgetStop(f.budget)
	}
	return rs, all
}

// branchSuffix names a result's branch in a one-line failure.
func branchSuffix(r reports.SeedResult) string {
	if r.Branch == "" {
		return ""
	}
	return " (branch " + r.Branch + ")"
}
