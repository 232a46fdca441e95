package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// move commits job's move to state with the record the store then holds:
// the dispatch it is on and the result it points at, written by actor.
func (s *story) move(actor, job string, to engine.JobState, gen int, dispatchID, ptr string) *story {
	s.tick()
	s.h.States = append(s.h.States, history.StateChange{Step: s.step, Time: s.at(), Sent: s.at(), Actor: actor, JobID: job,
		From: string(s.last[job]), To: string(to), Gen: gen, DispatchID: dispatchID, ResultPtr: ptr})
	s.last[job] = to
	f := s.final[job]
	f.State, f.Gen, f.DispatchID, f.ResultPtr = string(to), gen, dispatchID, ptr
	s.final[job] = f
	return s
}

// dispatched takes a new job through to DISPATCHED on dispatch (gen, id).
func (s *story) dispatched(job string, gen int, dispatchID string) *story {
	return s.submit(job).move("r1/submit", job, engine.StatePending, gen, "", "").
		move("r1/submit", job, engine.StateScheduled, gen, "", "").
		move("r1/submit", job, engine.StateDispatched, gen, dispatchID, "")
}

// begin starts an execution of a dispatch on worker, still running; the
// returned index ends it (stop).
func (s *story) begin(worker, job string, gen int, dispatchID string) int {
	s.tick()
	s.h.Executions = append(s.h.Executions, history.Execution{Step: s.step, Time: s.at(), Worker: worker, JobID: job, Gen: gen,
		DispatchID: dispatchID})
	return len(s.h.Executions) - 1
}

// stop ends execution i now: its work done, or its worker crashed.
func (s *story) stop(i int, crashed bool) *story {
	s.tick()
	e := &s.h.Executions[i]
	e.End, e.EndStep, e.Crashed = s.at(), s.step, crashed
	return s
}

// report is worker's result for a dispatch, sent now.
func (s *story) report(worker, job string, gen int, dispatchID string, outcome sut.Outcome) history.WorkerReport {
	s.tick()
	msg := fmt.Sprintf(`{"job_id":%q,"dispatch_gen":%d,"status":%q,"result_ptr":"mem://%s/%s"}`, job, gen, outcome, job, dispatchID)
	r := history.WorkerReport{Step: s.step, Time: s.at(), Worker: worker, JobID: job, Gen: gen, DispatchID: dispatchID,
		Outcome: string(outcome), ResultPtr: "mem://" + job + "/" + dispatchID, Message: history.MessageDigest([]byte(msg))}
	s.h.Reports = append(s.h.Reports, r)
	return r
}

// settle is actor's handler returning on result r's message, at the step
// of its last commit (a handler settles when it returns, with no yield
// after its write) or, with tick, at a step of its own.
func (s *story) settle(actor string, r history.WorkerReport, outcome history.SettleOutcome, tick bool) *story {
	if tick {
		s.tick()
	}
	s.h.Settles = append(s.h.Settles, history.Settle{Step: s.step, Time: s.at(), Actor: actor, Subject: engine.SubjectResult,
		JobID: r.JobID, Outcome: outcome, Gen: r.Gen, ResultPtr: r.ResultPtr, Message: r.Message})
	return s
}

const resultHandler = "r1/sys.job.result#9.1"

// retried is a job whose first dispatch (gen 0, d0, on w1) reported a
// retryable failure, applied by its handler; its second (gen 1, d1) is then
// dispatched and started on w2, still running. It returns the execution
// index of d1 and w1's report.
func retried() (*story, int, history.WorkerReport) {
	s := newStory().dispatched("j1", 0, "d0")
	first := s.begin("w1", "j1", 0, "d0")
	s.stop(first, false)
	retry := s.report("w1", "j1", 0, "d0", sut.FailedRetryable)
	s.move("r1/sys.job.result#5.1", "j1", engine.StateRetrying, 1, "d0", retry.ResultPtr).
		settle("r1/sys.job.result#5.1", retry, history.SettleAck, false)
	s.move("r1/replay", "j1", engine.StateScheduled, 1, "d0", retry.ResultPtr).
		move("r1/replay", "j1", engine.StateDispatched, 1, "d1", retry.ResultPtr)
	return s, s.begin("w2", "j1", 1, "d1"), retry
}

