// Package streamqueue adapts streams, a dispatcher on Redis Streams
// consumer groups whose workers pull their work from the store, to the
// simulator's boundary (sut). Its worker protocol is a sut.Puller: nothing
// is dispatched over the bus, a worker reads its pool's stream and
// acknowledges what it finished; results and heartbeats go over the bus.
package streamqueue

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dispatchsim/dispatchsim/examples/streamqueue/streams"
	"github.com/dispatchsim/dispatchsim/sut"
)

// System is the streams dispatcher as a system under test; Defect plants
// one of its known bugs.
type System struct{ Defect Defect }

// Defect is one of streams' planted bugs ("" none).
type Defect = streams.Defect

// The planted defects, as data on the system.
const (
	AckOnPull            = streams.AckOnPull
	ReapIgnoresLease     = streams.ReapIgnoresLease
	TerminalOverwrite    = streams.TerminalOverwrite
	DeadLetterHidesCause = streams.DeadLetterHidesCause
)

var _ sut.System = System{}

// Name is "streamqueue", with the defect's name after it.
func (s System) Name() string {
	if s.Defect == "" {
		return "streamqueue"
	}
	return "streamqueue-" + string(s.Defect)
}

// Observer reads the dispatcher's keys, streams and messages.
func (s System) Observer() sut.Observer { return observer{defect: s.Defect} }

// Worker is the dispatcher's worker side: a pull from the pool's stream.
func (s System) Worker() sut.WorkerProtocol { return worker{defect: s.Defect} }

// StartReplica boots one replica with its router and reaper. Its consumer
// name is drawn, so a restarted replica is a new consumer; what its last
// life left pending is claimed like any other's.
func (s System) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	r, err := streams.NewReplica(streams.Config{Redis: p.Redis, Bus: bus{p.Bus}, Clock: p.Clock, Random: p.Random,
		Registerer: p.Registerer, Spawn: p.Spawn, Name: consumerName(p.Random), Routing: o.Routing.Clone().Topics,
		Lease: o.DispatchTimeout, ReapInterval: o.ReconcileInterval, MaxAttempts: o.MaxSchedulingRetries, Defect: s.Defect})
	if err != nil {
		return nil, err
	}
	r.Start()
	return replica{r}, nil
}

func consumerName(r sut.Random) string {
	const digits = "0123456789abcdef"
	b := []byte("replica-00000000")
	v := r.Uint64()
	for i := len(b) - 1; i >= len(b)-8; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

type replica struct{ r *streams.Replica }

func (r replica) SetRouting(rt sut.Routing) { r.r.SetRouting(rt.Clone().Topics) }

// Subscriptions: results once per message across replicas, heartbeats to each.
func (r replica) Subscriptions() []sut.Subscription {
	return []sut.Subscription{
		{Subject: streams.SubjectResults, Queue: "streamqueue", Handler: sut.JSON("result", settle(r.r.HandleResult))},
		{Subject: streams.SubjectHeartbeat, Handler: sut.JSON("heartbeat", settle(r.r.HandleHeartbeat))},
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

// StartGateway is the job API; there is no run admission.
func (System) StartGateway(p sut.Ports, _ sut.Options) (sut.Gateway, error) {
	return gateway{streams.NewGateway(p.Redis)}, nil
}

type gateway struct{ g *streams.Gateway }

func (g gateway) Submit(ctx context.Context, j sut.Job) error {
	return g.g.Submit(ctx, j.ID, j.Topic, j.Tenant)
}
func (g gateway) Cancel(ctx context.Context, id string) error { return g.g.Cancel(ctx, id) }
func (g gateway) Status(ctx context.Context, id string) (string, error) {
	st, err := g.g.Status(ctx, id)
	if errors.Is(err, streams.ErrNotFound) {
		return "", sut.ErrNotFound
	}
	return st, err
}

type bus struct{ b sut.Bus }

func (b bus) Publish(ctx context.Context, subject, id string, data []byte) error {
	return b.b.Publish(ctx, subject, sut.Message{ID: id, Data: data})
}

// worker pulls: it has no dispatch subject and decodes no dispatch.
type worker struct{ defect Defect }

var _ sut.Puller = worker{}

func (worker) Subject(string) string { return "" }

func (worker) DecodeDispatch([]byte) (sut.Dispatch, error) {
	return sut.Dispatch{}, errors.New("streamqueue: workers pull their work, nothing is pushed")
}

// Puller is the worker's consumer of its pool's stream.
func (w worker) Puller(p sut.Ports, pw sut.PullWorker) (sut.Pull, error) {
	return pull{streams.NewPuller(p.Redis, pw.Pool, pw.ID, w.defect)}, nil
}

type pull struct{ p *streams.Puller }

func (p pull) Next(ctx context.Context, n int) ([]sut.Dispatch, error) {
	ws, err := p.p.Next(ctx, n)
	out := make([]sut.Dispatch, 0, len(ws))
	for _, w := range ws {
		out = append(out, sut.Dispatch{JobID: w.JobID, Gen: w.Gen, ID: w.DispatchID})
	}
	return out, err
}

func (p pull) Done(ctx context.Context, d sut.Dispatch) error { return p.p.Done(ctx, d.ID) }
func (p pull) Idle() time.Duration                            { return p.p.Idle() }

// Result points at a result of the dispatch's own, so two executions of a
// job leave two pointers.
func (worker) Result(d sut.Dispatch, workerID string, o sut.Outcome) (string, sut.Message) {
	b, _ := json.Marshal(streams.Result{JobID: d.JobID, Gen: d.Gen, DispatchID: d.ID, WorkerID: workerID,
		Outcome: string(o), ResultPtr: resultPtr(d.ID)})
	return streams.SubjectResults, sut.Message{Data: b}
}

func resultPtr(dispatchID string) string { return "mem://results/" + dispatchID }

func (worker) Heartbeat(hb sut.Heartbeat) (string, sut.Message) {
	b, _ := json.Marshal(streams.Heartbeat{WorkerID: hb.WorkerID, Pool: hb.Pool, Active: hb.Active, Parallel: hb.Parallel})
	return streams.SubjectHeartbeat, sut.Message{Data: b}
}
