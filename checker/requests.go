package checker

import (
	"fmt"
	"strings"

	"github.com/dispatchsim/dispatchsim/history"
)

// invalidRequestRefused: a job submitted without a topic is refused, never
// scheduled: its record only ever enters the failed state (its DLQ reason is
// dlq_true_cause's), or the cancelled one when its client's cancel reached
// the system first, and the broker never stores a dispatch of it. The first
// offending commit of each kind is reported, with what followed it.
func invalidRequestRefused(c *run, cm Commit) string {
	sys := c.in.System
	job, ok := c.submitted(cm.Job)
	if !ok || job.Topic != "" {
		return ""
	}
	refused := func(s history.StateChange) bool {
		return s.To == sys.Failed || s.To == sys.Cancelled || s.To == "" // "": a store loss forgot the record
	}
	switch cm.Kind {
	case CommitPublish:
		if c.firstLatePublish(cm.Job, 0) != cm.Step {
			return ""
		}
		ran := 0
		for _, e := range c.in.History.Executions {
			if e.JobID == cm.Job {
				ran++
			}
		}
		return fmt.Sprintf("job submitted without a topic was dispatched by %s (message %s) and executed %d times",
			cm.Publish.Actor, cm.Publish.MsgID, ran)
	case CommitState:
		var moves []string
		first := true
		for _, s := range c.jobStates[cm.Job] {
			if refused(s) {
				continue
			}
			if first && s.Step != cm.Step {
				return "" // reported at the first such move
			}
			first = false
			moves = append(moves, history.StateOrNone(s.From)+" -> "+s.To)
		}
		if len(moves) == 0 {
			return ""
		}
		return fmt.Sprintf("job submitted without a topic was taken on instead of failed with %s: %s", sys.ReasonInvalidRequest,
			strings.Join(moves, ", "))
	}
	return ""
}
