package checker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// story builds a hand-made history, step by step.
type story struct {
	h     history.History
	final map[string]sut.JobFact
	dlq   map[string]sut.DLQEntry
	step  uint64
	last  map[string]engine.JobState
}

func newStory() *story {
	return &story{final: map[string]sut.JobFact{}, dlq: map[string]sut.DLQEntry{}, last: map[string]engine.JobState{}}
}

func (s *story) tick() uint64 { s.step++; return s.step }

func (s *story) at() time.Duration { return time.Duration(s.step) * time.Second }

func (s *story) submit(job string) *story {
	s.tick()
	s.h.Submitted = append(s.h.Submitted, history.SubmittedJob{JobID: job, Topic: "default", At: s.at(), Accepted: true})
	return s
}

func (s *story) commit(job string, to engine.JobState) *story {
	s.tick()
	s.h.States = append(s.h.States, history.StateChange{Step: s.step, Time: s.at(), Sent: s.at(), JobID: job, From: string(s.last[job]), To: string(to)})
	s.last[job] = to
	f := s.final[job]
	f.State = string(to)
	if to == engine.StateScheduled {
		f.Attempts++
	}
	if to == engine.StateSucceeded {
		// The executing worker reported the result the record then carries.
		f.ResultPtr = "mem://" + job
		s.h.Reports = append(s.h.Reports, history.WorkerReport{Step: s.step - 1, Time: s.at(), Worker: "w1", JobID: job,
			Outcome: string(sut.Succeeded), ResultPtr: f.ResultPtr})
	}
	s.final[job] = f
	return s
}

func (s *story) publish(job string, gen int, outcome history.PublishOutcome) *story {
	s.tick()
	s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Subject: "worker.w1.jobs",
		MsgID: engine.DispatchMessageID(job, gen), JobID: job, Gen: gen, Dispatch: true, Outcome: outcome})
	return s
}

// execute runs a dispatch on w1 to its end within the step: a story's
// executions are over before the commit that follows them.
func (s *story) execute(job string, gen int, dispatchID string) *story {
	s.tick()
	s.h.Executions = append(s.h.Executions, history.Execution{Step: s.step, Time: s.at(), Worker: "w1", JobID: job, Gen: gen,
		DispatchID: dispatchID, End: s.at(), EndStep: s.step})
	return s
}

func (s *story) read(client int, job string, out string, unknown bool) *story {
	call := s.tick()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: client, Kind: history.OpStatus, Key: job, Output: out,
		CallStep: call, RetStep: ret, Unknown: unknown})
	return s
}

// dispatch runs a job through the happy path to SUCCEEDED.
func (s *story) dispatch(job string) *story {
	return s.submit(job).commit(job, engine.StatePending).commit(job, engine.StateScheduled).
		commit(job, engine.StateDispatched).publish(job, 0, history.PublishStored).
		commit(job, engine.StateRunning).execute(job, 0, "d-"+job).commit(job, engine.StateSucceeded)
}

func (s *story) check() *Result {
	s.h.End = s.at() + time.Second
	s.h.FaultPhaseEnd = 0 // judged as if every step were in the heal phase
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec})
}

// dead files job's DLQ entry with its last move and announces it, as the
// handler that stored it does.
func (s *story) dead(job string, entry sut.DLQEntry) *story {
	states := s.h.States
	actor := ""
	for i := len(states) - 1; i >= 0; i-- {
		if states[i].JobID == job {
			actor = states[i].Actor
			break
		}
	}
	s.dlq[job] = entry
	s.tick()
	s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: actor,
		Subject: engine.SubjectDLQ, MsgID: "dlq:" + job, JobID: job, Outcome: history.PublishStored})
	return s
}

// cordumSpec is the engine's promise, which the stories are written against.
var cordumSpec = cordum.System{}.Spec(sut.Options{})

// dlqEntry is a DLQ fact.
func dlqEntry(status, last engine.JobState, reason engine.ReasonCode) sut.DLQEntry {
	return sut.DLQEntry{Status: string(status), LastState: string(last), ReasonCode: string(reason)}
}

// setFinal changes a job's final facts.
func (s *story) setFinal(job string, change func(f *sut.JobFact)) {
	f := s.final[job]
	change(&f)
	s.final[job] = f
}

func checkers(r *Result) []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Checker)
	}
	return out
}

func TestLegalHistoryPasses(t *testing.T) {
	s := newStory().dispatch("j1").dispatch("j2").read(1, "j1", "SUCCEEDED", false).read(2, "j2", "", true)
	r := s.check()
	require.Empty(t, r.Violations, r.Summary())
	require.Equal(t, LinOk, r.Linearizability)
	require.False(t, r.Failed())
}

func TestDuplicatePublishIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").publish("j1", 0, history.PublishStored)
	r := s.check()
	// The copy came after SUCCEEDED: a terminal job dispatched again, too.
	require.Equal(t, []string{"exactly_once_publish", "terminal_job_executed_again"}, checkers(r))
	require.Equal(t, LayerInvariants, r.FirstFailedLayer())
	require.Equal(t, "j1", r.Violations[0].Job)
}

func TestDeduplicatedRepublishIsNotADuplicate(t *testing.T) {
	s := newStory().dispatch("j1").publish("j1", 0, history.PublishDeduplicated).publish("j1", 0, history.PublishFailedClean)
	require.Empty(t, s.check().Violations)
}

func TestRedispatchWithoutRetryingIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").publish("j1", 1, history.PublishStored)
	require.Equal(t, []string{"exactly_once_publish", "terminal_job_executed_again"}, checkers(s.check()))
}

func TestTwoDispatchIDsExecutedIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").execute("j1", 0, "other")
	require.Equal(t, []string{"exactly_once_execution"}, checkers(s.check()))
}

func TestResurrectionIsCaught(t *testing.T) {
	// Seed 004: a completed job requeued to PENDING and dispatched again.
	s := newStory().dispatch("j1").commit("j1", engine.StatePending)
	r := s.check()
	require.Contains(t, checkers(r), "no_resurrection")
	require.Contains(t, checkers(r), "transition_graph")
}

func TestForbiddenTransitionIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateRunning).
		commit("j1", engine.StateSucceeded)
	// The lifecycle model refuses the same commit: two checkers, one cause.
	require.Equal(t, []string{"transition_graph", "job_lifecycle"}, checkers(s.check()))
}

func TestStaleReadIsNotLinearizable(t *testing.T) {
	s := newStory().dispatch("j1")
	s.read(1, "j1", "RUNNING", false) // after SUCCEEDED was committed
	r := s.check()
	require.Equal(t, LinIllegal, r.Linearizability)
	require.Equal(t, []string{"job_lifecycle"}, checkers(r))
	require.Equal(t, LayerLinearization, r.FirstFailedLayer())
}

func TestAttemptsMismatchIsCaught(t *testing.T) {
	s := newStory().dispatch("j1")
	s.setFinal("j1", func(f *sut.JobFact) { f.Attempts = 3 })
	require.Equal(t, []string{"attempts"}, checkers(s.check()))
}

func TestFailedJobWithoutDLQIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateFailed)
	require.Equal(t, []string{"dlq_entry"}, checkers(s.check()))
	s.dead("j1", dlqEntry(engine.StateFailed, engine.StatePending, engine.ReasonNoPoolMappingTopic))
	require.Empty(t, s.check().Violations)
}

func TestDLQHidingRootCauseIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateFailed)
	s.setFinal("j1", func(f *sut.JobFact) { f.Cause = string(engine.ReasonNoPoolMappingTopic) })
	s.dead("j1", dlqEntry(engine.StateFailed, engine.StatePending, engine.ReasonMaxSchedulingRetries))
	// Filed at the cap without one attempt: the cap was not reached either.
	require.Equal(t, []string{"dlq_root_cause", "retry_cap_not_early"}, checkers(s.check()))
}

// A TIMEOUT is a failure too: its DLQ entry must not blame the retry cap
// for a job that recorded its own cause.
func TestTimedOutJobsDLQHidingRootCauseIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).wait(cordumSpec.DispatchTimeout).commit("j1", engine.StateTimeout)
	s.setFinal("j1", func(f *sut.JobFact) { f.Cause = string(engine.ReasonNoPoolMappingTopic) })
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonMaxSchedulingRetries))
	require.Contains(t, checkers(s.check()), "dlq_root_cause")
}

func TestLostJobIsCaught(t *testing.T) {
	s := newStory().submit("j1")
	r := s.check()
	require.Contains(t, checkers(r), "no_job_lost")
	require.Contains(t, checkers(r), "job_terminal")
}

func TestStuckDispatchedIsALivenessViolation(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched)
	s.step += 400 // 400s pass with the job DISPATCHED
	s.commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	r := s.check()
	require.Equal(t, []string{"dispatch_timeout"}, checkers(r))
	require.Equal(t, LayerLiveness, r.FirstFailedLayer())
	require.Equal(t, 1, r.Figures.TimeoutNeverPublished)
}

func TestKernelFailureFailsAssumptions(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.End = s.at()
	r := Check(Input{History: &s.h, Final: s.final, RunErr: errors.New("deadlock"), System: cordumSpec})
	require.Equal(t, []string{"run_completed"}, checkers(r))
	require.Equal(t, LinSkipped, r.Linearizability)
	require.Equal(t, LayerAssumptions, r.FirstFailedLayer())
}

