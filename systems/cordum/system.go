package cordum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// System is the engine as a system under test.
type System struct{}

var _ sut.System = System{}

// Name is "cordum".
func (System) Name() string { return "cordum" }

// Observer reads the engine's keys and messages.
func (System) Observer() sut.Observer { return observer{} }

// Worker is the engine's worker wire format.
func (System) Worker() sut.WorkerProtocol {
	return workerProtocol{heartbeats: &heartbeatCache{}}
}

// config builds an engine configuration from the ports and options.
func config(p sut.Ports, o sut.Options) engine.Config {
	return engine.Config{
		Redis:                  p.Redis,
		Bus:                    bus{p.Bus},
		Clock:                  clock{p.Clock},
		Random:                 p.Random,
		Registerer:             p.Registerer,
		Routing:                Routing(o.Routing),
		DispatchTimeout:        o.DispatchTimeout,
		DispatchTimeoutByTopic: o.DispatchTimeoutByTopic,
		RunningTimeout:         o.RunningTimeout,
		ReconcileInterval:      o.ReconcileInterval,
		MaxSchedulingRetries:   o.MaxSchedulingRetries,
		DedupWindow:            o.DedupWindow,
		LockTTL:                o.LockTTL,
		TenantMaxActive:        o.TenantMaxActive,
	}
}

// Routing converts routing data into the engine's type.
func Routing(r sut.Routing) engine.Routing {
	out := engine.Routing{Topics: r.Topics, Pools: map[string]engine.Pool{}}
	for name, req := range r.Pools {
		out.Pools[name] = engine.Pool{Requires: req}
	}
	return out
}

// The actors a replica's sweeps run as (sut.Sweep).
const (
	reconcilerActor = "reconciler"
	replayerActor   = "replayer"
)

// StartReplica boots one engine replica, its reconciler and replayer.
func (System) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	eng, err := engine.New(config(p, o))
	if err != nil {
		return nil, err
	}
	p.Spawn(reconcilerActor, func(ctx context.Context) { _ = eng.RunReconciler(ctx) })
	p.Spawn(replayerActor, func(ctx context.Context) { _ = eng.RunReplayer(ctx) })
	return replica{eng}, nil
}

type replica struct{ eng *engine.Engine }

func (r replica) SetRouting(rt sut.Routing) { r.eng.SetRouting(Routing(rt)) }

func (r replica) Subscriptions() []sut.Subscription {
	return []sut.Subscription{
		{Subject: engine.SubjectSubmit, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.eng.HandleJobRequest))},
		{Subject: engine.SubjectResult, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.eng.HandleJobResult))},
		{Subject: engine.SubjectCancel, Queue: "scheduler", Handler: sut.JSON("decode", settled(r.eng.HandleCancel))},
		// Every replica keeps its own view of worker load: no queue sharing.
		{Subject: engine.SubjectHeartbeat, Queue: "", Handler: sut.JSON("decode", settled(r.eng.HandleHeartbeat))},
	}
}

// settled maps the engine's handler errors to settle values: nil acks, a
// retry-after error NAKs with its delay, anything else acks and drops.
func settled[T any](h func(context.Context, T) error) func(context.Context, T) sut.Settle {
	return func(ctx context.Context, v T) sut.Settle {
		err := h(ctx, v)
		if err == nil {
			return sut.Ack()
		}
		if d, ok := engine.AsRetryAfter(err); ok {
			return sut.NakAfter(d)
		}
		return sut.Drop(err)
	}
}

// StartGateway is the job API (submit and cancel over the bus, status from
// the store) with run admission.
func (System) StartGateway(p sut.Ports, o sut.Options) (sut.Gateway, error) {
	admit, err := engine.NewAdmission(engine.AdmissionConfig{Redis: p.Redis, Clock: clock{p.Clock}, Random: p.Random,
		DefaultOrgRunLimit: orgRunLimit(o), Registerer: p.Registerer})
	if err != nil {
		return nil, fmt.Errorf("gateway admission: %w", err)
	}
	return &gateway{bus: p.Bus, jobs: engine.NewJobStore(p.Redis), admit: admit, routes: admit.Routes(),
		rdb: p.Redis}, nil
}

// orgRunLimit is the run limit of an org whose limit was never set: one at a
// time (seed 002's setting) unless the options say more.
func orgRunLimit(o sut.Options) int { return max(o.RunLimit, 1) }

