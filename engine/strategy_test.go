package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPickLeastLoaded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	routing := &Routing{
		Topics: map[string][]string{"t": {"a", "b"}, "gpu": {"g"}},
		Pools:  map[string]Pool{"a": {}, "b": {}, "g": {Requires: []string{"GPU", "Fp16"}}},
	}
	hb := func(id, pool string, active, maxPar int, cpu, gpu float64) Heartbeat {
		return Heartbeat{WorkerID: id, Pool: pool, Active: active, MaxParallel: maxPar, CPU: cpu, GPU: gpu}
	}
	cases := []struct {
		name    string
		workers []Heartbeat
		stale   []Heartbeat
		req     JobRequest
		want    string
		wantErr error
		code    ReasonCode
	}{
		{name: "lowest score wins", workers: []Heartbeat{hb("w2", "a", 2, 10, 0, 0), hb("w1", "b", 1, 10, 50, 0)},
			req: JobRequest{Topic: "t"}, want: "w1"},
		{name: "ties broken by worker id", workers: []Heartbeat{hb("w9", "a", 1, 10, 0, 0), hb("w3", "b", 1, 10, 0, 0), hb("w5", "a", 1, 10, 0, 0)},
			req: JobRequest{Topic: "t"}, want: "w3"},
		{name: "load ratio 0.9 is overloaded", workers: []Heartbeat{hb("w1", "a", 9, 10, 0, 0), hb("w2", "a", 8, 10, 0, 0)},
			req: JobRequest{Topic: "t"}, want: "w2"},
		{name: "cpu 90 is overloaded", workers: []Heartbeat{hb("w1", "a", 0, 10, 90, 0), hb("w2", "a", 5, 10, 0, 0)},
			req: JobRequest{Topic: "t"}, want: "w2"},
		{name: "all overloaded", workers: []Heartbeat{hb("w1", "a", 0, 10, 0, 95)},
			req: JobRequest{Topic: "t"}, wantErr: ErrPoolOverloaded, code: ReasonPoolOverloaded},
		{name: "preferred pool narrows", workers: []Heartbeat{hb("w1", "a", 0, 10, 0, 0), hb("w2", "b", 5, 10, 0, 0)},
			req: JobRequest{Topic: "t", PreferredPool: "b"}, want: "w2"},
		{name: "preferred pool not mapped", workers: []Heartbeat{hb("w1", "a", 0, 10, 0, 0)},
			req: JobRequest{Topic: "t", PreferredPool: "g"}, wantErr: ErrNoPoolMapping, code: ReasonNoPoolMappingPreferred},
		{name: "topic unmapped", req: JobRequest{Topic: "nope"}, wantErr: ErrNoPoolMapping, code: ReasonNoPoolMappingTopic},
		{name: "requires case-insensitive", workers: []Heartbeat{hb("g1", "g", 0, 4, 0, 0)},
			req: JobRequest{Topic: "gpu", Requires: []string{"gpu"}}, want: "g1"},
		{name: "pool without requires rejects a job with some", workers: []Heartbeat{hb("w1", "a", 0, 4, 0, 0)},
			req: JobRequest{Topic: "t", Requires: []string{"gpu"}}, wantErr: ErrNoPoolMapping, code: ReasonNoPoolMappingRequires},
		{name: "pool with requires rejects a job without", workers: []Heartbeat{hb("g1", "g", 0, 4, 0, 0)},
			req: JobRequest{Topic: "gpu", Requires: []string{"tpu"}}, wantErr: ErrNoPoolMapping, code: ReasonNoPoolMappingRequires},
		{name: "stale heartbeats ignored", stale: []Heartbeat{hb("w1", "a", 0, 10, 0, 0)},
			req: JobRequest{Topic: "t"}, wantErr: ErrNoWorkers, code: ReasonNoWorkers},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := NewWorkerRegistry(30 * time.Second)
			for _, w := range c.stale {
				reg.Observe(w, now.Add(-31*time.Second))
			}
			for _, w := range c.workers {
				reg.Observe(w, now)
			}
			got, err := pickLeastLoaded(routing, reg, c.req, now)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				var se *SchedulingError
				require.True(t, errors.As(err, &se))
				require.Equal(t, c.code, se.Code)
				require.Equal(t, c.wantErr == ErrNoPoolMapping, se.Permanent)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

// Dispatches count against a worker until its next heartbeat, so a burst spreads.
func TestDispatchSpreadsBeforeNextHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg := NewWorkerRegistry(time.Minute)
	reg.Observe(Heartbeat{WorkerID: "w1", Pool: "a", MaxParallel: 10}, now)
	reg.Observe(Heartbeat{WorkerID: "w2", Pool: "a", MaxParallel: 10}, now)
	routing := &Routing{Topics: map[string][]string{"t": {"a"}}, Pools: map[string]Pool{"a": {}}}
	var got []string
	for range 4 {
		w, err := pickLeastLoaded(routing, reg, JobRequest{Topic: "t"}, now)
		require.NoError(t, err)
		reg.noteDispatched(w)
		got = append(got, w)
	}
	require.Equal(t, []string{"w1", "w2", "w1", "w2"}, got)
}
