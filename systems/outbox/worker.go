package outbox

import (
	"context"
	"encoding/json"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox/dispatch"
)

type workerProtocol struct{}

var _ sut.IdempotentConsumer = workerProtocol{}

func (workerProtocol) Subject(workerID string) string { return dispatch.WorkerSubject(workerID) }

func (workerProtocol) DecodeDispatch(data []byte) (sut.Dispatch, error) {
	var p dispatch.JobPacket
	if err := json.Unmarshal(data, &p); err != nil {
		return sut.Dispatch{}, err
	}
	return sut.Dispatch{JobID: p.JobID, Gen: p.DispatchGen, ID: p.DispatchID}, nil
}

var outcomes = map[sut.Outcome]string{
	sut.Succeeded:       dispatch.ResultSucceeded,
	sut.Failed:          dispatch.ResultFailed,
	sut.FailedRetryable: dispatch.ResultFailedRetryable,
}

func (workerProtocol) Result(d sut.Dispatch, workerID string, o sut.Outcome) (string, sut.Message) {
	sha := d.ID
	if len(sha) > 8 {
		sha = sha[:8]
	}
	b, _ := json.Marshal(dispatch.JobResult{JobID: d.JobID, WorkerID: workerID, Status: outcomes[o],
		ResultPtr: "mem://" + d.JobID + "/" + sha, DispatchGen: d.Gen})
	return dispatch.SubjectResult, sut.Message{Data: b}
}

func (workerProtocol) Heartbeat(hb sut.Heartbeat) (string, sut.Message) {
	b, _ := json.Marshal(dispatch.Heartbeat{WorkerID: hb.WorkerID, Pool: hb.Pool, Active: hb.Active,
		MaxParallel: hb.Parallel, CPU: hb.CPU, GPU: hb.GPU})
	return dispatch.SubjectHeartbeat, sut.Message{Data: b}
}

// Consumer is the dispatcher's idempotent consumer: a dispatch id is run once,
// across worker restarts, and only while its job is still dispatched or
// running under that generation.
func (workerProtocol) Consumer(p sut.Ports) (sut.DispatchGate, error) {
	c, err := dispatch.NewConsumer(p.Redis, dispatch.ConsumerConfig{Registerer: p.Registerer})
	if err != nil {
		return nil, err
	}
	return gate{c}, nil
}

type gate struct{ c *dispatch.Consumer }

func (g gate) First(ctx context.Context, d sut.Dispatch) (bool, error) {
	return g.c.AcceptCurrent(ctx, d.JobID, d.Gen, d.ID)
}