// Two dispatches of one job ran; the job ended on the older one's late
// result. The near miss ends on the current dispatch's result.
func TestResultOfAnEarlierDispatchIsCaught(t *testing.T) {
	const g = "result_of_current_dispatch"
	s, second, _ := retried()
	late := s.report("w1", "j1", 0, "d0", sut.Succeeded) // a second, late report of the first dispatch
	s.move(resultHandler, "j1", engine.StateSucceeded, 1, "d1", late.ResultPtr).settle(resultHandler, late, history.SettleAck, false)
	s.stop(second, false)
	v := only(s.check(), g)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `DISPATCHED -> SUCCEEDED on result "mem://j1/d0": w1's succeeded of dispatch 0 (id d0)`)
	require.Contains(t, v[0].Message, "the job was on dispatch 1 (id d1), which ran on w2")

	s, second, _ = retried()
	s.stop(second, false)
	own := s.report("w2", "j1", 1, "d1", sut.Succeeded)
	s.move(resultHandler, "j1", engine.StateSucceeded, 1, "d1", own.ResultPtr).settle(resultHandler, own, history.SettleAck, false)
	require.Empty(t, only(s.check(), g), "the current dispatch's result")
}

// A result applied over its own pointer (the record kept the first
// dispatch's pointer through the re-dispatch, and the first dispatch's
// retryable failure came twice) is still a result applied: its writer was
// handling that result's message.
func TestStaleResultAppliedOverItsOwnPointerIsCaught(t *testing.T) {
	s, _, retry := retried()
	s.move(resultHandler, "j1", engine.StateRetrying, 2, "d1", retry.ResultPtr).settle(resultHandler, retry, history.SettleAck, false)
	v := only(s.check(), "result_of_current_dispatch")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "w1's failed_retryable of dispatch 0 (id d0)")

	// The same move by a writer handling no result (a sweep) applies none.
	s, _, retry = retried()
	s.move("r1/reconciler", "j1", engine.StateRetrying, 2, "d1", retry.ResultPtr)
	require.Empty(t, only(s.check(), "result_of_current_dispatch"))
}

// Within one generation the dispatch id counts only when the job's current
// id ran: a re-pick whose copy the broker dropped leaves the first copy the
// generation's only run, and its result is the generation's.
func TestResultOfAnotherCopyOfTheGeneration(t *testing.T) {
	build := func(repickRan bool) *story {
		s := newStory().dispatched("j1", 0, "d0")
		first := s.begin("w1", "j1", 0, "d0")
		s.move("r1/submit", "j1", engine.StateScheduled, 0, "d0", ""). // a publish rolled back
										move("r1/submit#2", "j1", engine.StateDispatched, 0, "d0b", "")
		if repickRan {
			s.stop(s.begin("w2", "j1", 0, "d0b"), false)
		}
		s.stop(first, false)
		r := s.report("w1", "j1", 0, "d0", sut.Succeeded)
		return s.move(resultHandler, "j1", engine.StateSucceeded, 0, "d0b", r.ResultPtr).settle(resultHandler, r, history.SettleAck, false)
	}
	require.Empty(t, only(build(false).check(), "result_of_current_dispatch"), "the re-pick's copy never ran")
	v := only(build(true).check(), "result_of_current_dispatch")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "the job was on dispatch 0 (id d0b), which ran on w2")
}

// succeededThenTimedOut is a dispatch that succeeded on w1 and whose result
// a handler settled (acked, or dropped) while the job was still RUNNING on
// it, before the reconciler timed the job out: the result was thrown away.
func succeededThenTimedOut(outcome history.SettleOutcome) *story {
	s := newStory().dispatched("j1", 0, "d0").move("r1/submit", "j1", engine.StateRunning, 0, "d0", "")
	s.stop(s.begin("w1", "j1", 0, "d0"), false)
	r := s.report("w1", "j1", 0, "d0", sut.Succeeded)
	s.settle("r2/sys.job.result#7.1", r, outcome, true)
	s.wait(5*time.Minute).move("r1/reconciler", "j1", engine.StateTimeout, 0, "d0", "")
	return s
}

