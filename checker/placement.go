package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

// checkPlacement: every job ran on a worker the system could have picked
// for it: one of a pool its topic maps to that offers what it requires, in
// a routing in force between its first scheduling and the run, and not a
// worker whose every heartbeat reports it overloaded.
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
	routings := c.routingsDuring(first.Time, e.Time)
	if len(routings) == 0 {
		return ""
	}
	var seen []string
	for _, r := range routings {
		_, pools := r.Routing.Eligible(job.Topic, job.Requires)
		if contains(pools, w.Pool) {
			return ""
		}
		seen = append(seen, fmt.Sprintf("from %s: pools %s", r.Time, strings.Join(pools, ",")))
	}
	return fmt.Sprintf("topic %q requires %v; eligible %s", job.Topic, job.Requires, strings.Join(seen, "; "))
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