type gateway struct {
	bus    sut.Bus
	jobs   *engine.JobStore
	admit  *engine.Admission
	routes http.Handler          // the run admission API
	rdb    redis.UniversalClient // for the values another writer left
}

var _ sut.ForeignRunKeys = (*gateway)(nil)

func (g *gateway) Submit(ctx context.Context, j sut.Job) error {
	b, err := jsonBytes(engine.JobRequest{JobID: j.ID, Topic: j.Topic, Tenant: j.Tenant, Requires: j.Requires})
	if err != nil {
		return err
	}
	return g.bus.Publish(ctx, engine.SubjectSubmit, sut.Message{ID: "submit:" + j.ID, Data: b})
}

func (g *gateway) Cancel(ctx context.Context, jobID string) error {
	b, err := jsonBytes(engine.CancelRequest{JobID: jobID, Reason: "client"})
	if err != nil {
		return err
	}
	return g.bus.Publish(ctx, engine.SubjectCancel, sut.Message{Data: b})
}

func (g *gateway) Status(ctx context.Context, jobID string) (string, error) {
	st, err := g.jobs.GetState(ctx, jobID)
	if err != nil && strings.Contains(err.Error(), "redis: nil") {
		return "", sut.ErrNotFound
	}
	return string(st), err
}

func (g *gateway) RegisterWorkflow(ctx context.Context, org, workflowID string) error {
	err := g.admit.RegisterWorkflow(ctx, org, workflowID)
	switch {
	case errors.Is(err, engine.ErrWorkflowOrgConflict):
		return fmt.Errorf("%w: %w", sut.ErrWorkflowOrgConflict, err)
	case errors.Is(err, engine.ErrInvalidRunRequest):
		return fmt.Errorf("%w: %w", sut.ErrInvalidRequest, err)
	}
	return err
}

// StartRun sends the start as an HTTP request to the gateway's API
// (POST /workflows/{id}/runs), served in the calling actor, and reads the
// reply as a client does: the status, the run id of a 200, the reason of a
// 409 from its message.
func (g *gateway) StartRun(ctx context.Context, org, workflowID, key string, payload []byte) sut.RunReply {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/workflows/"+url.PathEscape(workflowID)+"/runs",
		bytes.NewReader(payload))
	if org != "" {
		req.Header.Set("X-Org-ID", org)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	g.routes.ServeHTTP(rec, req)
	out := sut.RunReply{Status: rec.Code}
	var body struct {
		RunID string `json:"run_id"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		return out
	}
	out.RunID = body.RunID
	if rec.Code == http.StatusConflict {
		out.Conflict = conflictReasons[body.Error]
	}
	return out
}

// conflictReasons are the engine's 409 messages (engine/admission.go), as a
// client tells them apart.
var conflictReasons = map[string]string{
	"idempotency key in flight":                       sut.RunInFlight,
	"idempotency key reused with a different payload": sut.RunMismatch,
	"idempotency key already used":                    sut.RunUsed,
}

func (g *gateway) SetOrgRunLimit(ctx context.Context, org string, n int) error {
	return g.admit.SetOrgRunLimit(ctx, org, n)
}

// ForeignRunKeyValues are values the engine did not write: Cordum's bare run
// id (its gateway stored no fingerprint), and values whose run id or
// fingerprint are not in the engine's form (another id scheme, upper-case
// hex, not hex at all).
func (g *gateway) ForeignRunKeyValues() []string {
	const uuid = "0b9f1c6e-5a7d-4c3b-9e2f-8a1b2c3d4e5f"
	fp := "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"
	return []string{
		uuid,
		"run_0123456789abcdef0123456789abcdef|" + fp,
		strings.ToUpper(uuid) + "|" + fp,
		uuid + "|" + strings.ToUpper(fp),
		uuid + "|" + strings.Repeat("z", len(fp)),
	}
}

// PlantRunKey stores value under key's idempotency record, as a writer that
// knows nothing of the engine's reservations does (no index entry).
func (g *gateway) PlantRunKey(ctx context.Context, key, value string) error {
	return g.rdb.Set(ctx, idempotencyPrefix+key, value, 0).Err()
}

func (g *gateway) CompleteRun(ctx context.Context, org, runID string) error {
	return g.admit.CompleteRun(ctx, org, runID, engine.RunSucceeded)
}

func (g *gateway) SweepStaleReservations(ctx context.Context) (int, error) {
	return g.admit.SweepStaleReservations(ctx)
}

func (g *gateway) StaleReservationAfter() time.Duration {
	return g.admit.Config().StaleReservationAfter
}