// An execution succeeded, its result reached a replica's handler, and the
// job still ended TIMEOUT.
func TestDeliveredSuccessThatEndsTimedOutIsCaught(t *testing.T) {
	for _, outcome := range []history.SettleOutcome{history.SettleAck, history.SettleDrop} {
		v := only(succeededThenTimedOut(outcome).check(), "success_result_kept")
		require.Len(t, v, 1, outcome)
		require.Contains(t, v[0].Message, `job j1's dispatch 0 (id d0) succeeded on w1 (result "mem://j1/d0"`)
		require.Contains(t, v[0].Message, "while the job was RUNNING on that dispatch; the job ended TIMEOUT")
		require.Equal(t, LayerInvariants, v[0].Layer)
	}

	// A NAK is no final word: the result comes back, and liveness judges it.
	require.Empty(t, only(succeededThenTimedOut(history.SettleNak).check(), "success_result_kept"))

	// A store that forgot the job's writes explains it.
	s := succeededThenTimedOut(history.SettleAck)
	s.h.StoreLosses = []history.StoreLoss{{Step: s.step, Time: s.at(), Jobs: []string{"j1"}}}
	v := only(s.check(), "success_result_kept")
	require.Len(t, v, 1)
	require.Equal(t, LayerEnvironment, v[0].Layer)
}

// The near misses: the job was past the dispatch before its success was
// settled, by a commit that did not apply it.
func TestSuccessSettledAfterTheJobMovedOnIsNotCaught(t *testing.T) {
	running := func() (*story, history.WorkerReport) {
		s := newStory().dispatched("j1", 0, "d0").move("r1/submit", "j1", engine.StateRunning, 0, "d0", "")
		s.stop(s.begin("w1", "j1", 0, "d0"), false)
		return s, s.report("w1", "j1", 0, "d0", sut.Succeeded)
	}
	// Timed out while the handler waited for the job's lock.
	s, r := running()
	s.move("r1/reconciler", "j1", engine.StateTimeout, 0, "d0", "").settle(resultHandler, r, history.SettleAck, true)
	require.Empty(t, only(s.check(), "success_result_kept"))

	// Cancelled first.
	s, r = running()
	s.move("r1/sys.job.cancel#3.1", "j1", engine.StateCancelled, 0, "d0", "").settle(resultHandler, r, history.SettleAck, true)
	require.Empty(t, only(s.check(), "success_result_kept"))

	// A stale dispatch: the job was on its next generation, and ended FAILED there.
	s, second, _ := retried()
	late := s.report("w1", "j1", 0, "d0", sut.Succeeded)
	s.settle(resultHandler, late, history.SettleAck, true)
	s.stop(second, false)
	failed := s.report("w2", "j1", 1, "d1", sut.Failed)
	s.move("r1/sys.job.result#11.1", "j1", engine.StateFailed, 1, "d1", failed.ResultPtr).
		settle("r1/sys.job.result#11.1", failed, history.SettleAck, false)
	require.Empty(t, only(s.check(), "success_result_kept"))
}

// A worker that reported success and then a retryable failure for one
// dispatch (seed 004's teardown error) may see either applied: when the
// failure's message wins (applied and settled at one step), the success is
// stale. Applied by the success's own handler, the move is the finding.
func TestSuccessAppliedAsAnotherOutcome(t *testing.T) {
	build := func(byTheSuccess bool) *story {
		s := newStory().dispatched("j1", 0, "d0").move("r1/submit", "j1", engine.StateRunning, 0, "d0", "")
		s.stop(s.begin("w1", "j1", 0, "d0"), false)
		ok := s.report("w1", "j1", 0, "d0", sut.Succeeded)
		retry := s.report("w1", "j1", 0, "d0", sut.FailedRetryable)
		applied, settledFirst := retry, ok
		if byTheSuccess {
			applied, settledFirst = ok, retry
		}
		s.move("r3/sys.job.result#89.1", "j1", engine.StateRetrying, 1, "d0", ok.ResultPtr).
			settle("r3/sys.job.result#89.1", applied, history.SettleAck, false)
		s.settle("r3/sys.job.result#88.1", settledFirst, history.SettleAck, true)
		return s.move("r3/sys.job.cancel#104.1", "j1", engine.StateCancelled, 1, "d0", ok.ResultPtr)
	}
	require.Empty(t, only(build(false).check(), "success_result_kept"), "the failure's message moved the job")
	v := only(build(true).check(), "success_result_kept")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "r3/sys.job.result#89.1 applied that success as RUNNING -> RETRYING; the job ended CANCELLED")
}

