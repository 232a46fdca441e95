package checker

import (
	"testing"
	"time"

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
	require.Contains(t, v[0].Message, `job j1 ran on w1 (pool general): topic "gpu" requires [gpu]; `+
		`its DISPATCHED writer picked it between steps 3 and 4, by its routing eligible from 0s: pools gpu-pool`)

	noRequires := cordumSpec
	noRequires.Requires = false
	v = only(placed("gpu", WorkerFact{Pool: "general"}, noRequires), "placement")
	require.Len(t, v, 1, "a system that ignores requirements still keeps to the topic's pools")
	require.Contains(t, v[0].Message, "eligible from 0s: pools gpu-pool")
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

// pickStory: replica-1 handled heartbeats from w1 (two jobs running, CPU
// 10) and w2 (idle, CPU 50), then one of its handlers scheduled j1, wrote
// DISPATCHED and published it to the worker given.
type pickStory struct {
	*story
	beats []HeartbeatFact
}

func newPickStory() *pickStory {
	s := &pickStory{story: newStory().submit("j1")}
	s.h.Routing = []history.RoutingChange{{Routing: sut.Routing{Topics: map[string][]string{"default": {"general"}},
		Pools: map[string][]string{"general": nil}}}}
	return s.beat("replica-1", "w1", 2, 0, 10).beat("replica-1", "w2", 0, 0, 50)
}

func (s *pickStory) beat(replica, worker string, active, maxParallel int, cpu float64) *pickStory {
	s.tick()
	s.beats = append(s.beats, HeartbeatFact{Step: s.step, Time: s.at(), Replica: replica, Worker: worker, Pool: "general",
		Active: active, MaxParallel: maxParallel, CPU: cpu})
	return s
}

// by makes the last state change the handler's.
func (s *pickStory) by(actor string) *pickStory {
	s.h.States[len(s.h.States)-1].Actor = actor
	return s
}

func (s *pickStory) sendTo(worker string) *pickStory {
	s.tick()
	s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: "replica-1/h",
		Subject: "worker." + worker + ".jobs", JobID: "j1", Dispatch: true, Outcome: history.PublishStored})
	return s
}

func (s *pickStory) schedule() *pickStory {
	s.commit("j1", engine.StatePending)
	s.commit("j1", engine.StateScheduled)
	return s.by("replica-1/h")
}

func (s *pickStory) dispatched() *pickStory {
	s.commit("j1", engine.StateDispatched)
	return s.by("replica-1/h")
}

func (s *pickStory) judge() []Violation {
	s.h.End = s.at()
	workers := []WorkerFact{{ID: "w1", Pool: "general", Subject: "worker.w1.jobs"}, {ID: "w2", Pool: "general", Subject: "worker.w2.jobs"}}
	return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec, Workers: workers, Heartbeats: s.beats}), "placement")
}

// The least loaded worker in the replica's view is w2 (score 0.50 against
// 2.10): a dispatch to w1 is one no view justifies.
func TestDispatchToAWorkerThePickPassesOverIsCaught(t *testing.T) {
	require.Empty(t, newPickStory().schedule().dispatched().sendTo("w2").judge())

	v := newPickStory().schedule().dispatched().sendTo("w1").judge()
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "replica-1/h sent job j1 to w1")
	require.Contains(t, v[0].Message, "w1 2.10, w2 0.50 -> w2")

	// Another replica's view, or a heartbeat after the DISPATCHED write, is
	// not what this handler picked from.
	other := newPickStory().beat("replica-2", "w2", 5, 0, 0).schedule().dispatched().sendTo("w2")
	require.Empty(t, other.judge())
	late := newPickStory().schedule().dispatched()
	late.beat("replica-1", "w2", 5, 0, 50)
	require.Empty(t, late.sendTo("w2").judge())
}

// Any view the replica held between the scheduling write and the DISPATCHED
// write justifies a pick: a heartbeat in between may have come first.
func TestPickFromAnyViewBetweenScheduleAndDispatchPasses(t *testing.T) {
	s := newPickStory().schedule()
	s.beat("replica-1", "w2", 5, 0, 50)
	require.Empty(t, s.dispatched().sendTo("w1").judge(), "w2 turned busier before the pick")
	s = newPickStory().schedule()
	s.beat("replica-1", "w2", 5, 0, 50)
	require.Empty(t, s.dispatched().sendTo("w2").judge(), "or the pick came first")
}

