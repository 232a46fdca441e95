package checker

import (
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sim"
)

// checkAccounting: attempts follow the rule, every failed or timed-out job has a
// DLQ entry naming its root cause, no accepted job is lost, and the engine's
// counters agree with what the broker saw.
func checkAccounting(c *run) {
	end := c.in.History.End
	for _, id := range c.jobIDs {
		h := c.in.Final[id]
		changes := c.jobStates[id]
		last := changes[len(changes)-1]
		if h == nil {
			continue
		}
		// Every scheduling pass, the publish rollback included, counts an attempt.
		if got, want := atoi(h["attempts"]), c.countTo(id, engine.StateScheduled); got != want {
			c.violate(LayerInvariants, "attempts", id, last.Step, last.Time,
				"job %s has attempts=%d but entered SCHEDULED %d times", id, got, want)
		}
		st := engine.JobState(h["state"])
		if st != engine.StateFailed && st != engine.StateTimeout {
			continue
		}
		entry, ok := c.in.DLQ[id]
		switch {
		case !ok:
			c.violate(LayerInvariants, "dlq_entry", id, last.Step, last.Time, "job %s ended %s without a DLQ entry", id, st)
		case entry.Status != st:
			c.violate(LayerInvariants, "dlq_entry", id, last.Step, last.Time,
				"job %s ended %s but its DLQ entry says %s", id, st, entry.Status)
		case entry.LastState != last.From:
			c.violate(LayerInvariants, "dlq_entry", id, last.Step, last.Time,
				"job %s DLQ last_state %s, but it left %s", id, entry.LastState, last.From)
		case entry.ReasonCode == engine.ReasonMaxSchedulingRetries && h["last_error_code"] != "":
			c.violate(LayerInvariants, "dlq_root_cause", id, last.Step, last.Time,
				"job %s DLQ reason max_scheduling_retries hides its cause %s", id, h["last_error_code"])
		}
	}
	for _, s := range c.in.History.Submitted {
		if s.Accepted && c.in.Final[s.JobID] == nil {
			c.violate(LayerInvariants, "no_job_lost", s.JobID, 0, end,
				"job %s was accepted by the broker at %s but the store never held it", s.JobID, s.At)
		}
	}
	checkMetrics(c)
}

// checkMetrics compares the engine's counters, summed over every replica
// incarnation, with the broker's ground truth. The counters are incremented
// right after the publish returns, with no yield point in between, so they
// must match exactly.
func checkMetrics(c *run) {
	if len(c.in.Metrics) == 0 {
		return
	}
	var failed, ok int
	for _, p := range c.in.History.Publishes {
		if !isDispatch(p) {
			continue
		}
		switch p.Outcome {
		case sim.PublishFailedClean, sim.PublishFailedStored:
			failed++
		case sim.PublishStored, sim.PublishDeduplicated:
			ok++
		}
	}
	end := c.in.History.End
	if got := c.counter("scheduler_dispatch_rollback_total"); got != failed {
		c.violate(LayerInvariants, "metrics", "", 0, end,
			"scheduler_dispatch_rollback_total=%d but %d dispatch publishes failed", got, failed)
	}
	if got := c.counter("scheduler_dispatch_published_total"); got != ok {
		c.violate(LayerInvariants, "metrics", "", 0, end,
			"scheduler_dispatch_published_total=%d but the broker acknowledged %d dispatches", got, ok)
	}
	if rf, rb := c.counter("scheduler_dispatch_rollback_failure_total"), c.counter("scheduler_dispatch_rollback_total"); rf > rb {
		c.violate(LayerInvariants, "metrics", "", 0, end, "more rollback failures (%d) than rollbacks (%d)", rf, rb)
	}
	// A replica can only have failed closed on a state read that failed.
	if got, reads := c.counter("scheduler_state_read_fail_closed_total"), c.in.History.Redis.FailedJobReads; got > reads {
		c.violate(LayerInvariants, "metrics", "", 0, end,
			"scheduler_state_read_fail_closed_total=%d but only %d replica reads of a job failed", got, reads)
	}
}

// counter sums a counter family over every gatherer and label set.
func (c *run) counter(name string) int {
	total := 0.0
	for _, g := range c.in.Metrics {
		families, err := g.Gather()
		if err != nil {
			continue
		}
		for _, f := range families {
			if f.GetName() == name {
				total += sumCounter(f)
			}
		}
	}
	return int(total)
}

func sumCounter(f *dto.MetricFamily) float64 {
	s := 0.0
	for _, m := range f.GetMetric() {
		s += m.GetCounter().GetValue()
	}
	return s
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