// Two dispatches of one job running at once: a second generation started
// while the first still ran.
func TestConcurrentDispatchesAreCaught(t *testing.T) {
	const name = "no_concurrent_dispatches"
	s := newStory().dispatched("j1", 0, "d0")
	first := s.begin("w1", "j1", 0, "d0")
	s.move("r1/reconciler", "j1", engine.StateRetrying, 1, "d0", "").move("r1/replay", "j1", engine.StateScheduled, 1, "d0", "").
		move("r1/replay", "j1", engine.StateDispatched, 1, "d1", "")
	second := s.begin("w2", "j1", 1, "d1")
	v := only(s.check(), name)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "w2 started dispatch 1 (id d1) at 9s while w1's dispatch 0 (id d0), started at 5s (step 5), was still running")
	require.Equal(t, []string{name}, checkersOf(CheckInvariants(Input{History: &s.h, System: cordumSpec})), "judged mid-run too")

	s.stop(first, false)
	s.stop(second, false)
	v = only(s.check(), name)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "ran until 10s (step 10)")

	// The near miss: the first had stopped (its worker crashed) before the second started.
	s = newStory().dispatched("j1", 0, "d0")
	s.stop(s.begin("w1", "j1", 0, "d0"), true)
	s.move("r1/reconciler", "j1", engine.StateRetrying, 1, "d0", "").move("r1/replay", "j1", engine.StateScheduled, 1, "d0", "").
		move("r1/replay", "j1", engine.StateDispatched, 1, "d1", "")
	s.stop(s.begin("w2", "j1", 1, "d1"), false)
	require.Empty(t, only(s.check(), name))
}

// One stored dispatch run twice at once is not two dispatches (the worker
// layer's, judged by exactly-once); two copies of one generation are, unless
// exactly-once counts them as an uncovered re-publish.
func TestConcurrentCopiesOfOneGeneration(t *testing.T) {
	const name = "no_concurrent_dispatches"
	build := func(secondID string) *story {
		s := newStory().dispatched("j1", 0, "d0").publish("j1", 0, history.PublishFailedStored).publish("j1", 0, history.PublishStored)
		s.begin("w1", "j1", 0, "d0")
		s.begin("w2", "j1", 0, secondID)
		return s
	}
	require.Empty(t, only(build("d0").check(), name), "one dispatch id")
	require.Len(t, only(build("d0b").check(), name), 1, "a de-duplicating broker was assumed: the second copy is the engine's")

	s := build("d0b")
	s.h.End = s.at() + time.Second
	bus := history.BusConfig{Dedup: false}
	r := Check(Input{History: &s.h, Final: s.final, System: cordumSpec, Bus: &bus, Spec: Spec{ExactlyOnceUncovered: true}})
	require.Empty(t, only(r, name), "an uncovered re-publish runs as it comes")
	r = Check(Input{History: &s.h, Final: s.final, System: cordumSpec, Bus: &bus})
	require.Len(t, only(r, name), 1, "without the world's allowance")
}

func checkersOf(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Checker)
	}
	return out
}

// A store that went back to an older copy of the job (a loss of
// acknowledged writes) brings the older record's result pointer back with
// it: that is no result applied.
func TestStoreGoingBackAppliesNoResult(t *testing.T) {
	s, _, retry := retried()
	s.move("store", "j1", engine.StateRetrying, 1, "d0", retry.ResultPtr) // the copy taken before the re-dispatch
	s.h.States[len(s.h.States)-1].ResultPtr = retry.ResultPtr
	s.h.States[len(s.h.States)-2].ResultPtr = ""
	s.h.StoreLosses = []history.StoreLoss{{Step: s.step, Time: s.at(), Jobs: []string{"j1"}}}
	require.Empty(t, only(s.check(), "result_of_current_dispatch"))
	s.h.StoreLosses = nil
	require.Len(t, only(s.check(), "result_of_current_dispatch"), 1, "the same move as a write")
}

// staleRetryInjector makes job j-1's first dispatch report a retryable
// failure twice and holds the second copy back past the replayer's
// re-dispatch, so it reaches the engine while the job runs its next
// dispatch.
type staleRetryInjector struct{ reported, held bool }

