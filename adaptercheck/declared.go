package adaptercheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

// declared holds the spec's declarations of behaviour (who writes cancels,
// the pick grace, the retry cap's reason, the submit de-duplication window,
// the delivery promise) to what the system did in the small worlds, and
// names the field to change. It never advises a declaration that would
// admit what a contract checker fails.
type declared struct {
	spec sut.Spec
	// cancelBy counts the writes into the cancelled state by who made them.
	cancelBy map[string]int
	// noRoute are the jobs failed for want of a route, with how long after
	// the job was first stored.
	noRoute []time.Duration
	// capAsCause are jobs whose recorded cause is the retry cap's own code.
	capAsCause []string
	// madeAgain are jobs the store made twice; retried counts submits sent
	// more than once.
	madeAgain []string
	retried   int
}

func newDeclared(spec sut.Spec) *declared {
	return &declared{spec: spec, cancelBy: map[string]int{}}
}

// run reads one world's ground truth.
func (d *declared) run(o *scenarios.Outcome) {
	s, h := d.spec, o.Run.History
	first := map[string]time.Duration{}
	made := map[string]int{}
	for _, c := range h.States {
		if lostAt(o, c.JobID, c.Step) {
			continue
		}
		if _, ok := first[c.JobID]; !ok {
			first[c.JobID] = c.Time
			made[c.JobID]++
		} else if (c.From == "" || s.IsTerminal(c.From)) && slices.Contains(s.Transitions[""], c.To) {
			made[c.JobID]++ // made again, as checker submit_dedup counts it
		}
		if c.To == s.Cancelled && s.Cancelled != "" {
			d.cancelBy[writer(c.Actor)]++
		}
	}
	for _, job := range h.Submitted {
		if len(job.Attempts) > 1 {
			d.retried++
		}
		if len(job.Attempts) > 1 && made[job.JobID] > 1 && len(d.madeAgain) < 3 {
			d.madeAgain = append(d.madeAgain, fmt.Sprintf("%s seed %d job %s", o.Scenario, o.Seed, job.JobID))
		}
	}
	for id, entry := range o.Run.DLQ {
		if entry.ReasonCode == s.ReasonTopicMissing && s.ReasonTopicMissing != "" {
			for _, c := range h.States {
				if c.JobID == id && s.IsTerminal(c.To) {
					d.noRoute = append(d.noRoute, c.Time-first[id])
					break
				}
			}
		}
		if s.RetryCapReason != "" && entry.ReasonCode == s.RetryCapReason && o.Run.Final[id].Cause == s.RetryCapReason &&
			len(d.capAsCause) < 3 {
			d.capAsCause = append(d.capAsCause, fmt.Sprintf("%s seed %d job %s", o.Scenario, o.Seed, id))
		}
	}
}

// writer is who made a store write: a replica, or the gateway (its clients'
// actors).
func writer(actor string) string {
	if strings.HasPrefix(actor, "replica-") {
		return "replica"
	}
	return "gateway"
}

// judge adds what the worlds say of the declarations to a.
func (d *declared) judge(a *audit, sys sut.System) {
	s := d.spec
	byReplica, byGateway := d.cancelBy["replica"], d.cancelBy["gateway"]
	switch {
	case s.Cancels == sut.CancelByReplica && byReplica == 0 && byGateway > 0:
		a.add(Error, fmt.Sprintf("Spec.Cancels says a replica writes cancels, but all %d writes into %s were the gateway's", byGateway,
			s.Cancelled), "set Spec.Cancels = sut.CancelByGateway: CancelWriteFails aims at a replica's cancel write, which never comes")
	case s.Cancels == sut.CancelByGateway && byGateway == 0 && byReplica > 0:
		// Mixed is fine: a gateway that writes a client's cancel and a
		// replica that finishes one it deferred.
		a.add(Error, fmt.Sprintf("Spec.Cancels says the gateway writes cancels, but all %d writes into %s were replicas'", byReplica,
			s.Cancelled), "set Spec.Cancels = sut.CancelByReplica, so CancelWriteFails aims at the replicas' cancel writes")
	}
	if n := len(d.noRoute); n > 0 {
		longest := d.noRoute[0]
		for _, t := range d.noRoute {
			longest = max(longest, t)
		}
		switch {
		case s.PickGrace > 0 && longest < s.PickGrace/2:
			a.add(Error, fmt.Sprintf("%d jobs without a route failed with %s at most %s after they were stored, but Spec.PickGrace is %s",
				n, s.ReasonTopicMissing, longest, s.PickGrace),
				"if the system fails such a job at once, set Spec.NoRouteFailsAtOnce and PickGrace 0; if it waits, it waits too little: that is a bug grace_not_early names")
		case s.PickGrace == 0 && !s.NoRouteFailsAtOnce && longest < time.Second:
			a.add(Warning, fmt.Sprintf("%d jobs without a route failed with %s within %s of being stored, but the spec says they are retried",
				n, s.ReasonTopicMissing, longest),
				"set Spec.NoRouteFailsAtOnce: the cases whose point is a late pool mapping then do not apply")
		case s.NoRouteFailsAtOnce && longest >= time.Second:
			a.add(Error, fmt.Sprintf("Spec.NoRouteFailsAtOnce, but jobs without a route waited up to %s before they failed with %s",
				longest, s.ReasonTopicMissing), "leave NoRouteFailsAtOnce false and declare the wait as Spec.PickGrace")
		}
	}
	if len(d.capAsCause) > 0 {
		a.add(Error, fmt.Sprintf("jobs failed with the retry cap's code %s record that same code as their cause: %s", s.RetryCapReason,
			strings.Join(d.capAsCause, "; ")),
			"Observer.Job's Cause is the last error that made the job retry (JobFact.Cause), never the cap's own code: read it from the field the system keeps it in, or leave it empty")
	}
	if len(d.madeAgain) > 0 && s.SubmitDedupWindow > 0 {
		a.add(Error, fmt.Sprintf("submits sent again made jobs a second time, though Spec.SubmitDedupWindow promises they never do: %s",
			strings.Join(d.madeAgain, "; ")),
			"keep the job's record (or its de-duplication key) for the whole window, or declare the window it is kept for: submit_dedup fails this")
	}
	if s.SubmitDedupWindow == 0 && d.retried > 0 && len(d.madeAgain) == 0 {
		a.add(Warning, fmt.Sprintf("%d submits were sent more than once and none made a second job, but the spec promises no submit de-duplication window",
			d.retried), "declare Spec.SubmitDedupWindow (sut.SubmitDedupForever if the job's record is kept), so late retries hold the system to it")
	}
	switch _, pulls := sys.Worker().(sut.Puller); {
	case pulls && !s.WorkersPull:
		a.add(Error, "the worker protocol pulls its dispatches from the store (sut.Puller), but Spec.WorkersPull is false",
			"set Spec.WorkersPull: the cases and fault kinds about dispatches published over the bus then do not apply")
	case !pulls && s.WorkersPull:
		a.add(Error, "Spec.WorkersPull says workers pull their dispatches, but the worker protocol is no sut.Puller",
			"implement sut.Puller on the worker protocol, or leave Spec.WorkersPull false")
	}
	if _, ok := sys.Worker().(sut.IdempotentConsumer); s.Delivery == sut.AtLeastOnceIdempotentConsumer && !ok {
		a.add(Error, "Spec.Delivery promises at-least-once with an idempotent consumer, but the worker protocol has none (IdempotentConsumer)",
			"implement sut.IdempotentConsumer on the worker protocol, or promise sut.ExactlyOnce: a repeated message is otherwise run twice")
	}
}
