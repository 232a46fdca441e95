package checker

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sim"
)

// story builds a hand-made history, step by step.
type story struct {
	h     sim.History
	final map[string]map[string]string
	dlq   map[string]engine.DLQEntry
	step  uint64
	last  map[string]engine.JobState
}

func newStory() *story {
	return &story{final: map[string]map[string]string{}, dlq: map[string]engine.DLQEntry{}, last: map[string]engine.JobState{}}
}

func (s *story) tick() uint64 { s.step++; return s.step }

func (s *story) at() time.Duration { return time.Duration(s.step) * time.Second }

func (s *story) submit(job string) *story {
	s.tick()
	s.h.Submitted = append(s.h.Submitted, sim.SubmittedJob{JobID: job, Topic: "default", At: s.at(), Accepted: true})
	return s
}

func (s *story) commit(job string, to engine.JobState) *story {
	s.tick()
	s.h.States = append(s.h.States, sim.StateChange{Step: s.step, Time: s.at(), JobID: job, From: s.last[job], To: to})
	s.last[job] = to
	h := s.final[job]
	if h == nil {
		h = map[string]string{"attempts": "0"}
		s.final[job] = h
	}
	h["state"] = string(to)
	if to == engine.StateScheduled {
		h["attempts"] = itoa(atoi(h["attempts"]) + 1)
	}
	return s
}

func (s *story) publish(job string, gen int, outcome sim.PublishOutcome) *story {
	s.tick()
	s.h.Publishes = append(s.h.Publishes, sim.PublishRecord{Step: s.step, Time: s.at(), Subject: "worker.w1.jobs",
		MsgID: engine.DispatchMessageID(job, gen), JobID: job, Gen: gen, Outcome: outcome})
	return s
}

func (s *story) execute(job string, gen int, dispatchID string) *story {
	s.tick()
	s.h.Executions = append(s.h.Executions, sim.Execution{Step: s.step, Time: s.at(), Worker: "w1", JobID: job, Gen: gen, DispatchID: dispatchID})
	return s
}

func (s *story) read(client int, job string, out string, unknown bool) *story {
	call := s.tick()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, sim.ClientOp{Client: client, Kind: sim.OpStatus, Key: job, Output: out,
		CallStep: call, RetStep: ret, Unknown: unknown})
	return s
}

// dispatch runs a job through the happy path to SUCCEEDED.
func (s *story) dispatch(job string) *story {
	return s.submit(job).commit(job, engine.StatePending).commit(job, engine.StateScheduled).
		commit(job, engine.StateDispatched).publish(job, 0, sim.PublishStored).
		commit(job, engine.StateRunning).execute(job, 0, "d-"+job).commit(job, engine.StateSucceeded)
}

func (s *story) check() *Result {
	s.h.End = s.at() + time.Second
	s.h.FaultPhaseEnd = 0 // judged as if every step were in the heal phase
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq})
}

func itoa(n int) string { return strconv.Itoa(n) }

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
	s := newStory().dispatch("j1").publish("j1", 0, sim.PublishStored)
	r := s.check()
	require.Equal(t, []string{"exactly_once_publish"}, checkers(r))
	require.Equal(t, LayerInvariants, r.FirstFailedLayer())
	require.Equal(t, "j1", r.Violations[0].Job)
}

func TestDeduplicatedRepublishIsNotADuplicate(t *testing.T) {
	s := newStory().dispatch("j1").publish("j1", 0, sim.PublishDeduplicated).publish("j1", 0, sim.PublishFailedClean)
	require.Empty(t, s.check().Violations)
}

func TestRedispatchWithoutRetryingIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").publish("j1", 1, sim.PublishStored)
	require.Equal(t, []string{"exactly_once_publish"}, checkers(s.check()))
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
	s.final["j1"]["attempts"] = "3"
	require.Equal(t, []string{"attempts"}, checkers(s.check()))
}

func TestFailedJobWithoutDLQIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateFailed)
	require.Equal(t, []string{"dlq_entry"}, checkers(s.check()))
	s.dlq["j1"] = engine.DLQEntry{JobID: "j1", Status: engine.StateFailed, LastState: engine.StatePending, ReasonCode: engine.ReasonNoPoolMappingTopic}
	require.Empty(t, s.check().Violations)
}

func TestDLQHidingRootCauseIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateFailed)
	s.final["j1"]["last_error_code"] = string(engine.ReasonNoPoolMappingTopic)
	s.dlq["j1"] = engine.DLQEntry{JobID: "j1", Status: engine.StateFailed, LastState: engine.StatePending, ReasonCode: engine.ReasonMaxSchedulingRetries}
	require.Equal(t, []string{"dlq_root_cause"}, checkers(s.check()))
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
	s.dlq["j1"] = engine.DLQEntry{Status: engine.StateTimeout, LastState: engine.StateDispatched, ReasonCode: engine.ReasonDispatchTimeout}
	r := s.check()
	require.Equal(t, []string{"dispatch_timeout"}, checkers(r))
	require.Equal(t, LayerLiveness, r.FirstFailedLayer())
	require.Equal(t, 1, r.Figures.TimeoutNeverPublished)
}

func TestKernelFailureFailsAssumptions(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.End = s.at()
	r := Check(Input{History: &s.h, Final: s.final, RunErr: errors.New("deadlock")})
	require.Equal(t, []string{"run_completed"}, checkers(r))
	require.Equal(t, LinSkipped, r.Linearizability)
	require.Equal(t, LayerAssumptions, r.FirstFailedLayer())
}

func TestViolationNamesFaultsBeforeIt(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.Faults = []sim.FaultRecord{{Step: 2, Kind: "PublishFailsAfterStored", Target: "worker.w1.jobs j1"},
		{Step: 3, Kind: "AckLost", Target: "sys.job.result j2"}}
	s.publish("j1", 0, sim.PublishStored)
	r := s.check()
	require.Equal(t, []uint64{2}, r.Violations[0].FaultSteps)
}

// The real engine in the simulator, no faults: every layer passes.
func TestEngineRunWithoutFaultsPasses(t *testing.T) {
	w := sim.NewWorld(sim.Config{Seed: 11, Workload: sim.Workload{Jobs: 20, StatusReads: 30, CancelRate: 0.1}})
	res := w.Run()
	r := Check(Input{History: res.History, Final: res.Final, DLQ: res.DLQ, Metrics: w.Metrics(), RunErr: res.Err})
	require.False(t, r.Failed(), r.Summary())
	require.Len(t, r.Partitions, 20)
}

// Where every job can succeed (seed 003's healing race), a job failed for a
// cause that healed in time is a liveness violation; a cancelled one is not.
func TestFailedJobWhereAllCanSucceedIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").submit("j2").commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).
		commit("j2", engine.StateFailed).submit("j3").commit("j3", engine.StatePending).commit("j3", engine.StateCancelled)
	s.final["j2"]["last_error_code"] = string(engine.ReasonNoPoolMappingTopic)
	s.dlq["j2"] = engine.DLQEntry{Status: engine.StateFailed, LastState: engine.StateScheduled, ReasonCode: engine.ReasonNoPoolMappingTopic}
	s.h.End = s.at() + time.Second
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Spec: Spec{AllSucceed: true}})
	require.Equal(t, []string{"job_succeeded"}, checkers(r))
	require.Equal(t, "j2", r.Violations[0].Job)

	require.False(t, Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq}).Failed(), "without the promise, FAILED is an outcome")
}

// CheckInvariants, the state machine's per-step check, judges a run in
// progress: a job still RUNNING is fine, a second publish or a resurrection
// is not.
func TestCheckInvariantsMidRun(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, sim.PublishStored).commit("j1", engine.StateRunning)
	require.Empty(t, CheckInvariants(Input{History: &s.h}), "an unfinished job is not a violation mid-run")

	s.publish("j1", 0, sim.PublishStored)
	var got []string
	for _, v := range CheckInvariants(Input{History: &s.h}) {
		got = append(got, v.Checker)
	}
	require.Equal(t, []string{"exactly_once_publish"}, got)

	r := newStory().dispatch("j2").commit("j2", engine.StateScheduled)
	got = nil
	for _, v := range CheckInvariants(Input{History: &r.h}) {
		got = append(got, v.Checker)
	}
	require.Contains(t, got, "no_resurrection")
}