func (s *staleRetryInjector) At(p *sim.Point) (sim.Fault, bool) {
	switch {
	case p.JobID != "j-1":
	case p.Kind == history.PointWorker && !s.reported:
		s.reported = true
		return sim.Fault{Kind: "RetryableTwice", Effect: history.EffectRetryableResult, Also: []history.Effect{history.EffectDuplicateResult}}, true
	case p.Kind == history.PointDeliver && p.Subject == engine.SubjectResult && s.reported && !s.held:
		s.held = true
		return sim.Fault{Kind: "DeliveryDelayed", Effect: history.EffectDelay, Duration: 90 * time.Second}, true
	}
	return sim.Fault{}, false
}

// The real engine meets the late copy of a retryable failure while the job
// runs its next dispatch, and ignores it: the contract's checkers stay
// quiet on the engine's history, though it holds the stale result settled
// while the job was on a later generation. (With the engine's stale
// generation check removed, result_of_current_dispatch finds the copy
// applied.)
func TestStaleResultOnTheRealEngineIsIgnored(t *testing.T) {
	inj := &staleRetryInjector{}
	w := sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 3, Injector: inj, Workload: sim.Workload{Jobs: 1},
		Workers: sim.WorkerProfile{JobDurationMin: 100 * time.Second, JobDurationMax: 100 * time.Second}})
	res := w.Run()
	require.NoError(t, res.Err)
	require.True(t, inj.held, "the second copy was held back")
	h := res.History
	var stale *history.Settle
	for i, s := range h.Settles {
		if s.JobID != "j-1" || s.ResultPtr == "" || s.Gen != 0 {
			continue
		}
		on := h.States[0]
		for _, c := range h.States {
			if c.JobID == "j-1" && c.Step <= s.Step && c.Actor != s.Actor {
				on = c
			}
		}
		if on.Gen == 1 && (on.To == w.Spec().Dispatched || on.To == w.Spec().Running) {
			stale = &h.Settles[i]
		}
	}
	require.NotNil(t, stale, "a result of dispatch 0 reached a handler while the job was on dispatch 1")
	r := Check(Input{History: h, Final: res.Final, DLQ: res.DLQ, RunErr: res.Err, System: w.Spec()})
	require.False(t, r.Failed(), r.Summary())
	require.Equal(t, w.Spec().Succeeded, res.Final["j-1"].State)
	require.Equal(t, 1, res.Final["j-1"].Gen)
}

// A system that redispatches after a lease (Spec.RedispatchAfterLease) may
// run a later dispatch beside the earlier one, but only once the later was
// dispatched a whole lease after the earlier: sooner is still a finding, and
// a system that does not declare it is held to no overlap at all.
func TestRedispatchAfterLeaseExcusesOnlyAWholeLease(t *testing.T) {
	const name = "no_concurrent_dispatches"
	lease := cordumSpec.DispatchTimeout
	build := func(wait time.Duration) *story {
		s := newStory().dispatched("j1", 0, "d0")
		s.begin("w1", "j1", 0, "d0")
		s.wait(wait)
		s.move("r1/reaper", "j1", engine.StateRetrying, 1, "d0", "").move("r1/claim", "j1", engine.StateScheduled, 1, "d0", "").
			move("r1/claim", "j1", engine.StateDispatched, 1, "d1", "")
		s.begin("w2", "j1", 1, "d1")
		return s
	}
	check := func(s *story, allow bool) []Violation {
		spec := cordumSpec
		spec.RedispatchAfterLease = allow
		s.h.End = s.at() + time.Second
		return only(Check(Input{History: &s.h, Final: s.final, System: spec}), name)
	}
	require.Empty(t, check(build(lease), true), "dispatched again a whole lease later")
	require.Len(t, check(build(lease-5*time.Second), true), 1, "dispatched again before the lease ran out")
	require.Len(t, check(build(lease), false), 1, "the spec does not allow it")
}

// A report's settle is the handler's final word on that report's own
// message (by its digest); a report without a digest (a hand-made
// history) is known by its job, generation and result pointer.
func TestSuccessIsSettledOnlyByItsOwnMessage(t *testing.T) {
	other := succeededThenTimedOut(history.SettleAck)
	other.h.Settles[0].Message++ // the handler settled some other message of the job
	require.Empty(t, only(other.check(), "success_result_kept"))

	undigested := func(settledGen int) *story {
		s := succeededThenTimedOut(history.SettleAck)
		s.h.Reports[0].Message, s.h.Settles[0].Message, s.h.Settles[0].Gen = 0, 0, settledGen
		return s
	}
	require.Len(t, only(undigested(0).check(), "success_result_kept"), 1)
	require.Empty(t, only(undigested(1).check(), "success_result_kept"), "a settle of another generation")
}

