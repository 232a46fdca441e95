package checker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
)

const payload = `{"input":"k1"}`

// startRun adds a run start by client that got status (and runID or a 409
// reason as output); unknown marks a lost reply.
func (s *story) startRun(client int, key string, status int, output string, unknown bool) *story {
	call := s.tick()
	callAt := s.at()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: client, Kind: history.OpStartRun, Key: key, Input: payload,
		Status: status, Output: output, Call: callAt, Return: s.at(), CallStep: call, RetStep: ret, Unknown: unknown})
	return s
}

// wait moves the story's clock on by d without a step of its own.
func (s *story) wait(d time.Duration) *story {
	s.step += uint64(d / time.Second)
	return s
}

func (s *story) checkAdmission(snap history.AdmissionSnapshot) *Result {
	s.h.End = s.at() + time.Second
	if snap.StaleAfter == 0 {
		snap.StaleAfter = 20 * time.Second
	}
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Admission: snap, System: cordumSpec})
}

const runA, runB = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"

// Lost replies, 429s, a 409 while another start holds the key, and replays of
// one run: legal.
func TestLegalRunAdmissionPasses(t *testing.T) {
	s := newStory().
		startRun(1, "k1", 0, "", true).                          // reply lost: may have reserved
		startRun(1, "k1", 409, history.RunReplyInFlight, false). // its reservation is still fresh
		startRun(2, "k2", 429, "", false).
		wait(30*time.Second).
		startRun(1, "k1", 200, runA, false).
		startRun(3, "k1", 200, runA, false).
		startRun(2, "k2", 200, runB, false)
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.False(t, r.Failed(), r.Summary())
	require.Len(t, r.Partitions, 2)
	require.Equal(t, "run", r.Partitions[0].Kind)
}

// Two 200s for one key name different runs: the register was set twice.
func TestTwoRunsForOneKeyAreNotLinearizable(t *testing.T) {
	s := newStory().startRun(1, "k1", 200, runA, false).startRun(2, "k1", 200, runB, false)
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.Equal(t, []string{"run_admission"}, checkers(r))
	require.Equal(t, LinIllegal, r.Linearizability)
}

// Seed 002's defect: the 429 path kept its reservation, so the retry finds the
// key "in flight" with nobody holding it.
func TestKeyBlockedAfter429IsCaught(t *testing.T) {
	s := newStory().startRun(1, "k1", 429, "", false).wait(5*time.Second).
		startRun(1, "k1", 409, history.RunReplyInFlight, false).wait(5*time.Second).
		startRun(1, "k1", 409, history.RunReplyInFlight, false).wait(30*time.Second).
		startRun(1, "k1", 200, runA, false)
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.Equal(t, []string{"run_key_blocked"}, checkers(r), "one violation per key")
	require.Contains(t, r.Violations[0].Message, "(2 such replies)")
	require.Equal(t, LayerLiveness, r.Violations[0].Layer)
}

// A fault on the key's cleanup is the admitted residual risk: not a violation.
func TestKeyBlockedByFailedCleanupIsExcused(t *testing.T) {
	s := newStory().startRun(1, "k1", 429, "", false)
	s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Kind: "AdmissionWriteFailsBeforeApply",
		Target: "evalsha:eeee wf:run:idempotency:k1"})
	s.wait(5*time.Second).startRun(1, "k1", 409, history.RunReplyInFlight, false).wait(30*time.Second).
		startRun(1, "k1", 200, runA, false)
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.False(t, r.Failed(), r.Summary())
}

func TestKeyNeverAdmittedAfter429IsCaught(t *testing.T) {
	s := newStory().startRun(1, "k1", 429, "", false).startRun(1, "k1", 429, "", false).startRun(1, "k1", 0, "", true)
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.Equal(t, []string{"run_key_never_admitted"}, checkers(r))
	// Named at the first refusal no retry settled, with every try since.
	require.Contains(t, r.Violations[0].Message, "turned away with 429 at step 2 and no retry got an answer that settles it (3 tries)")

	// A reply that settled the key earlier is no part of it.
	s = newStory().startRun(1, "k1", 409, history.RunReplyMismatch, false).startRun(1, "k1", 429, "", false).
		startRun(1, "k1", 429, "", false)
	v := only(s.checkAdmission(history.AdmissionSnapshot{}), "run_key_never_admitted")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "turned away with 429 at step 4 and no retry got an answer that settles it (2 tries)")
}

// A 500 turns a key away as any 5xx does (and, with no fault behind it, is
// a finding of its own).
func TestKeyNeverAdmittedAfter500IsCaught(t *testing.T) {
	s := newStory().startRun(1, "k1", 500, "", true).startRun(1, "k1", 500, "", true)
	require.Len(t, only(s.checkAdmission(history.AdmissionSnapshot{}), "run_key_never_admitted"), 1)
}

