package checker

import (
	"fmt"
	"slices"

	"github.com/dispatchsim/dispatchsim/history"
)

// attributeToEnvironment moves to LayerEnvironment every violation that
// follows a broken environment contract: on a job or idempotency key whose
// record the store forgot, from the loss on. The excuse is as narrow as the
// loss: another job, or the same job before it, is still the system's. A
// partition that lost linearizability for that reason no longer makes the run
// illegal; it is reported in the environment's layer instead.
func attributeToEnvironment(c *run) {
	attributeToBrokerLosses(c)
	losses := c.in.History.StoreLosses
	if len(losses) == 0 {
		return
	}
	// A violation without a step, or by a checker that reads the job's final
	// record, is judged on the store as the run left it: after every loss.
	blame := func(id, checker string, step uint64) (history.StoreLoss, bool) {
		final := step == 0 || finalRecordCheckers[checker]
		for _, l := range losses {
			if (final || l.Step <= step) && l.Affects(id) {
				return l, true
			}
		}
		return history.StoreLoss{}, false
	}
	for i := range c.out.Violations {
		v := &c.out.Violations[i]
		l, ok := blame(v.Job, v.Checker, v.Step)
		if !ok || v.Layer == LayerAssumptions {
			continue
		}
		v.Message = fmt.Sprintf("after the store forgot acknowledged writes (at %s, everything since %s): %s [was %s]",
			l.Time, l.Since, v.Message, v.Layer)
		v.Layer = LayerEnvironment
	}
	if c.out.Linearizability != LinIllegal {
		return
	}
	c.out.Linearizability = LinOk
	for _, p := range c.out.Partitions {
		switch {
		case p.Outcome == LinUnknown && c.out.Linearizability == LinOk:
			c.out.Linearizability = LinUnknown
		case p.Outcome != LinIllegal:
		case !affectedAnywhere(losses, p.Key):
			c.out.Linearizability = LinIllegal
			return
		}
	}
}

// finalRecordCheckers judge a job by its record (and DLQ entry) at the end of
// the run, whatever step they name: a loss at any time may have changed it.
var finalRecordCheckers = map[string]bool{
	"attempts": true, "dlq_root_cause": true, "no_job_lost": true, "dlq_announced": true, "job_succeeded": true,
	"job_terminal": true, "record_matches_result": true, "dlq_entry": true, "success_result_kept": true,
}

func affectedAnywhere(losses []history.StoreLoss, id string) bool {
	for _, l := range losses {
		if l.Affects(id) {
			return true
		}
	}
	return false
}

// BrokerLossExcuses are the checkers whose verdict on a job rests on its
// messages arriving, and so the only ones a broker's loss of them excuses: a
// lost request leaves an accepted job never created, a lost dispatch or
// result leaves the job to time out, and a message id the broker forgot lets
// a re-publish of it be stored and run again. The store kept every write:
// the state machine, locks, terminal states and timeouts are still the
// system's on those jobs.
var BrokerLossExcuses = []string{"no_job_lost", "job_succeeded", "success_result_kept", "exactly_once_publish",
	"exactly_once_execution", "no_concurrent_dispatches"}

// attributeToBrokerLosses moves to LayerEnvironment the violations of a
// BrokerLossExcuses checker on a job whose message the broker lost, from the
// loss on (or judged on the final record), and job_terminal on such a job
// that never came to exist.
func attributeToBrokerLosses(c *run) {
	for _, l := range c.in.History.BrokerLosses {
		for i := range c.out.Violations {
			v := &c.out.Violations[i]
			final := v.Step == 0 || finalRecordCheckers[v.Checker]
			// A job whose request was lost never existed: it is no more
			// terminal than it is held (no_job_lost).
			never := v.Checker == "job_terminal" && len(c.jobStates[v.Job]) == 0
			if v.Layer == LayerAssumptions || v.Layer == LayerEnvironment || !(final || l.Step <= v.Step) ||
				!l.Affects(v.Job) || !slices.Contains(BrokerLossExcuses, v.Checker) && !never {
				continue
			}
			v.Message = fmt.Sprintf("after the broker lost the messages it stored since %s (at %s): %s [was %s]",
				l.Since, l.Time, v.Message, v.Layer)
			v.Layer = LayerEnvironment
		}
	}
}