// The result handler took a success, moved the job to RUNNING instead of
// SUCCEEDED, and settled the message in the same step; the job later timed
// out. The finding names how the handler settled and the state its own
// write left the job in.
func TestSuccessSettledWhileRunningNamesTheSettle(t *testing.T) {
	build := func(outcome history.SettleOutcome) *story {
		s := newStory().dispatched("j1", 0, "d0")
		s.stop(s.begin("w1", "j1", 0, "d0"), false)
		r := s.report("w1", "j1", 0, "d0", sut.Succeeded)
		s.move(resultHandler, "j1", engine.StateRunning, 0, "d0", "").settle(resultHandler, r, outcome, false)
		return s.wait(5*time.Minute).move("r1/reconciler", "j1", engine.StateTimeout, 0, "d0", "")
	}
	for outcome, how := range map[history.SettleOutcome]string{history.SettleAck: "acked", history.SettleDrop: "dropped"} {
		v := only(build(outcome).check(), "success_result_kept")
		require.Len(t, v, 1, outcome)
		require.Contains(t, v[0].Message, resultHandler+" "+how+" the result at 8s while the job was RUNNING on that dispatch")
	}
}

// A loss of the job's writes at another step does not make every write of
// the job a restore: the stale result applied before the loss is still the
// engine's finding.
func TestStoreLossElsewhereRestoresNoOtherWrite(t *testing.T) {
	s, second, _ := retried()
	late := s.report("w1", "j1", 0, "d0", sut.Succeeded)
	s.move(resultHandler, "j1", engine.StateSucceeded, 1, "d1", late.ResultPtr).settle(resultHandler, late, history.SettleAck, false)
	s.stop(second, false)
	s.tick()
	s.h.StoreLosses = append(s.h.StoreLosses, history.StoreLoss{Step: s.step, Time: s.at(), Jobs: []string{"j1"}})
	v := only(s.check(), "result_of_current_dispatch")
	require.Len(t, v, 1)
	require.Equal(t, LayerInvariants, v[0].Layer, "the loss came after the write")
}

// A report justifies only the pointer it carries: the current dispatch's
// own report does not excuse a write of a stale dispatch's pointer, even
// when the writer's message is unknown.
func TestReportOfTheCurrentDispatchJustifiesOnlyItsPointer(t *testing.T) {
	s, second, _ := retried()
	s.stop(second, false)
	s.report("w2", "j1", 1, "d1", sut.FailedRetryable)
	stale := s.report("w1", "j1", 0, "d0b", sut.Succeeded)
	s.move("r1/sys.job.result#3.1", "j1", engine.StateSucceeded, 1, "d1", stale.ResultPtr)
	v := only(s.check(), "result_of_current_dispatch")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `on result "mem://j1/d0b": w1's succeeded of dispatch 0 (id d0b)`)
}

// A later dispatch entered DISPATCHED exactly a lease after the earlier one
// did: a whole lease, so a system that redispatches after a lease may run
// them side by side.
func TestRedispatchExactlyALeaseLaterIsExcused(t *testing.T) {
	s := newStory().dispatched("j1", 0, "d0")
	s.begin("w1", "j1", 0, "d0")
	s.wait(cordumSpec.DispatchTimeout - 4*time.Second)
	s.move("r1/reaper", "j1", engine.StateRetrying, 1, "d0", "").move("r1/claim", "j1", engine.StateScheduled, 1, "d0", "").
		move("r1/claim", "j1", engine.StateDispatched, 1, "d1", "")
	s.begin("w2", "j1", 1, "d1")
	require.Equal(t, cordumSpec.DispatchTimeout, s.h.States[len(s.h.States)-1].Time-s.h.States[2].Time)
	spec := cordumSpec
	spec.RedispatchAfterLease = true
	s.h.End = s.at() + time.Second
	require.Empty(t, only(Check(Input{History: &s.h, Final: s.final, System: spec}), "no_concurrent_dispatches"))
}

