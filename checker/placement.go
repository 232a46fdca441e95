package checker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// checkPlacement: every job ran on a worker the system could have picked
// for it: one of a pool its topic maps to that offers what it requires, in
// the routing of the replica that picked it as that replica ran between its
// move into the scheduled state and its DISPATCHED write (in a rolling
// deploy the replicas route differently, and a pick answers to its own
// replica's), and not a worker whose every heartbeat reports it overloaded.
func checkPlacement(c *run) {
	if len(c.in.Workers) == 0 {
		return
	}
	workers := map[string]WorkerFact{}
	for _, w := range c.in.Workers {
		workers[w.ID] = w
	}
	seen := map[string]bool{}
	for _, e := range c.in.History.Executions {
		w, known := workers[e.Worker]
		if !known || seen[e.JobID+"/"+e.DispatchID] {
			continue
		}
		seen[e.JobID+"/"+e.DispatchID] = true
		if why := c.misplaced(e, w); why != "" {
			c.violate(LayerInvariants, "placement", e.JobID, e.Step, e.Time, "job %s ran on %s (pool %s): %s",
				e.JobID, w.ID, w.Pool, why)
		}
	}
}

// misplaced says why the system could not have picked w for e's job, or "".
func (c *run) misplaced(e history.Execution, w WorkerFact) string {
	o := c.in.System.Overload
	switch {
	case o.CPU > 0 && w.CPUFloor >= o.CPU:
		return fmt.Sprintf("every heartbeat of the worker reports CPU %.0f or more, overloaded at %.0f", w.CPUFloor, o.CPU)
	case o.GPU > 0 && w.GPUFloor >= o.GPU:
		return fmt.Sprintf("every heartbeat of the worker reports GPU %.0f or more, overloaded at %.0f", w.GPUFloor, o.GPU)
	}
	job, ok := c.submitted(e.JobID)
	first, scheduled := c.firstEntered(e.JobID, c.in.System.Scheduled)
	if !ok || !scheduled {
		return ""
	}
	requires := job.Requires
	if !c.in.System.Requires {
		requires = nil
	}
	picks := c.placementPicks(e)
	if len(picks) == 0 {
		// No DISPATCHED write before the run names who picked: any routing
		// in force from the first scheduling to the run may have.
		picks = []placementPick{{routings: c.routingsDuring(first.Time, e.Time)}}
	}
	var seen []string
	for _, p := range picks {
		if len(p.routings) == 0 {
			return "" // nothing to judge the pick by
		}
		var eligible []string
		for _, r := range p.routings {
			_, pools := r.Routing.Eligible(job.Topic, requires)
			if contains(pools, w.Pool) {
				return ""
			}
			eligible = append(eligible, fmt.Sprintf("from %s: pools %s", r.Time, strings.Join(pools, ",")))
		}
		by := ""
		if p.to.Actor != "" || p.to.Step != 0 {
			picker := p.to.Actor
			if picker == "" {
				picker = "its DISPATCHED writer"
			}
			by = fmt.Sprintf("%s picked it between steps %d and %d, by its routing ", picker, p.from.Step, p.to.Step)
		}
		seen = append(seen, by+"eligible "+strings.Join(eligible, "; "))
	}
	return fmt.Sprintf("topic %q requires %v; %s", job.Topic, requires, strings.Join(seen, "; "))
}

// placementPick is one pick a worker may have come from: a handler's move
// into the scheduled state (from) and its DISPATCHED write (to), and the
// routings its replica ran with in between.
type placementPick struct {
	from, to history.StateChange
	routings []history.RoutingChange
}

// placementPicks are the picks behind execution e: each DISPATCHED write of
// its generation before it (a re-publish that keeps its first worker may
// write again), or failing those the latest DISPATCHED write before it;
// each with the same handler's move into the scheduled state before it (the
// write itself, when it is one compound step).
func (c *run) placementPicks(e history.Execution) []placementPick {
	sys := c.in.System
	states := c.jobStates[e.JobID]
	var writes []int
	latest := -1
	for i, s := range states {
		if s.Step >= e.Step {
			break
		}
		if s.To != sys.Dispatched {
			continue
		}
		latest = i
		if s.Gen == e.Gen {
			writes = append(writes, i)
		}
	}
	if len(writes) == 0 && latest >= 0 {
		writes = []int{latest}
	}
	var picks []placementPick
	for _, at := range writes {
		p := placementPick{from: states[at], to: states[at]}
		for i := at; i >= 0; i-- {
			if states[i].Actor == p.to.Actor && sys.Entered(states[i].From, states[i].To, sys.Scheduled) {
				p.from = states[i]
				break
			}
		}
		p.routings = c.routingsOf(group(p.to.Actor), p.from.Time, p.to.Time)
		picks = append(picks, p)
	}
	return picks
}

