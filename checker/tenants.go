package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// tenantCapRespected: a capped tenant's job is dispatched only by a
// scheduling pass that could have found the tenant under its cap. The pick
// reads the tenant's count after the pass entered the scheduled state and
// before the dispatch commit, so the dispatch is justified when at some
// moment of that window fewer than the cap of the tenant's jobs were in the
// system's active states (ground truth: the committed states). Replicas
// racing each read the count somewhere in their own window, so a race is
// never reported; a dispatch whose every moment had the tenant at its cap
// is. A dispatch that is not a pass's (a job parked without a new pick) is
// not judged.
func tenantCapRespected(c *run, cm Commit) string {
	sys := c.in.System
	if cm.State.To != sys.Dispatched {
		return ""
	}
	job, ok := c.submitted(cm.Job)
	if !ok || job.Tenant == "" {
		return ""
	}
	limit, capped := sys.TenantMaxActive[job.Tenant]
	if !capped || limit == sut.NoTenantCap {
		return ""
	}
	pass, ok := c.passBefore(cm)
	if !ok {
		return ""
	}
	least, _ := c.tenantActiveRange(job.Tenant, pass.Step, cm.Step)
	if least.n < limit {
		return ""
	}
	return fmt.Sprintf("tenant %q (cap %d) had %d or more jobs %s at every moment from the scheduling pass at step %d (%s) "+
		"to the dispatch; fewest at step %d: %s", job.Tenant, limit, least.n, strings.Join(sys.TenantActive, " or "),
		pass.Step, pass.Time, least.step, orNone(strings.Join(least.jobs, ", ")))
}

// tenantCapReached: a failure naming the tenant's cap needs a tenant with a
// cap whose jobs in the active states reached it at some moment since the
// job was first scheduled. The engine files the cause its picks recorded
// when the pick at the failure cannot read the count, so the count that
// justifies it may be an earlier pass's, not the failing section's.
func tenantCapReached(c *run, cm Commit, job history.SubmittedJob) string {
	sys := c.in.System
	limit, capped := sys.TenantMaxActive[job.Tenant]
	if job.Tenant == "" || !capped {
		return fmt.Sprintf("reason %s for a job of tenant %q, which has no cap (caps: %s)", cm.DLQ.ReasonCode,
			job.Tenant, capsString(sys.TenantMaxActive))
	}
	first, ok := c.firstEntered(cm.Job, sys.Scheduled)
	if limit == sut.NoTenantCap || !ok {
		return ""
	}
	_, most := c.tenantActiveRange(job.Tenant, first.Step, cm.Step)
	if most.n >= limit {
		return ""
	}
	return fmt.Sprintf("reason %s; tenant %q (cap %d) had at most %d jobs %s from the job's first scheduling at step %d (%s) to the failure",
		cm.DLQ.ReasonCode, job.Tenant, limit, most.n, strings.Join(sys.TenantActive, " or "), first.Step, first.Time)
}

// passBefore is the scheduling pass a dispatch commit ends: the job's move
// into the scheduled state right before it, by the same handler (actor and
// lock token), that is not a dispatch's rollback. A dispatch that is itself
// a compound step through the scheduled state is its own pass; its handler
// read the job's previous state before it picked, so the window opens there.
func (c *run) passBefore(cm Commit) (history.StateChange, bool) {
	sys := c.in.System
	states := c.jobStates[cm.Job]
	i := sort.Search(len(states), func(i int) bool { return states[i].Step >= cm.Step })
	if i == 0 || i >= len(states) || states[i].Step != cm.Step {
		return history.StateChange{}, false
	}
	prev := states[i-1]
	if sys.Entered(cm.State.From, cm.State.To, sys.Scheduled) {
		return prev, true
	}
	if !sys.Entered(prev.From, prev.To, sys.Scheduled) || prev.From == sys.Dispatched ||
		prev.Actor != cm.State.Actor || prev.Token != cm.State.Token {
		return history.StateChange{}, false
	}
	return prev, true
}

// tenantCount is how many of a tenant's jobs were in the active states
// after the commits of one step, and which.
type tenantCount struct {
	step uint64
	n    int
	jobs []string
}

// tenantActiveRange is the fewest and the most of the tenant's jobs in the
// active states at any moment from step from (after its commits) to before
// step to.
func (c *run) tenantActiveRange(tenant string, from, to uint64) (least, most tenantCount) {
	counts := c.tenantCounts(tenant)
	// The count in force at from is the last one at or before it.
	i := sort.Search(len(counts), func(i int) bool { return counts[i].step > from })
	start := tenantCount{step: from}
	if i > 0 {
		start = counts[i-1]
	}
	least, most = start, start
	for ; i < len(counts) && counts[i].step < to; i++ {
		if counts[i].n < least.n {
			least = counts[i]
		}
		if counts[i].n > most.n {
			most = counts[i]
		}
	}
	return least, most
}

// tenantCounts is the tenant's count of jobs in the active states after
// each step that changed one of its jobs, in step order (built once).
func (c *run) tenantCounts(tenant string) []tenantCount {
	if counts, ok := c.tenantActive[tenant]; ok {
		return counts
	}
	if c.tenantActive == nil {
		c.tenantActive = map[string][]tenantCount{}
	}
	mine := map[string]bool{}
	for _, s := range c.in.History.Submitted {
		if s.Tenant == tenant {
			mine[s.JobID] = true
		}
	}
	active := map[string]bool{}
	var counts []tenantCount
	states := c.in.History.States
	changed := false
	for i, s := range states {
		if mine[s.JobID] {
			active[s.JobID] = contains(c.in.System.TenantActive, s.To)
			changed = true
		}
		if !changed || i+1 < len(states) && states[i+1].Step == s.Step {
			continue // one command moved several jobs: count after all of them
		}
		changed = false
		var jobs []string
		for id, on := range active {
			if on {
				jobs = append(jobs, id)
			}
		}
		sort.Strings(jobs)
		counts = append(counts, tenantCount{step: s.Step, n: len(jobs), jobs: jobs})
	}
	c.tenantActive[tenant] = counts
	return counts
}

func capsString(caps map[string]int) string {
	if len(caps) == 0 {
		return "none"
	}
	out := make([]string, 0, len(caps))
	for t, n := range caps {
		if n == sut.NoTenantCap {
			out = append(out, t+":none on some replica")
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d", t, n))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