// Without a message digest on both sides, a success's pointer written by a
// handler is that success applied when the dispatch reported nothing else:
// whichever side's digest is missing, the handler that moved the job to
// RETRYING on the success's pointer applied the success.
func TestSuccessAppliedWhenADigestIsUnknown(t *testing.T) {
	build := func(handlerKnown, reportKnown bool) *story {
		s := newStory().dispatched("j1", 0, "d0").move("r1/submit", "j1", engine.StateRunning, 0, "d0", "")
		s.stop(s.begin("w1", "j1", 0, "d0"), false)
		ok := s.report("w1", "j1", 0, "d0", sut.Succeeded)
		if !reportKnown {
			s.h.Reports[len(s.h.Reports)-1].Message, ok.Message = 0, 0
		}
		s.move("r3/sys.job.result#89.1", "j1", engine.StateRetrying, 1, "d0", ok.ResultPtr).
			settle("r3/sys.job.result#89.1", ok, history.SettleAck, false)
		if !handlerKnown {
			s.h.Settles[len(s.h.Settles)-1].Message = 0
			s.settle("r3/sys.job.result#90.1", ok, history.SettleAck, true)
		}
		return s.move("r3/sys.job.cancel#104.1", "j1", engine.StateCancelled, 1, "d0", ok.ResultPtr)
	}
	for _, known := range [][2]bool{{false, true}, {true, false}} {
		v := only(build(known[0], known[1]).check(), "success_result_kept")
		require.Len(t, v, 1, "handler's digest known %v, report's %v", known[0], known[1])
		require.Contains(t, v[0].Message, "r3/sys.job.result#89.1 applied that success as RUNNING -> RETRYING")
	}
}

// success_result_kept judges a success that carried a result, of a job the
// store held at the end, once per job: a success with no result pointer has
// nothing to keep, a job the store never held is no_job_lost's, and two
// thrown-away successes of one job are one finding.
func TestSuccessKeptJudgesResultsOfHeldJobsOncePerJob(t *testing.T) {
	noPointer := succeededThenTimedOut(history.SettleAck)
	noPointer.h.Reports[0].ResultPtr, noPointer.h.Settles[0].ResultPtr = "", ""
	require.Empty(t, only(noPointer.check(), "success_result_kept"))

	notHeld := succeededThenTimedOut(history.SettleAck)
	delete(notHeld.final, "j1")
	require.Empty(t, only(notHeld.check(), "success_result_kept"))

	twice := newStory().dispatched("j1", 0, "d0").move("r1/submit", "j1", engine.StateRunning, 0, "d0", "")
	twice.stop(twice.begin("w1", "j1", 0, "d0"), false)
	for _, id := range []string{"d0", "d0-again"} {
		r := twice.report("w1", "j1", 0, id, sut.Succeeded)
		twice.settle("r2/sys.job.result#7.1", r, history.SettleAck, true)
	}
	twice.wait(5*time.Minute).move("r1/reconciler", "j1", engine.StateTimeout, 0, "d0", "")
	require.Len(t, only(twice.check(), "success_result_kept"), 1)
}

// An uncovered re-publish needs a re-publish: a generation the broker
// stored once has no second copy to excuse, so two dispatch ids of it
// running at once are the engine's, even where nothing de-duplicates.
func TestOneStoredCopyIsNoUncoveredRepublish(t *testing.T) {
	s := newStory().dispatched("j1", 0, "d0").publish("j1", 0, history.PublishStored)
	s.begin("w1", "j1", 0, "d0")
	s.begin("w2", "j1", 0, "d0b")
	s.h.End = s.at() + time.Second
	bus := history.BusConfig{Dedup: false}
	r := Check(Input{History: &s.h, Final: s.final, System: cordumSpec, Bus: &bus, Spec: Spec{ExactlyOnceUncovered: true}})
	require.Len(t, only(r, "no_concurrent_dispatches"), 1)
}

// A write that keeps the record's old pointer applies a result only when
// its writer was handling that result: a handler of the current dispatch's
// report that moves the job and keeps the stale dispatch's pointer applied
// nothing of the stale dispatch.
func TestKeptPointerAppliesNoOtherResult(t *testing.T) {
	s, second, retry := retried()
	s.stop(second, false)
	own := s.report("w2", "j1", 1, "d1", sut.FailedRetryable)
	s.move(resultHandler, "j1", engine.StateRunning, 1, "d1", retry.ResultPtr).settle(resultHandler, own, history.SettleAck, false)
	require.Empty(t, only(s.check(), "result_of_current_dispatch"))
}