// A start with no answer may hold the key until its client gave up on it
// (RunRequestTimeout) and a stale period after: a 409 in flight in that
// time is legal, one after it is a blocked key. A fault on another key
// excuses nothing.
func TestLostStartHoldsTheKeyForTimeoutAndStalePeriod(t *testing.T) {
	blockedAfter := func(gap time.Duration, faultOn string) []string {
		s := newStory().startRun(1, "k1", 0, "", true)
		if faultOn != "" {
			s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Kind: "AdmissionWriteFailsBeforeApply",
				Target: "evalsha:eeee wf:run:idempotency:" + faultOn})
		}
		s.wait(gap).startRun(2, "k1", 409, history.RunReplyInFlight, false).wait(30*time.Second).startRun(2, "k1", 200, runA, false)
		return checkers(s.checkAdmission(history.AdmissionSnapshot{}))
	}
	require.Empty(t, blockedAfter(25*time.Second, ""), "10s timeout + 20s stale period: still held")
	require.Equal(t, []string{"run_key_blocked"}, blockedAfter(40*time.Second, ""))
	require.Equal(t, []string{"run_key_blocked"}, blockedAfter(40*time.Second, "k2"))
}

// Two intents for one key (another org, or another workflow, the same body)
// cannot both be admitted as one run; the same intent written with other
// whitespace is the same intent.
func TestOneKeyAdmittedForTwoIntentsIsNotLinearizable(t *testing.T) {
	judge := func(orgB, workflowB, bodyB string) []string {
		s := newStory().start(1, "org-1", "", "k1", body, 200, runA).start(2, orgB, "", "k1", bodyB, 200, runA)
		s.h.Ops[1].Workflow = workflowB
		return checkersOf(only(s.checkAdmission(history.AdmissionSnapshot{}), "run_admission"))
	}
	require.Equal(t, []string{"run_admission"}, judge("org-2", "", body), "another org")
	require.Empty(t, judge("org-1", "", "{ \"input\": \"key-1\" }"), "the same body, spaced out")

	s := newStory().start(1, "", "wf-1", "k1", body, 200, runA).start(2, "", "wf-2", "k1", body, 200, runA)
	require.Equal(t, []string{"run_admission"}, checkersOf(only(s.checkAdmission(history.AdmissionSnapshot{}), "run_admission")),
		"another workflow")
}

// A reservation whose run never came to exist, long past the stale period and a
// sweep, is a poisoned key; a fresh one is in flight.
func TestReservationWithoutRunIsCaught(t *testing.T) {
	s := newStory().wait(100 * time.Second)
	snap := history.AdmissionSnapshot{
		Keys:     map[string]string{"old": runA + "|fp", "fresh": runB + "|fp"},
		Reserved: map[string]time.Duration{"old": 10 * time.Second, "fresh": 90 * time.Second},
		Runs:     map[string]map[string]string{},
	}
	r := s.checkAdmission(snap)
	require.Equal(t, []string{"run_key_reserved_without_run"}, checkers(r))
	require.Equal(t, "old", r.Violations[0].Job)
	require.Contains(t, r.Violations[0].Message, "1m31s after the reservation")

	// A stale period and a sweep (2 x 20s) is the most a reservation may outlive its run's absence.
	snap.Reserved["old"] = s.at() + time.Second - 40*time.Second
	require.False(t, s.checkAdmission(snap).Failed(), "reserved exactly a stale period and a sweep ago")
	snap.Reserved["old"] = 10 * time.Second

	snap.Runs[runA] = map[string]string{"status": "RUNNING"}
	require.False(t, s.checkAdmission(snap).Failed(), "a reservation whose run exists is bound, not poisoned")
}

// A replica that reports a fail-closed read without any failed read of a job is
// lying about itself; one failed read covers one fail-closed decision.
func TestFailClosedCountBeyondFailedReadsIsCaught(t *testing.T) {
	reg := prometheus.NewRegistry()
	failClosed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scheduler_state_read_fail_closed_total"}, []string{"topic"})
	published := prometheus.NewCounter(prometheus.CounterOpts{Name: "scheduler_dispatch_published_total"})
	reg.MustRegister(failClosed, published)
	failClosed.WithLabelValues("default").Inc()
	published.Inc() // the story's one dispatch

	s := newStory().dispatch("j1")
	s.h.End = s.at() + time.Second
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Metrics: []prometheus.Gatherer{reg}, System: cordumSpec})
	require.Equal(t, []string{"metrics"}, checkers(r))

	s.h.Redis.FailedJobReads = 1
	r = Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Metrics: []prometheus.Gatherer{reg}, System: cordumSpec})
	require.False(t, r.Failed(), r.Summary())
}

// A key turned away by a busy or failing admission must be settled by a
// retry too; a refusal another try would get again (a mismatch) settles it.
func TestKeyNeverSettledAfter503IsCaught(t *testing.T) {
	s := newStory().startRun(1, "k1", 503, "", true).startRun(1, "k1", 503, "", true)
	for i := range s.h.Ops {
		s.h.Ops[i].Return += 2 * time.Second // each waited for its turn, then gave up
	}
	r := s.checkAdmission(history.AdmissionSnapshot{})
	require.Equal(t, []string{"run_key_never_admitted"}, checkers(r))
	require.Contains(t, r.Violations[0].Message, "turned away with 503")

	s = newStory().startRun(1, "k1", 503, "", true).startRun(1, "k1", 409, history.RunReplyMismatch, false)
	s.h.Ops[0].Return += 2 * time.Second
	r = s.checkAdmission(history.AdmissionSnapshot{})
	require.NotContains(t, checkers(r), "run_key_never_admitted", r.Summary())
}
