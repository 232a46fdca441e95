package checker

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// withoutTopic submits job with no topic, a request the system must refuse.
func (s *story) withoutTopic(job string) *story {
	s.submit(job)
	s.h.Submitted[len(s.h.Submitted)-1].Topic = ""
	return s
}

// A request without a topic fails at once with the invalid-request reason,
// or is cancelled by its client first: both legal. Taken on as a job, it is
// caught at its first move and by the reason it fails with.
func TestRequestWithoutATopicMustBeRefused(t *testing.T) {
	s := newStory().withoutTopic("j1").commit("j1", engine.StateFailed)
	s.dead("j1", dlqEntry(engine.StateFailed, "", engine.ReasonInvalidRequest))
	require.Empty(t, s.check().Violations, "the legal shape")
	require.Empty(t, newStory().withoutTopic("j1").commit("j1", engine.StateCancelled).check().Violations, "cancelled first")

	// Scheduled like any job, its topic mapped to no pool: it fails after
	// the grace window with a routing reason.
	s = newStory().withoutTopic("j1")
	s.h.Routing = []history.RoutingChange{{Routing: generalOnly}}
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).wait(time.Minute).commit("j1", engine.StateFailed)
	s.dead("j1", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonNoPoolMappingTopic))
	r := s.check()
	v := only(r, "invalid_request_refused")
	require.Len(t, v, 1, "one finding, at the first move")
	require.Equal(t, uint64(2), v[0].Step)
	require.Contains(t, v[0].Message, "taken on instead of failed with invalid_request: <none> -> PENDING, PENDING -> SCHEDULED")
	v = only(r, "dlq_true_cause")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "reason no_pool_mapping_topic for a job submitted without a topic; true cause invalid_request")
	got := checkers(r)
	sort.Strings(got)
	require.Equal(t, []string{"dlq_true_cause", "invalid_request_refused"}, got, "nothing else: %s", r.Summary())

	// Dispatched and run: the publish is a finding of its own.
	s = newStory().withoutTopic("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishStored).commit("j1", engine.StateRunning).
		execute("j1", 0, "d-j1").commit("j1", engine.StateSucceeded)
	v = only(s.check(), "invalid_request_refused")
	require.Len(t, v, 2)
	require.Contains(t, v[1].Message, "dispatched by  (message jobreq:j1) and executed 1 times")
}

// The invalid-request reason on a job that had a topic is no true cause.
func TestInvalidRequestReasonForAJobWithATopicIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StateFailed)
	s.dead("j1", dlqEntry(engine.StateFailed, "", engine.ReasonInvalidRequest))
	v := only(s.check(), "dlq_true_cause")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `reason invalid_request for a job submitted on topic "default"`)
}