// An overloaded worker, one unheard of past the TTL, and the replica's own
// dispatches since a heartbeat all change the pick.
func TestPickRulesOverloadLivenessAndOwnDispatches(t *testing.T) {
	full := newPickStory().beat("replica-1", "w2", 4, 4, 0).schedule().dispatched()
	require.Empty(t, full.sendTo("w1").judge(), "w2 at its limit is overloaded")

	stale := newPickStory()
	stale.wait(time.Minute)
	stale.beat("replica-1", "w1", 2, 0, 10).schedule().dispatched()
	require.Empty(t, stale.sendTo("w1").judge(), "w2 unheard of for a minute is gone")

	// Two dispatches of its own to w2 since w2's heartbeat: 2.50 against w1's 2.10.
	busy := newPickStory()
	for _, job := range []string{"j8", "j9"} {
		busy.tick()
		busy.h.Publishes = append(busy.h.Publishes, history.PublishRecord{Step: busy.step, Time: busy.at(),
			Actor: "replica-1/h0", Subject: "worker.w2.jobs", JobID: job, Dispatch: true, Outcome: history.PublishStored})
	}
	require.Empty(t, busy.schedule().dispatched().sendTo("w1").judge())
	busy = newPickStory()
	busy.tick()
	busy.h.Publishes = append(busy.h.Publishes, history.PublishRecord{Step: busy.step, Time: busy.at(),
		Actor: "replica-1/h0", Subject: "worker.w2.jobs", JobID: "j8", Dispatch: true, Outcome: history.PublishFailedClean})
	require.Len(t, busy.schedule().dispatched().sendTo("w1").judge(), 1, "a failed publish counts nothing")
}

// A replica that restarts, after a crash or after a stop, starts with an
// empty registry: the heartbeats its last process heard count for nothing,
// and a pick from the new process's first heartbeat stands.
func TestARestartedReplicaPicksFromWhatItHeardSince(t *testing.T) {
	for _, restart := range []history.FaultRecord{
		{Actor: "replica-1/h", Effect: history.EffectCrash},
		{Actor: "replica-1", Kind: "Event:start"},
	} {
		s := newPickStory()
		restart.Step = s.tick()
		s.h.Faults = append(s.h.Faults, restart)
		s.beat("replica-1", "w1", 2, 0, 10).schedule().dispatched()
		require.Empty(t, s.sendTo("w1").judge(), "%s: w2 was heard only by the process that is gone", restart.Kind)
	}
	// Without the restart, w2 (0.50) is the pick.
	s := newPickStory().beat("replica-1", "w1", 2, 0, 10).schedule().dispatched()
	require.Len(t, s.sendTo("w1").judge(), 1)
}

// A replica started on its own config (a rolling deploy whose new replicas
// carry a pool mapping the old ones lack) picks with its own routing: the
// pick is judged with what that replica had, never the others' routing.
func TestAReplicaPicksWithItsOwnRouting(t *testing.T) {
	build := func(own bool) []Violation {
		s := newPickStory()
		if own {
			s.h.Routing = append(s.h.Routing, history.RoutingChange{Replica: "replica-1", Routing: sut.Routing{
				Topics: map[string][]string{"default": {"general", "batch"}},
				Pools:  map[string][]string{"general": nil, "batch": nil}}})
		}
		s.tick()
		s.beats = append(s.beats, HeartbeatFact{Step: s.step, Time: s.at(), Replica: "replica-1", Worker: "w3", Pool: "batch"})
		s.schedule().dispatched().sendTo("w3")
		s.h.End = s.at()
		workers := []WorkerFact{{ID: "w1", Pool: "general", Subject: "worker.w1.jobs"},
			{ID: "w2", Pool: "general", Subject: "worker.w2.jobs"}, {ID: "w3", Pool: "batch", Subject: "worker.w3.jobs"}}
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec, Workers: workers,
			Heartbeats: s.beats}), "placement")
	}
	require.Empty(t, build(true), "replica-1's own routing maps default to batch, where w3 is idle")
	v := build(false)
	require.Len(t, v, 1, "without it, batch is no pool of the topic")
	require.Contains(t, v[0].Message, "replica-1/h sent job j1 to w3")
}