// harnessFault is a run error the harness declares its own, as the
// kernel's HarnessFault does.
type harnessFault struct{ step uint64 }

func (f harnessFault) Error() string {
	return "harness fault: sim: snapshot key q: type \"stream\" cannot be copied"
}
func (f harnessFault) HarnessFault() (uint64, time.Duration) {
	return f.step, time.Duration(f.step) * time.Second
}

// A fault of the harness fails the seed at a layer of its own, at the step
// it happened, and nothing else is judged: the run is not the system's to
// answer for. A wrapped one is still the harness's; any other run error is
// an assumption that failed.
func TestAHarnessFaultIsItsOwnLayerAndJudgesNothingElse(t *testing.T) {
	s := newStory().dispatch("j1") // j1 never ends: liveness would fire on a judged run
	s.h.End = s.at()
	for _, err := range []error{harnessFault{step: 3}, fmt.Errorf("run: %w", harnessFault{step: 3})} {
		r := Check(Input{History: &s.h, Final: s.final, RunErr: err, System: cordumSpec})
		require.Equal(t, []string{"harness_fault"}, checkers(r))
		require.Equal(t, LayerHarness, r.FirstFailedLayer())
		require.Equal(t, uint64(3), r.Violations[0].Step)
		require.Equal(t, 3*time.Second, r.Violations[0].Time)
		require.Contains(t, r.Violations[0].Message, `type "stream" cannot be copied`)
		require.Equal(t, LinSkipped, r.Linearizability)
	}
	r := Check(Input{History: &s.h, Final: s.final, RunErr: errors.New("sim: actor replica-1/x panicked: boom"), System: cordumSpec})
	require.Equal(t, []string{"run_completed"}, checkers(r), "a panic the harness does not own stays an assumption")
}

func TestViolationNamesFaultsBeforeIt(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.Faults = []history.FaultRecord{{Step: 2, Kind: "PublishFailsAfterStored", Target: "worker.w1.jobs j1"},
		{Step: 3, Kind: "AckLost", Target: "sys.job.result j2"}}
	s.publish("j1", 0, history.PublishStored)
	r := s.check()
	require.Equal(t, []uint64{2}, r.Violations[0].FaultSteps)
}

// The real engine in the simulator, no faults: every layer passes.
func TestEngineRunWithoutFaultsPasses(t *testing.T) {
	w := sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 11, Workload: sim.Workload{Jobs: 20, StatusReads: 30, CancelRate: 0.1}})
	res := w.Run()
	r := Check(Input{History: res.History, Final: res.Final, DLQ: res.DLQ, Metrics: w.Metrics(), RunErr: res.Err, System: w.Spec()})
	require.False(t, r.Failed(), r.Summary())
	require.Len(t, r.Partitions, 20)
}

// Where every job can succeed (seed 003's healing race), a job failed for a
// cause that healed in time is a liveness violation; a cancelled one is not.
func TestFailedJobWhereAllCanSucceedIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").submit("j2").commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).
		wait(cordumSpec.PickGrace).commit("j2", engine.StateFailed).submit("j3").commit("j3", engine.StatePending).commit("j3", engine.StateCancelled)
	s.setFinal("j2", func(f *sut.JobFact) { f.Cause = string(engine.ReasonNoPoolMappingTopic) })
	s.dead("j2", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonNoPoolMappingTopic))
	s.h.End = s.at() + time.Second
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Spec: Spec{AllSucceed: true}, System: cordumSpec})
	require.Equal(t, []string{"job_succeeded"}, checkers(r))
	require.Equal(t, "j2", r.Violations[0].Job)

	require.False(t, Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec}).Failed(), "without the promise, FAILED is an outcome")
}

// CheckInvariants, the state machine's per-step check, judges a run in
// progress: a job still RUNNING is fine, a second publish or a resurrection
// is not.
func TestCheckInvariantsMidRun(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishStored).commit("j1", engine.StateRunning)
	require.Empty(t, CheckInvariants(Input{History: &s.h, System: cordumSpec}), "an unfinished job is not a violation mid-run")

	s.publish("j1", 0, history.PublishStored)
	var got []string
	for _, v := range CheckInvariants(Input{History: &s.h, System: cordumSpec}) {
		got = append(got, v.Checker)
	}
	require.Equal(t, []string{"exactly_once_publish"}, got)

	r := newStory().dispatch("j2").commit("j2", engine.StateScheduled)
	got = nil
	for _, v := range CheckInvariants(Input{History: &r.h, System: cordumSpec}) {
		got = append(got, v.Checker)
	}
	require.Contains(t, got, "no_resurrection")
}

