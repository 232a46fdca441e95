package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
)

func TestWorldRunsJobsToTheEndWithoutFaults(t *testing.T) {
	w := NewWorld(Config{Seed: 1, KeepTrace: true})
	res := w.Run()
	require.NoError(t, res.Err)
	succeeded := 0
	for _, h := range res.Final {
		if h["state"] == string(engine.StateSucceeded) {
			succeeded++
		}
	}
	require.Equal(t, 50, succeeded, "trace tail:\n%s", tail(w.Trace().Bytes(), 40))
	require.Len(t, res.History.Executions, 50)
	t.Logf("steps=%d lines=%d redis=%+v end=%s", res.Steps, w.Trace().Lines(), res.History.Redis, fmtTime(res.History.End))
}