// routingsOf lists the routings replica ran with at some time in [from,
// to]: the one in force at from (its own, or the world's) and every change
// that reached it until to.
func (c *run) routingsOf(replica string, from, to time.Duration) []history.RoutingChange {
	var out []history.RoutingChange
	for _, r := range c.in.History.Routing {
		if r.Time > to {
			break
		}
		if r.Replica != "" && r.Replica != replica {
			continue
		}
		if r.Time <= from {
			out = out[:0] // replaced by this one before the pick began
		}
		out = append(out, r)
	}
	return out
}

// routingsDuring lists the routings in force at some time in [from, to].
func (c *run) routingsDuring(from, to time.Duration) []history.RoutingChange {
	var out []history.RoutingChange
	for i, r := range c.in.History.Routing {
		next := i+1 < len(c.in.History.Routing)
		if r.Time > to || next && c.in.History.Routing[i+1].Time <= from {
			continue
		}
		out = append(out, r)
	}
	return out
}

// checkLeastLoaded: every dispatch went to the worker the system's
// least-loaded rule picks from what its replica knew when it picked: the
// heartbeats that replica handled since it last started, and the dispatches
// it made since each worker's last heartbeat. The pick falls between the
// handler's move into the scheduled state and its DISPATCHED write; any
// view in that window justifies the choice.
func checkLeastLoaded(c *run) {
	sys := c.in.System
	if !sys.LeastLoaded || len(c.in.Heartbeats) == 0 {
		return
	}
	bySubject := map[string]string{}
	for _, w := range c.in.Workers {
		bySubject[w.Subject] = w.ID
	}
	for _, p := range c.in.History.Publishes {
		chosen, known := bySubject[p.Subject]
		if !p.Dispatch || !known {
			continue
		}
		from, to, ok := c.pickWindow(p)
		job, submitted := c.submitted(p.JobID)
		if !ok || !submitted {
			continue
		}
		views := c.replicaViews(group(p.Actor), from.Step, to.Step)
		keep := ""
		if sys.RepublishKeepsWorker && c.republished(p) {
			keep = chosen
		}
		picks := map[string]bool{}
		var seen []string
		for _, v := range views {
			for _, t := range []time.Duration{from.Time, to.Time} {
				_, pools := c.in.History.RoutingOf(group(p.Actor), t).Eligible(job.Topic, job.Requires)
				best, why := v.pick(sys, pools, t, keep)
				picks[best] = true
				seen = append(seen, why)
			}
		}
		if !picks[chosen] {
			c.violate(LayerInvariants, "placement", p.JobID, p.Step, p.Time,
				"%s sent job %s to %s, which its least-loaded rule picks in no view it had between steps %d and %d: %s",
				p.Actor, p.JobID, chosen, from.Step, to.Step, strings.Join(dedupe(seen), "; "))
		}
	}
}

// republished reports whether p repeats an earlier publish of its message
// id to its subject: a re-publish the rule keeps on the first copy's worker.
func (c *run) republished(p history.PublishRecord) bool {
	for _, q := range c.in.History.Publishes {
		if q.Step >= p.Step {
			return false
		}
		if q.Dispatch && q.JobID == p.JobID && q.MsgID == p.MsgID && q.Subject == p.Subject {
			return true
		}
	}
	return false
}

// pickWindow is the publishing handler's move into the scheduled state and
// its DISPATCHED write that the publish followed.
func (c *run) pickWindow(p history.PublishRecord) (from, to history.StateChange, ok bool) {
	sys := c.in.System
	states := c.jobStates[p.JobID]
	i := len(states) - 1
	for ; i >= 0 && (states[i].Step > p.Step || states[i].Actor != p.Actor || states[i].To != sys.Dispatched); i-- {
	}
	if i < 0 {
		return from, to, false
	}
	to = states[i]
	for i--; i >= 0; i-- {
		if states[i].Actor == p.Actor && sys.Entered(states[i].From, states[i].To, sys.Scheduled) {
			return states[i], to, true
		}
	}
	return from, to, false
}

// workerView is one worker as a replica's registry holds it.
type workerView struct {
	HeartbeatFact
	seen time.Duration
}

// registryView is a replica's registry at one step.
type registryView map[string]workerView

// replicaViews are the registries replica held from step from to step to:
// the one at from, and one after each change before to. A replica's
// registry starts empty when it restarts after a crash (a delivery held back
// meanwhile goes to the restarted process, never to the one that is gone).
func (c *run) replicaViews(replica string, from, to uint64) []registryView {
	return c.viewsSince(replica, c.lastCrash(replica, to), from, to)
}

// viewsSince are replica's registries from step from to step to, counting
// only what it was told after step since (its last start).
func (c *run) viewsSince(replica string, since, from, to uint64) []registryView {
	reg := registryView{}
	snapshot := func() registryView {
		out := make(registryView, len(reg))
		for id, w := range reg {
			out[id] = w
		}
		return out
	}
	var views []registryView
	changes := c.registryChanges(replica, since, to)
	for _, ch := range changes {
		if ch.step > from && len(views) == 0 {
			views = append(views, snapshot())
		}
		ch.apply(reg)
		if ch.step > from {
			views = append(views, snapshot())
		}
	}
	if len(views) == 0 {
		views = append(views, snapshot())
	}
	return views
}

