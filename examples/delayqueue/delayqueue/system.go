// Package delayqueue adapts queue, a Redis polling delay queue, to the
// simulator's boundary (sut): what an outside team writes to gate its own
// dispatcher. Its spec says what the design has and lacks: no job lock, no
// running state, no tenant caps, no run admission, placement by round robin
// over the topic's live workers with requirements ignored.
package delayqueue

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dispatchsim/dispatchsim/examples/delayqueue/queue"
	"github.com/dispatchsim/dispatchsim/sut"
)

// System is the delay queue as a system under test; Defect plants one of
// queue's known bugs.
type System struct{ Defect Defect }

// Defect is one of queue's planted bugs ("" none).
type Defect = queue.Defect

// The planted defects, as data on the system.
const (
	PublishBeforeWrite    = queue.PublishBeforeWrite
	TerminalOverwrite     = queue.TerminalOverwrite
	StaleResultApplied    = queue.StaleResultApplied
	TerminalRecordExpires = queue.TerminalRecordExpires
)

var _ sut.System = System{}

// Name is "delayqueue", with the defect's name after it.
func (s System) Name() string {
	if s.Defect == "" {
		return "delayqueue"
	}
	return "delayqueue-" + string(s.Defect)
}

// Observer reads the queue's keys and messages.
func (s System) Observer() sut.Observer { return observer{defect: s.Defect} }

// Worker is the queue's wire format.
func (System) Worker() sut.WorkerProtocol { return worker{} }

func config(p sut.Ports, o sut.Options, d queue.Defect) queue.Config {
	return queue.Config{Redis: p.Redis, Bus: bus{p.Bus}, Clock: p.Clock, Random: p.Random, Registerer: p.Registerer,
		Spawn: p.Spawn, Routing: o.Routing.Clone().Topics, Lease: o.DispatchTimeout, LeaseByTopic: o.DispatchTimeoutByTopic,
		ReapInterval: o.ReconcileInterval, MaxAttempts: o.MaxSchedulingRetries, Defect: d}
}

// StartReplica boots one replica with its poller and reaper.
func (s System) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	r, err := queue.NewReplica(config(p, o, s.Defect))
	if err != nil {
		return nil, err
	}
	r.Start()
	return replica{r}, nil
}

type replica struct{ r *queue.Replica }

func (r replica) SetRouting(rt sut.Routing) { r.r.SetRouting(rt.Clone().Topics) }

// Subscriptions: results once per message across replicas, heartbeats to each.
func (r replica) Subscriptions() []sut.Subscription {
	return []sut.Subscription{
		{Subject: queue.SubjectResults, Queue: "delayqueue", Handler: sut.JSON("result", settle(r.r.HandleResult))},
		{Subject: queue.SubjectHeartbeat, Handler: sut.JSON("heartbeat", settle(r.r.HandleHeartbeat))},
	}
}

// settle acks a handled message and asks again a second later after an error.
func settle[T any](h func(context.Context, T) error) func(context.Context, T) sut.Settle {
	return func(ctx context.Context, v T) sut.Settle {
		if h(ctx, v) != nil {
			return sut.NakAfter(time.Second)
		}
		return sut.Ack()
	}
}

// StartGateway is the job API; the queue has no run admission.
func (System) StartGateway(p sut.Ports, _ sut.Options) (sut.Gateway, error) {
	return gateway{queue.NewGateway(p.Redis)}, nil
}

type gateway struct{ g *queue.Gateway }

func (g gateway) Submit(ctx context.Context, j sut.Job) error {
	return g.g.Submit(ctx, j.ID, j.Topic, j.Tenant)
}
func (g gateway) Cancel(ctx context.Context, id string) error { return g.g.Cancel(ctx, id) }
func (g gateway) Status(ctx context.Context, id string) (string, error) {
	st, err := g.g.Status(ctx, id)
	if errors.Is(err, queue.ErrNotFound) {
		return "", sut.ErrNotFound
	}
	return st, err
}

type bus struct{ b sut.Bus }

func (b bus) Publish(ctx context.Context, subject, id string, data []byte) error {
	return b.b.Publish(ctx, subject, sut.Message{ID: id, Data: data})
}

type worker struct{}

func (worker) Subject(id string) string { return queue.WorkerSubject(id) }

func (worker) DecodeDispatch(data []byte) (sut.Dispatch, error) {
	var p queue.Packet
	err := json.Unmarshal(data, &p)
	return sut.Dispatch{JobID: p.JobID, Gen: p.Gen, ID: p.DispatchID}, err
}

// Result points at a result of the dispatch's own, so two executions of a
// job leave two pointers.
func (worker) Result(d sut.Dispatch, workerID string, o sut.Outcome) (string, sut.Message) {
	b, _ := json.Marshal(queue.Result{JobID: d.JobID, Gen: d.Gen, DispatchID: d.ID, WorkerID: workerID,
		Outcome: string(o), ResultPtr: resultPtr(d.ID)})
	return queue.SubjectResults, sut.Message{Data: b}
}

func resultPtr(dispatchID string) string { return "mem://results/" + dispatchID }

func (worker) Heartbeat(hb sut.Heartbeat) (string, sut.Message) {
	b, _ := json.Marshal(queue.Heartbeat{WorkerID: hb.WorkerID, Pool: hb.Pool, Active: hb.Active, Parallel: hb.Parallel})
	return queue.SubjectHeartbeat, sut.Message{Data: b}
}