// The pick is the engine's least-loaded rule at its bounds: the lowest score
// (running jobs, plus CPU and GPU in hundredths) wins, ties go to the lower
// worker id, a worker at any overload threshold takes nothing (a worker
// without a parallel limit is judged by CPU and GPU alone), and a worker
// heard exactly its TTL ago is still live.
func TestPickKeepsTheLeastLoadedRuleAtItsBounds(t *testing.T) {
	const ttl = 30 * time.Second
	require.Equal(t, ttl, cordumSpec.WorkerTTL)
	judged := func(w1, w2 HeartbeatFact, to string) []Violation {
		s := newPickStory()
		for _, hb := range []HeartbeatFact{w1, w2} {
			s.beat("replica-1", hb.Worker, hb.Active, hb.MaxParallel, hb.CPU)
			s.beats[len(s.beats)-1].GPU = hb.GPU
		}
		return s.schedule().dispatched().sendTo(to).judge()
	}
	for name, c := range map[string]struct {
		w1, w2         HeartbeatFact
		pick, passOver string
	}{
		"a tie goes to the lower id": {HeartbeatFact{Worker: "w1"}, HeartbeatFact{Worker: "w2"}, "w1", "w2"},
		"lower CPU wins":             {HeartbeatFact{Worker: "w1", CPU: 10}, HeartbeatFact{Worker: "w2", CPU: 50}, "w1", "w2"},
		"lower GPU wins":             {HeartbeatFact{Worker: "w1", GPU: 50}, HeartbeatFact{Worker: "w2", GPU: 10}, "w2", "w1"},
		"CPU at the threshold":       {HeartbeatFact{Worker: "w1", CPU: 90}, HeartbeatFact{Worker: "w2", Active: 1}, "w2", "w1"},
		"GPU at the threshold":       {HeartbeatFact{Worker: "w1", GPU: 90}, HeartbeatFact{Worker: "w2", Active: 1}, "w2", "w1"},
		"load ratio at the threshold": {HeartbeatFact{Worker: "w1", Active: 9, MaxParallel: 10},
			HeartbeatFact{Worker: "w2", Active: 10}, "w2", "w1"},
		"no parallel limit, no load ratio": {HeartbeatFact{Worker: "w1", Active: 1}, HeartbeatFact{Worker: "w2", Active: 2}, "w1", "w2"},
		"under the load ratio": {HeartbeatFact{Worker: "w1", Active: 1, MaxParallel: 10},
			HeartbeatFact{Worker: "w2", Active: 2}, "w1", "w2"},
		"GPU weighs a hundredth of a job": {HeartbeatFact{Worker: "w1", Active: 1}, HeartbeatFact{Worker: "w2", GPU: 50}, "w2", "w1"},
	} {
		require.Empty(t, judged(c.w1, c.w2, c.pick), name)
		require.Len(t, judged(c.w1, c.w2, c.passOver), 1, name)
	}

	// w2 last heard 30s before the scheduling write, 31s before the
	// DISPATCHED write: live for the first view, gone for the second.
	s := newPickStory().beat("replica-1", "w2", 0, 0, 50)
	s.wait(ttl - 2*time.Second)
	require.Empty(t, s.schedule().dispatched().sendTo("w2").judge())
}

// The dispatches a replica counts against a worker since its heartbeat are
// its own that the broker took (stored, or absorbed as a duplicate): not
// another replica's, nor a message that is no dispatch.
func TestOnlyTheReplicasOwnTakenDispatchesCount(t *testing.T) {
	// Two counted dispatches to w2 make it 2.50 against w1's 2.10.
	twoTo := func(actor string, dispatch bool, outcome history.PublishOutcome) *pickStory {
		s := newPickStory()
		for _, job := range []string{"j8", "j9"} {
			s.tick()
			s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: actor,
				Subject: "worker.w2.jobs", JobID: job, Dispatch: dispatch, Outcome: outcome})
		}
		return s.schedule().dispatched()
	}
	require.Empty(t, twoTo("replica-1/h0", true, history.PublishDeduplicated).sendTo("w1").judge(), "the broker took them")
	require.Len(t, twoTo("replica-2/h0", true, history.PublishStored).sendTo("w1").judge(), 1, "another replica's")
	require.Len(t, twoTo("replica-1/h0", false, history.PublishStored).sendTo("w1").judge(), 1, "not dispatches")
}