// registryChange is a heartbeat a replica handled, or a dispatch it made.
type registryChange struct {
	step  uint64
	apply func(registryView)
}

// registryChanges lists replica's registry changes in (since, to), in step
// order: each handled heartbeat replaces its worker's entry, and each
// dispatch the broker took (the publish returned no error) counts one more
// running job on a worker the registry holds.
func (c *run) registryChanges(replica string, since, to uint64) []registryChange {
	var out []registryChange
	hbs, pubs := c.in.Heartbeats, c.in.History.Publishes
	if c.changesInStepOrder() {
		// Only (since, to) counts: cut both lists to it rather than walk
		// every heartbeat and publish for every dispatch.
		hbs = hbs[sort.Search(len(hbs), func(i int) bool { return hbs[i].Step > since }):]
		hbs = hbs[:sort.Search(len(hbs), func(i int) bool { return hbs[i].Step >= to })]
		pubs = pubs[sort.Search(len(pubs), func(i int) bool { return pubs[i].Step > since }):]
		pubs = pubs[:sort.Search(len(pubs), func(i int) bool { return pubs[i].Step >= to })]
	}
	workers := map[string]string{}
	for _, w := range c.in.Workers {
		workers[w.Subject] = w.ID
	}
	for len(hbs) > 0 || len(pubs) > 0 {
		if len(pubs) == 0 || len(hbs) > 0 && hbs[0].Step < pubs[0].Step {
			hb := hbs[0]
			hbs = hbs[1:]
			if hb.Replica == replica && hb.Step > since && hb.Step < to && hb.Worker != "" {
				out = append(out, registryChange{step: hb.Step, apply: func(r registryView) {
					r[hb.Worker] = workerView{HeartbeatFact: hb, seen: hb.Time}
				}})
			}
			continue
		}
		p := pubs[0]
		pubs = pubs[1:]
		id, known := workers[p.Subject]
		ok := p.Outcome == history.PublishStored || p.Outcome == history.PublishDeduplicated
		if p.Dispatch && known && ok && group(p.Actor) == replica && p.Step > since && p.Step < to {
			out = append(out, registryChange{step: p.Step, apply: func(r registryView) {
				if w, held := r[id]; held {
					w.Active++
					r[id] = w
				}
			}})
		}
	}
	return out
}

// changesInStepOrder reports whether the heartbeats and the publishes are
// each in step order, as a run records them; checked once.
func (c *run) changesInStepOrder() bool {
	if c.stepOrdered == 0 {
		c.stepOrdered = 1
		hbs, pubs := c.in.Heartbeats, c.in.History.Publishes
		for i := 1; i < len(hbs); i++ {
			if hbs[i].Step < hbs[i-1].Step {
				c.stepOrdered = 2
			}
		}
		for i := 1; i < len(pubs); i++ {
			if pubs[i].Step < pubs[i-1].Step {
				c.stepOrdered = 2
			}
		}
	}
	return c.stepOrdered == 1
}

// pick is the least-loaded rule over the view's live workers of pools at
// time t: the chosen worker ("" none) and a line saying why.
// pick is the worker the least-loaded rule picks from v at t: keep, if it is
// live and not overloaded (a re-publish's first worker), else the lowest score.
func (v registryView) pick(sys sut.Spec, pools []string, t time.Duration, keep string) (string, string) {
	var ids []string
	for id, w := range v {
		if contains(pools, w.Pool) && t-w.seen <= sys.WorkerTTL {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	best, score := "", 0.0
	var parts []string
	for _, id := range ids {
		w := v[id]
		s := float64(w.Active) + w.CPU/100 + w.GPU/100
		o := sys.Overload
		if w.MaxParallel > 0 && float64(w.Active)/float64(w.MaxParallel) >= o.LoadRatio || w.CPU >= o.CPU || w.GPU >= o.GPU {
			parts = append(parts, id+" overloaded")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", id, s))
		if id == keep {
			return keep, fmt.Sprintf("at %s: %s kept for the re-publish", t, keep)
		}
		if best == "" || s < score {
			best, score = id, s
		}
	}
	return best, fmt.Sprintf("at %s: %s -> %s", t, strings.Join(parts, ", "), orNone(best))
}

// lastCrash is the step of replica's last crash, or start after a stop,
// before step (0: none): its registry starts empty after it. (A stopped
// replica's draining handlers still run on the old registry until then.)
func (c *run) lastCrash(replica string, step uint64) uint64 {
	var last uint64
	for _, f := range c.in.History.Faults {
		restart := f.Effect == history.EffectCrash || f.Effect == history.EffectCrashAfterApply || f.Kind == "Event:start"
		if f.Step < step && restart && group(f.Actor) == replica {
			last = f.Step
		}
	}
	return last
}

// group is the process an actor runs in ("replica-1" of "replica-1/x").
func group(actor string) string {
	g, _, _ := strings.Cut(actor, "/")
	return g
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
