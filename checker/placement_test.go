package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// placed runs j1 (topic default, or gpu requiring gpu) on worker w1 of the
// given pool and judges it against these workers.
func placed(topic string, w1 WorkerFact, sys sut.Spec) *Result {
	s := newStory().submit("j1")
	if topic == "gpu" {
		s.h.Submitted[0].Topic, s.h.Submitted[0].Requires = "gpu", []string{"gpu"}
	}
	s.h.Routing = []history.RoutingChange{{Routing: sut.Routing{
		Topics: map[string][]string{"default": {"general"}, "gpu": {"gpu-pool"}},
		Pools:  map[string][]string{"general": nil, "gpu-pool": {"gpu"}}}}}
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		publish("j1", 0, history.PublishStored).execute("j1", 0, "d-j1").commit("j1", engine.StateSucceeded)
	s.h.End = s.at()
	w1.ID = "w1"
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys, Workers: []WorkerFact{w1}})
}

func TestJobOnAWorkerOfAnotherPoolIsCaught(t *testing.T) {
	require.Empty(t, placed("default", WorkerFact{Pool: "general"}, cordumSpec).Violations)
	require.Empty(t, placed("gpu", WorkerFact{Pool: "gpu-pool", GPUFloor: 80}, cordumSpec).Violations)

	v := only(placed("gpu", WorkerFact{Pool: "general"}, cordumSpec), "placement")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `job j1 ran on w1 (pool general): topic "gpu" requires [gpu]; eligible from 0s: pools gpu-pool`)
}

// A worker whose baseline load is at the threshold reports overload in
// every heartbeat: no pick can choose it.
func TestJobOnAnAlwaysOverloadedWorkerIsCaught(t *testing.T) {
	v := only(placed("default", WorkerFact{Pool: "general", GPUFloor: 90}, cordumSpec), "placement")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "every heartbeat of the worker reports GPU 90 or more, overloaded at 90")
	require.Len(t, only(placed("default", WorkerFact{Pool: "general", CPUFloor: 95}, cordumSpec), "placement"), 1)
	require.Empty(t, placed("default", WorkerFact{Pool: "general", CPUFloor: 89.9}, cordumSpec).Violations)
	require.Empty(t, placed("default", WorkerFact{Pool: "general", GPUFloor: 90}, outboxLike()).Violations,
		"a system without load rules places anywhere its pools allow")
}