// judgeWith judges the pick against sys.
func (s *pickStory) judgeWith(sys sut.Spec) []Violation {
	s.h.End = s.at()
	workers := []WorkerFact{{ID: "w1", Pool: "general", Subject: "worker.w1.jobs"}, {ID: "w2", Pool: "general", Subject: "worker.w2.jobs"}}
	return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys, Workers: workers, Heartbeats: s.beats}), "placement")
}

// Only the publisher's own pass is a pick window: a scheduling move by
// another replica's handler, or a DISPATCHED write the publisher did not
// make, leaves the dispatch unjudged; a DISPATCHED write of another handler
// after the publisher's does not stretch its window. A message that is no
// dispatch is no pick, and a system without the least-loaded rule makes
// none. Each of these sends to w1, which the view passes over.
func TestOnlyThePublishersOwnPassIsAPickWindow(t *testing.T) {
	require.Len(t, newPickStory().schedule().dispatched().sendTo("w1").judge(), 1, "the judged shape")

	other := newPickStory()
	other.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).by("replica-2/h", "")
	other.dispatched().sendTo("w1").commit("j1", engine.StateRunning)
	require.Empty(t, other.judge(), "another replica's handler scheduled it")

	foreign := newPickStory().schedule()
	foreign.commit("j1", engine.StateDispatched).by("replica-2/h", "")
	require.Empty(t, foreign.sendTo("w1").judge(), "the DISPATCHED write was another's")

	// w2 turns busy after the publisher's DISPATCHED write; a second
	// handler's DISPATCHED write after that is not the publisher's pick.
	late := newPickStory().schedule().dispatched()
	late.beat("replica-1", "w2", 5, 0, 50)
	late.commit("j1", engine.StateDispatched).by("replica-2/h", "")
	late.sendTo("w1").commit("j1", engine.StateRunning)
	require.Len(t, late.judge(), 1, "the window closed at the publisher's own write")

	notADispatch := newPickStory().schedule().dispatched().sendTo("w1")
	notADispatch.h.Publishes[len(notADispatch.h.Publishes)-1].Dispatch = false
	require.Empty(t, notADispatch.judge())

	noRule := cordumSpec
	noRule.LeastLoaded = false
	require.Empty(t, newPickStory().schedule().dispatched().sendTo("w1").judgeWith(noRule))
}

// A job that enters the scheduled state with its first commit is picked in
// that pass too.
func TestAFirstCommitIntoTheScheduledStateOpensTheWindow(t *testing.T) {
	s := newPickStory()
	s.commit("j1", engine.StateScheduled).by("replica-1/h", "")
	require.Len(t, s.dispatched().sendTo("w1").judge(), 1)
}

// A pause is no restart: the paused replica keeps the registry it had.
func TestAPausedReplicaKeepsItsRegistry(t *testing.T) {
	for _, actor := range []string{"replica-1/h", "replica-2/h"} {
		s := newPickStory()
		s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.tick(), Actor: actor, Kind: "ReplicaPause",
			Effect: history.EffectPause})
		s.beat("replica-1", "w1", 2, 0, 10).schedule().dispatched()
		require.Len(t, s.sendTo("w1").judge(), 1, "%s paused: w2 (0.50) is still the pick", actor)
	}
}

// placedUnder runs j1 (topic gpu, requiring gpu) on w1 of pool general,
// scheduled at 3s, DISPATCHED at 4s and run at 6s, under the routings given.
func placedUnder(routings ...history.RoutingChange) []Violation {
	s := newStory().submit("j1")
	s.h.Submitted[0].Topic, s.h.Submitted[0].Requires = "gpu", []string{"gpu"}
	s.h.Routing = routings
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		publish("j1", 0, history.PublishStored).execute("j1", 0, "d-j1").commit("j1", engine.StateSucceeded)
	s.h.End = s.at()
	return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
		Workers: []WorkerFact{{ID: "w1", Pool: "general"}}}), "placement")
}