// counters is a registry holding the engine's publish counters at these values.
func counters(rollbacks, rollbackFailures, published float64) prometheus.Gatherer {
	reg := prometheus.NewRegistry()
	for name, v := range map[string]float64{"scheduler_dispatch_rollback_total": rollbacks,
		"scheduler_dispatch_rollback_failure_total": rollbackFailures, "scheduler_dispatch_published_total": published} {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name})
		c.Add(v)
		reg.MustRegister(c)
	}
	return reg
}

// A failed publish is followed by its publisher's rollback; the rollback
// failure counter counts those that did not land or lost their reply.
func TestRollbackFailuresAgainstTheRollbacksThatLanded(t *testing.T) {
	failedPublish := func(rollback bool) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishFailedClean)
		for i := range s.h.States {
			s.h.States[i].Actor = "replica-1/h"
		}
		s.h.Publishes[0].Actor = "replica-1/h"
		if rollback {
			s.commit("j1", engine.StateScheduled)
			s.h.States[len(s.h.States)-1].Actor = "replica-1/h"
		}
		s.h.End = s.at() + time.Second
		return s
	}
	judge := func(s *story, failures float64) []Violation {
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
			Metrics: []prometheus.Gatherer{counters(1, failures, 0)}}), "metrics")
	}
	require.Empty(t, judge(failedPublish(true), 0))
	require.Empty(t, judge(failedPublish(false), 1))
	v := judge(failedPublish(true), 1)
	require.Len(t, v, 1, "the rollback landed and its writer heard so")
	require.Contains(t, v[0].Message, "scheduler_dispatch_rollback_failure_total=1 but between 0 and 0")
	require.Len(t, judge(failedPublish(false), 0), 1, "the rollback never landed")

	lost := failedPublish(true)
	end := lost.h.States[len(lost.h.States)-1]
	lost.h.Faults = append(lost.h.Faults, history.FaultRecord{Step: end.Step, Actor: end.Actor, Effect: history.EffectReplyLostAfterApply})
	require.Empty(t, judge(lost, 1), "landed, but its writer was told it failed")
}

// A lock whose holder was killed while it held the job stays until its TTL
// runs out, and the reconciler passes a job with a busy lock by: the
// dispatch timeout's bound waits for it, for as long as the lock lasts and
// only when its holder went down.
func TestAStrandedLockDelaysTheDispatchTimeoutBound(t *testing.T) {
	stuck := func(holderKilled bool, stayed int) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched)
		dispatchedAt := s.at()
		s.step += 290 // the reconciler takes the job's lock just before its timeout
		s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.tick(), Time: s.at(), Actor: "replica-1/reconciler#9.1",
			JobID: "j1", Token: "tok", Op: sut.LockTake, Held: true, Until: s.at() + 60*time.Second, Sent: s.at()})
		if holderKilled {
			s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.tick(), Time: s.at(), Actor: "replica-1",
				Kind: "Event:kill", Effect: history.EffectCrash})
		}
		s.step = uint64((dispatchedAt + time.Duration(stayed)*time.Second) / time.Second)
		s.commit("j1", engine.StateTimeout)
		s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
		return s
	}
	// Timed out 370 s after dispatch: past the timeout and the ticks, but
	// within the stranded lock's minute.
	require.NotContains(t, checkers(stuck(true, 370).check()), "dispatch_timeout")
	require.Contains(t, checkers(stuck(false, 370).check()), "dispatch_timeout", "a holder that stayed up excuses nothing")
	require.Contains(t, checkers(stuck(true, 460).check()), "dispatch_timeout", "nor does a lock long run out")
}

// A resurrection is one out of any terminal state, not only the succeeded
// one: each of the spec's terminal states, left, is caught.
func TestResurrectionFromEveryTerminalStateIsCaught(t *testing.T) {
	for _, terminal := range cordumSpec.Terminal {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.JobState(terminal)).
			commit("j1", engine.StateScheduled)
		require.Contains(t, checkers(s.check()), "no_resurrection", terminal)
	}
}

// A timeout is measured from the entry into the state it leaves that it
// ends, not from an earlier stay there: a job dispatched, rolled back and
// dispatched again times out a timeout after the second dispatch.
func TestTimeoutIsMeasuredFromTheEntryItEnds(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).commit("j1", engine.StateScheduled)
	s.step += 200
	s.commit("j1", engine.StateDispatched)
	s.step += 150 // 350 s after the first dispatch, 151 s after the second
	s.commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	require.Contains(t, checkers(s.check()), "timeout_not_early")
}
