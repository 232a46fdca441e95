package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox/dispatch"
)

// System is the outbox dispatcher as a system under test.
type System struct{}

var _ sut.System = System{}

// Name is "outbox".
func (System) Name() string { return "outbox" }

// Observer reads the outbox's keys and messages.
func (System) Observer() sut.Observer { return observer{} }

// Worker is the outbox's wire format, with its idempotent consumer.
func (System) Worker() sut.WorkerProtocol { return workerProtocol{} }

// routing keeps topics only: capability requirements are out of the
// outbox's scope (its README).
func routing(r sut.Routing) dispatch.Routing { return dispatch.Routing{Topics: r.Topics} }

// StartReplica boots one dispatcher; its relay, reconciler and replayer tick
// on the clock.
func (System) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	d, err := dispatch.New(dispatch.Config{Redis: p.Redis, Bus: bus{p.Bus}, Clock: clock{p.Clock}, Random: p.Random,
		Registerer: p.Registerer, Routing: routing(o.Routing), DispatchTimeout: o.DispatchTimeout,
		RunningTimeout: o.RunningTimeout, ReconcileInterval: o.ReconcileInterval,
		MaxSchedulingRetries: o.MaxSchedulingRetries})
	if err != nil {
		return nil, err
	}
	d.Start()
	return replica{d}, nil
}

type replica struct{ d *dispatch.Dispatcher }

func (r replica) SetRouting(rt sut.Routing) { r.d.SetRouting(routing(rt)) }

func (r replica) Subscriptions() []sut.Subscription {
	return []sut.Subscription{
		{Subject: dispatch.SubjectSubmit, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.d.HandleJobRequest))},
		{Subject: dispatch.SubjectResult, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.d.HandleJobResult))},
		{Subject: dispatch.SubjectCancel, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.d.HandleCancel))},
		{Subject: dispatch.SubjectHeartbeat, Handler: sut.JSON("decode", settled(r.d.HandleHeartbeat))},
	}
}

// settled maps handler errors to settle values, as the dispatcher documents.
func settled[T any](h func(context.Context, T) error) func(context.Context, T) sut.Settle {
	return func(ctx context.Context, v T) sut.Settle {
		err := h(ctx, v)
		if err == nil {
			return sut.Ack()
		}
		if d, ok := dispatch.AsRetryAfter(err); ok {
			return sut.NakAfter(d)
		}
		return sut.Drop(err)
	}
}

// StartGateway is the job API; the outbox has no run admission.
func (System) StartGateway(p sut.Ports, _ sut.Options) (sut.Gateway, error) {
	return &gateway{bus: p.Bus, jobs: dispatch.NewJobStore(p.Redis)}, nil
}

type gateway struct {
	bus  sut.Bus
	jobs *dispatch.JobStore
}

func (g *gateway) Submit(ctx context.Context, j sut.Job) error {
	b, err := json.Marshal(dispatch.JobRequest{JobID: j.ID, Topic: j.Topic, Tenant: j.Tenant})
	if err != nil {
		return err
	}
	return g.bus.Publish(ctx, dispatch.SubjectSubmit, sut.Message{ID: "submit:" + j.ID, Data: b})
}

func (g *gateway) Cancel(ctx context.Context, jobID string) error {
	b, err := json.Marshal(dispatch.CancelRequest{JobID: jobID, Reason: "client"})
	if err != nil {
		return err
	}
	return g.bus.Publish(ctx, dispatch.SubjectCancel, sut.Message{Data: b})
}

func (g *gateway) Status(ctx context.Context, jobID string) (string, error) {
	job, err := g.jobs.Get(ctx, jobID)
	switch {
	case errors.Is(err, dispatch.ErrJobNotFound):
		return "", sut.ErrNotFound
	case err != nil:
		return "", err
	}
	return string(job.State), nil
}

// isDispatchSubject: dispatches go to a worker's own subject.
func isDispatchSubject(subject string) bool {
	return strings.HasPrefix(subject, "worker.") && strings.HasSuffix(subject, ".jobs")
}