// A pick is judged by the routing in force while it was made, from the
// move into the scheduled state to the DISPATCHED write: one that takes
// effect exactly as the write lands counts, one replaced exactly as the job
// was scheduled does not, and one that came after the pick does not, even
// before the run.
func TestRoutingsInForceAtTheWindowsEdges(t *testing.T) {
	toGeneral := func(at time.Duration) history.RoutingChange {
		return history.RoutingChange{Time: at, Routing: sut.Routing{Topics: map[string][]string{"gpu": {"general"}},
			Pools: map[string][]string{"general": {"gpu"}}}}
	}
	toGPU := func(at time.Duration) history.RoutingChange {
		return history.RoutingChange{Time: at, Routing: sut.Routing{Topics: map[string][]string{"gpu": {"gpu-pool"}},
			Pools: map[string][]string{"gpu-pool": {"gpu"}}}}
	}
	require.Empty(t, placedUnder(toGPU(0), toGeneral(4*time.Second)), "general was eligible from the instant of the write")
	require.Len(t, placedUnder(toGPU(0), toGeneral(5*time.Second)), 1, "general became eligible after the pick, before the run")
	require.Len(t, placedUnder(toGeneral(0), toGPU(3*time.Second)), 1, "general stopped being eligible as it was scheduled")
	require.Empty(t, placedUnder(toGeneral(0), toGPU(4*time.Second)))
}

// rollingDeploy: the world routes topic default to pool p1; replica-2 runs
// its own config mapping it to p2 from the start, and replica-1 restarts
// on a config of its own (p1 again) at 2s, before j1 is scheduled. Then
// replica-2's handler schedules j1, writes DISPATCHED and j1 runs on the
// worker given.
func rollingDeploy(worker string) []Violation { return rollingDeployRewritten(worker, "") }

// rollingDeployRewritten is rollingDeploy with a second DISPATCHED write of
// the same generation by rewriter's handler before the run, unless "".
func rollingDeployRewritten(worker, rewriter string) []Violation {
	route := func(replica, pool string, at time.Duration) history.RoutingChange {
		return history.RoutingChange{Time: at, Replica: replica, Routing: sut.Routing{
			Topics: map[string][]string{"default": {pool}}, Pools: map[string][]string{pool: nil}}}
	}
	s := newStory()
	s.h.Routing = []history.RoutingChange{route("", "p1", 0), route("replica-2", "p2", 0), route("replica-1", "p1", 2*time.Second)}
	s.submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled)
	s.h.States[len(s.h.States)-1].Actor = "replica-2/h"
	s.commit("j1", engine.StateDispatched)
	s.h.States[len(s.h.States)-1].Actor = "replica-2/h"
	if rewriter != "" {
		s.commit("j1", engine.StateScheduled)
		s.h.States[len(s.h.States)-1].Actor = rewriter
		s.commit("j1", engine.StateDispatched)
		s.h.States[len(s.h.States)-1].Actor = rewriter
	}
	s.tick()
	s.h.Executions = append(s.h.Executions, history.Execution{Step: s.step, Time: s.at(), Worker: worker, JobID: "j1",
		DispatchID: "d-j1", End: s.at(), EndStep: s.step})
	s.commit("j1", engine.StateSucceeded)
	s.h.Reports[len(s.h.Reports)-1].Worker = worker
	s.h.End = s.at()
	workers := []WorkerFact{{ID: "a1", Pool: "p1"}, {ID: "b1", Pool: "p2"}}
	return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec, Workers: workers}), "placement")
}

