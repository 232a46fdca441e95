package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// publishAs is a dispatch publish under an explicit message id.
func (s *story) publishAs(job string, gen int, msgID string, outcome history.PublishOutcome) *story {
	s.tick()
	s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Subject: "worker.w1.jobs",
		MsgID: msgID, JobID: job, Gen: gen, Dispatch: true, Outcome: outcome})
	return s
}

// ambiguousThenRepublished is seed 103661's shape: the first publish is stored
// but reported failed, the job rolls back, the worker runs that copy, and the
// job is re-published under the same message id after gap.
func ambiguousThenRepublished(gap time.Duration, second history.PublishOutcome) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishFailedStored).
		commit("j1", engine.StateScheduled).execute("j1", 0, "d-1")
	s.wait(gap).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).publish("j1", 0, second)
	if second == history.PublishStored {
		s.execute("j1", 0, "d-2")
	}
	return s.commit("j1", engine.StateRunning).commit("j1", engine.StateSucceeded)
}

func (s *story) checkWithBus(bus *history.BusConfig) *Result {
	s.h.End = s.at() + time.Second
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Bus: bus, System: cordumSpec})
}

// dedupLayers lists each violation's checker and the layer it blames.
func dedupLayers(r *Result) []string {
	var out []string
	for _, v := range r.Violations {
		if !strings.HasPrefix(v.Checker, "exactly_once") {
			continue
		}
		out = append(out, v.Checker+": "+string(v.Dedup))
	}
	return out
}

var jetStream = &history.BusConfig{Dedup: true, DedupWindow: 2 * time.Minute}

// Seed 103661: the same message id re-published 128.8s after the stored copy,
// past a 2m window: the broker's window was exceeded.
func TestRepublishPastBrokerWindowBlamesTheWindow(t *testing.T) {
	s := ambiguousThenRepublished(129*time.Second, history.PublishStored)
	require.Equal(t, []string{"exactly_once_publish: broker window exceeded", "exactly_once_execution: broker window exceeded"},
		dedupLayers(s.checkWithBus(jetStream)))
	require.Contains(t, s.checkWithBus(jetStream).Violations[0].Message, "past the broker's 2m0s window")

	// The window is the world's: a 3m broker window would have dropped it, so
	// a stored copy there is the broker breaking its own contract.
	wide := &history.BusConfig{Dedup: true, DedupWindow: 3 * time.Minute}
	require.Equal(t, []string{"exactly_once_publish: broker", "exactly_once_execution: broker"},
		dedupLayers(s.checkWithBus(wide)))

	// Without the broker's config the default window is assumed.
	require.Equal(t, []string{"exactly_once_publish: broker window exceeded", "exactly_once_execution: broker window exceeded"},
		dedupLayers(s.checkWithBus(nil)))
}

// With no de-duplication at the broker, a re-publish while the first copy is
// live is the engine's ordering, however soon it came.
func TestRepublishWithoutBrokerDedupBlamesEngineOrdering(t *testing.T) {
	s := ambiguousThenRepublished(5*time.Second, history.PublishStored)
	require.Equal(t, []string{"exactly_once_publish: engine ordering", "exactly_once_execution: engine ordering"},
		dedupLayers(s.checkWithBus(&history.BusConfig{Dedup: false})))
	require.Equal(t, []string{"exactly_once_publish: engine ordering", "exactly_once_execution: engine ordering"},
		dedupLayers(s.checkWithBus(nil)), "a copy stored inside the default window means no de-duplication")
}

// A second message id for one dispatch generation defeats any broker window.
func TestSecondMessageIDForOneDispatchBlamesEngineOrdering(t *testing.T) {
	s := newStory().dispatch("j1").publishAs("j1", 0, "jobreq:j1:again", history.PublishStored).execute("j1", 0, "d-2")
	r := s.checkWithBus(jetStream)
	require.Equal(t, []string{"exactly_once_publish: engine ordering", "exactly_once_execution: engine ordering"}, dedupLayers(r))
	require.Contains(t, r.Violations[0].Message, "second id jobreq:j1:again")
}

