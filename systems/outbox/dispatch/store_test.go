package dispatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The Lua transition script and the Go table agree on every edge, and a
// refused edge writes nothing.
func TestStoreEnforcesTransitionTable(t *testing.T) {
	froms := append([]JobState{""}, AllStates...)
	for _, from := range froms {
		for _, to := range AllStates {
			env := newTestEnv(t)
			r := env.replica(t)
			if from != "" {
				putJob(t, r, "j1", from)
			}
			before := env.mr.HGet(JobKey("j1"), "version")
			_, err := r.store.Transition(ctx, Transition{JobID: "j1", From: from, To: to})
			if TransitionAllowed(from, to) {
				require.NoError(t, err, "%q -> %s", from, to)
				require.Equal(t, to, r.state(t, "j1"))
				continue
			}
			require.True(t, IsTransitionRefused(err), "%q -> %s: %v", from, to, err)
			require.Equal(t, before, env.mr.HGet(JobKey("j1"), "version"), "%q -> %s", from, to)
		}
	}
	require.False(t, TransitionAllowed(StateDispatched, StateScheduled), "no rollback edge in this design")
}

// Every write of SCHEDULED counts an attempt; RETRYING counts a dispatch generation.
func TestAttemptsAndGenerations(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	putJob(t, r, "j1", StateRetrying)
	job := r.job(t, "j1")
	require.Equal(t, 1, job.Attempts)
	require.Equal(t, 1, job.DispatchGen)
	res, err := r.store.Transition(ctx, Transition{JobID: "j1", From: StateRetrying, Version: job.Version, To: StateScheduled})
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts)
	events, err := r.store.Events(ctx, "j1")
	require.NoError(t, err)
	require.Len(t, events, 5)
}