// In a rolling deploy a pick answers to the routing of the replica that
// made it, as it ran when it picked: replica-2's pick of a p2 worker is
// right by its own routing (once reported, when every routing change was
// read as one timeline), and its pick of a p1 worker is wrong though the
// other replicas' routing allows it.
func TestAPickAnswersToItsOwnReplicasRouting(t *testing.T) {
	require.Empty(t, rollingDeploy("b1"), "replica-2 maps default to p2")
	v := rollingDeploy("a1")
	require.Len(t, v, 1, "p1 is no pool of replica-2's routing")
	require.Contains(t, v[0].Message, "job j1 ran on a1 (pool p1)")
	require.Contains(t, v[0].Message, "replica-2/h picked it between steps 3 and 4, by its routing eligible from 0s: pools p2")

	// A second write of the generation (a re-publish that keeps its first
	// worker) leaves the first pick standing; the worker fits neither pick
	// only when both say so.
	require.Empty(t, rollingDeployRewritten("b1", "replica-1/r"), "replica-2's pick of b1 still stands")
	v = rollingDeployRewritten("b1", "replica-2/r")
	require.Empty(t, v)
	v = rollingDeployRewritten("a1", "replica-2/r")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "replica-2/r picked it between steps 5 and 6")
}

// An execution is judged once per dispatch, and only on a worker known.
func TestAMisplacedDispatchIsReportedOnce(t *testing.T) {
	s := newStory().submit("j1")
	s.h.Submitted[0].Topic, s.h.Submitted[0].Requires = "gpu", []string{"gpu"}
	s.h.Routing = []history.RoutingChange{{Routing: sut.Routing{Topics: map[string][]string{"gpu": {"gpu-pool"}},
		Pools: map[string][]string{"gpu-pool": {"gpu"}}}}}
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		publish("j1", 0, history.PublishStored).execute("j1", 0, "d-j1").execute("j1", 0, "d-j1").execute("j1", 0, "d-j1")
	s.h.Executions[2].Worker = "w9"
	s.h.End = s.at()
	v := only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
		Workers: []WorkerFact{{ID: "w1", Pool: "general"}}}), "placement")
	require.Len(t, v, 1)

	// A job never scheduled has no pass to be placed by.
	u := newStory().submit("j1")
	u.h.Submitted[0].Topic, u.h.Submitted[0].Requires = "gpu", []string{"gpu"}
	u.h.Routing = s.h.Routing
	u.commit("j1", engine.StatePending).commit("j1", engine.StateDispatched).execute("j1", 0, "d-j1")
	u.h.End = u.at()
	require.Empty(t, only(Check(Input{History: &u.h, Final: u.final, DLQ: u.dlq, System: cordumSpec,
		Workers: []WorkerFact{{ID: "w1", Pool: "general"}}}), "placement"))
}

// A re-publish under the first copy's message id keeps the first copy's
// worker while it can take the job (world-swarm 600093): w1, not the less
// loaded w2, is then the pick. A first publish gets no such leave, nor a
// re-publish under another id, nor a system that does not declare the rule.
func TestARepublishKeepsItsFirstWorker(t *testing.T) {
	republish := func(id string) *pickStory {
		s := newPickStory().beat("replica-1", "w1", 0, 0, 10).schedule().dispatched().sendTo("w1")
		s.h.Publishes[0].MsgID, s.h.Publishes[0].Outcome = "jobreq:j1", history.PublishFailedStored
		s.beat("replica-1", "w1", 2, 0, 10) // busier now than w2
		s.commit("j1", engine.StateScheduled)
		s.by("replica-1/h")
		s.dispatched().sendTo("w1")
		s.h.Publishes[1].MsgID = id
		return s
	}
	require.Empty(t, republish("jobreq:j1").judge())
	require.Len(t, republish("jobreq:j1:1").judge(), 1, "another id: a fresh pick")

	spec := cordumSpec
	spec.RepublishKeepsWorker = false
	s := republish("jobreq:j1")
	s.h.End = s.at()
	workers := []WorkerFact{{ID: "w1", Pool: "general", Subject: "worker.w1.jobs"}, {ID: "w2", Pool: "general", Subject: "worker.w2.jobs"}}
	v := only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: spec, Workers: workers, Heartbeats: s.beats}), "placement")
	require.Len(t, v, 1, "without the declared rule the re-publish to w1 is misplaced")

	// An overloaded first worker is not kept.
	over := republish("jobreq:j1")
	over.beats[len(over.beats)-1].MaxParallel = 2
	require.NotEmpty(t, over.judge())
}