// One stored message executed twice: where workers promise a durable
// idempotent consumer, the worker failed to de-duplicate. Where their memory
// lasts a process lifetime (the default), a restart the history does not
// record may explain it, so it is a measured figure, not a finding.
func TestOneStoredMessageExecutedTwiceBlamesTheWorker(t *testing.T) {
	s := newStory().dispatch("j1").execute("j1", 0, "d-j1")
	s.h.End = s.at() + time.Second
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Bus: jetStream, Spec: Spec{WorkersDedupDurably: true}, System: cordumSpec})
	require.Equal(t, []string{"exactly_once_execution: worker"}, dedupLayers(r))
	require.Contains(t, r.Violations[0].Message, "from one stored message (dispatch id d-j1")
	require.Equal(t, 1, r.Figures.DuplicateExecutions)

	r = s.checkWithBus(jetStream)
	require.Empty(t, r.Violations, r.Summary())
	require.Equal(t, 1, r.Figures.DuplicateExecutions)
}

// The legal shape of an ambiguous publish: the re-publish inside the window is
// dropped by the broker, the job runs once.
func TestRepublishInsideBrokerWindowIsLegal(t *testing.T) {
	s := ambiguousThenRepublished(60*time.Second, history.PublishDeduplicated)
	r := s.checkWithBus(jetStream)
	require.Empty(t, r.Violations, r.Summary())
	require.Empty(t, s.checkWithBus(nil).Violations)
}

// A system whose spec promises a durable consumer is held to it without the
// scenario saying so.
func TestDurableWorkerDedupComesFromTheSystemSpec(t *testing.T) {
	s := newStory().dispatch("j1").execute("j1", 0, "d-j1")
	s.h.End = s.at() + time.Second
	durable := cordumSpec
	durable.WorkersDedupDurably = true
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Bus: jetStream, System: durable})
	require.Equal(t, []string{"exactly_once_execution: worker"}, dedupLayers(r))
}

// Where no de-duplication layer covers a re-dispatch, the repeat that follows
// an ambiguous publish is measured, not a finding; only that repeat.
func TestUncoveredRepublishIsExcusedOnlyAfterAnAmbiguousPublish(t *testing.T) {
	noDedup := &history.BusConfig{Dedup: false}
	s := ambiguousThenRepublished(5*time.Second, history.PublishStored)
	s.h.End = s.at() + time.Second
	r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Bus: noDedup, System: cordumSpec,
		Spec: Spec{ExactlyOnceUncovered: true}})
	require.Empty(t, dedupLayers(r), r.Summary())
	require.Equal(t, 1, r.Figures.UncoveredRepublishes)

	clean := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishStored).publish("j1", 0, history.PublishStored).
		commit("j1", engine.StateRunning).commit("j1", engine.StateSucceeded)
	clean.h.End = clean.at() + time.Second
	r = Check(Input{History: &clean.h, Final: clean.final, DLQ: clean.dlq, Bus: noDedup, System: cordumSpec,
		Spec: Spec{ExactlyOnceUncovered: true}})
	require.Equal(t, []string{"exactly_once_publish: engine ordering"}, dedupLayers(r), "no fault made the first outcome unknown")
}

// World-swarm seed 600093: the re-publish went to another worker's subject.
// Deployed with a stream per subject, that copy was in a window of its own,
// which the broker rightly kept: the engine's ordering, not the broker's. In
// one stream for both subjects, the broker should have dropped it.
func TestRepublishToAnotherStreamBlamesEngineOrdering(t *testing.T) {
	s := ambiguousThenRepublished(5*time.Second, history.PublishStored)
	for i := range s.h.Publishes {
		if i > 0 {
			s.h.Publishes[i].Subject = "worker.w2.jobs"
		}
	}
	split := &history.BusConfig{Dedup: true, DedupWindow: 2 * time.Minute, SplitStreams: true}
	r := s.checkWithBus(split)
	require.Equal(t, []string{"exactly_once_publish: engine ordering", "exactly_once_execution: engine ordering"}, dedupLayers(r))
	require.Contains(t, r.Violations[0].Message, "to worker.w2.jobs on stream ALL/worker.w2.jobs: the copy on stream ALL/worker.w1.jobs")
	require.Equal(t, []string{"exactly_once_publish: broker", "exactly_once_execution: broker"},
		dedupLayers(s.checkWithBus(jetStream)), "one stream holds both subjects")
}
