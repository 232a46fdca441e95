package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTransitionTableEnforcedInStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		for _, from := range AllStates {
			for _, to := range AllStates {
				id := "j-" + string(from) + "-" + string(to)
				te.putJob(t, id, from)
				before := te.job(t, id)
				_, err := te.store.Transition(ctx, Transition{JobID: id, From: from, To: to})
				if TransitionAllowed(from, to) {
					require.NoError(t, err, "%s -> %s", from, to)
					require.Equal(t, to, te.state(t, id))
					continue
				}
				var terr *TransitionError
				require.ErrorAs(t, err, &terr, "%s -> %s must be refused", from, to)
				if from.Terminal() {
					require.Equal(t, RefusedTerminal, terr.Reason)
				} else {
					require.Equal(t, RefusedForbidden, terr.Reason)
				}
				require.Equal(t, before, te.job(t, id), "a refused transition changes nothing")
			}
		}
	})
}

func TestTransitionBookkeeping(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		s := te.store
		r, err := s.Transition(ctx, Transition{JobID: "j", From: "", To: StatePending, Reason: "submit",
			Fields: []Field{{"topic", "default"}, {"tenant", "acme"}}})
		require.NoError(t, err)
		require.EqualValues(t, 1, r.Version)

		_, err = s.Transition(ctx, Transition{JobID: "j", From: StatePending, Version: 99, To: StateScheduled})
		var terr *TransitionError
		require.ErrorAs(t, err, &terr)
		require.Equal(t, RefusedStale, terr.Reason, "wrong version")
		_, err = s.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched})
		require.ErrorAs(t, err, &terr)
		require.Equal(t, RefusedStale, terr.Reason, "wrong state")
		require.Equal(t, StatePending, terr.Actual)

		te.env.clock.Advance(1000)
		r, err = s.Transition(ctx, Transition{JobID: "j", From: StatePending, Version: 1, To: StateScheduled})
		require.NoError(t, err)
		require.Equal(t, 1, r.Attempts)
		r, err = s.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateScheduled})
		require.NoError(t, err)
		require.Equal(t, 2, r.Attempts, "every scheduling pass counts")
		_, err = s.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched})
		require.NoError(t, err)

		n, err := s.TenantActive(ctx, "acme")
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		now, err := s.Now(ctx)
		require.NoError(t, err)
		ids, err := s.StaleJobs(ctx, StateDispatched, now, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"j"}, ids)
		ids, err = s.StaleJobs(ctx, StateScheduled, now, 10)
		require.NoError(t, err)
		require.Empty(t, ids, "left the SCHEDULED index")

		r, err = s.Transition(ctx, Transition{JobID: "j", From: StateDispatched, To: StateRetrying})
		require.NoError(t, err)
		require.Equal(t, 1, r.DispatchGen)
		n, err = s.TenantActive(ctx, "acme")
		require.NoError(t, err)
		require.Zero(t, n)

		ev, err := s.Events(ctx, "j")
		require.NoError(t, err)
		require.Len(t, ev, 5)
		require.True(t, strings.HasSuffix(ev[0], "||PENDING|submit"), ev[0])
		require.Contains(t, ev[4], "|DISPATCHED|RETRYING|")
	})
}

// A transition carrying a lock token applies only while that token holds the lock.
func TestTransitionFencedByLockToken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j", StateScheduled)
		mine := &heldLock{key: jobLockKey("j"), token: "mine"}
		require.NoError(t, env.rdb.Set(ctx, mine.key, "someone-else", 0).Err())

		_, err := te.store.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched, Fence: mine})
		var terr *TransitionError
		require.ErrorAs(t, err, &terr)
		require.Equal(t, RefusedFenced, terr.Reason)
		require.Equal(t, StateScheduled, te.state(t, "j"))

		require.NoError(t, env.rdb.Set(ctx, mine.key, "mine", 0).Err())
		_, err = te.store.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched, Fence: mine})
		require.NoError(t, err)
	})
}

func TestTerminalStateAndDLQEntryAreAtomic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j", StateRunning)
		entry := &DLQEntry{JobID: "j", Status: StateFailed, ReasonCode: ReasonJobFailed, LastState: StateRunning}
		te.hook.add(transitionTo(StateFailed), false, 1)
		_, err := te.store.Transition(ctx, Transition{JobID: "j", From: StateRunning, To: StateFailed, DLQ: entry})
		require.ErrorIs(t, err, errInjected)
		_, err = te.store.DLQEntry(ctx, "j")
		require.ErrorIs(t, err, ErrJobNotFound, "no DLQ entry without the state")

		_, err = te.store.Transition(ctx, Transition{JobID: "j", From: StateRunning, To: StateFailed, DLQ: entry})
		require.NoError(t, err)
		got, err := te.store.DLQEntry(ctx, "j")
		require.NoError(t, err)
		require.Equal(t, *entry, *got)
	})
}
