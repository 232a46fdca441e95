package cordum

import (
	"context"
	"encoding/json"
	"math"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// workerProtocol is one world's: its heartbeats remembers the message of
// each load report, since a worker reports the same few loads every few
// seconds and encoding one costs more than the rest of its publish.
type workerProtocol struct{ heartbeats *heartbeatCache }

type heartbeatCache struct {
	mu sync.Mutex // a live world's workers may report at once
	m  map[engine.Heartbeat][]byte
}

// maxHeartbeats bounds the reports remembered per world.
const maxHeartbeats = 1024

var _ sut.IdempotentConsumer = workerProtocol{}

// Consumer is the worker's fence (engine.DispatchCurrent): a dispatch of a job
// that is terminal, or past the dispatch's generation, is refused.
func (workerProtocol) Consumer(p sut.Ports) (sut.DispatchGate, error) {
	return fence{p.Redis}, nil
}

type fence struct{ rdb redis.Cmdable }

func (f fence) First(ctx context.Context, d sut.Dispatch) (bool, error) {
	return engine.DispatchCurrent(ctx, f.rdb, engine.JobPacket{JobID: d.JobID, DispatchGen: d.Gen})
}

func (workerProtocol) Subject(workerID string) string { return engine.WorkerSubject(workerID) }

func (workerProtocol) DecodeDispatch(data []byte) (sut.Dispatch, error) {
	var p engine.JobPacket
	if err := json.Unmarshal(data, &p); err != nil {
		return sut.Dispatch{}, err
	}
	return sut.Dispatch{JobID: p.JobID, Gen: p.DispatchGen, ID: p.DispatchID}, nil
}

var outcomes = map[sut.Outcome]string{
	sut.Succeeded:       engine.ResultSucceeded,
	sut.Failed:          engine.ResultFailed,
	sut.FailedRetryable: engine.ResultFailedRetryable,
}

func (workerProtocol) Result(d sut.Dispatch, workerID string, o sut.Outcome) (string, sut.Message) {
	sha := d.ID
	if len(sha) > 8 {
		sha = sha[:8]
	}
	b, _ := json.Marshal(engine.JobResult{JobID: d.JobID, WorkerID: workerID, Status: outcomes[o],
		ResultPtr: "mem://" + d.JobID + "/" + sha, DispatchGen: d.Gen})
	return engine.SubjectResult, sut.Message{Data: b}
}

func (w workerProtocol) Heartbeat(hb sut.Heartbeat) (string, sut.Message) {
	h := engine.Heartbeat{WorkerID: hb.WorkerID, Pool: hb.Pool, Active: hb.Active,
		MaxParallel: hb.Parallel, CPU: hb.CPU, GPU: hb.GPU}
	c := w.heartbeats
	// -0 and NaN would match the wrong key (or none): encoded as they come.
	if c == nil || math.Signbit(h.CPU) || math.Signbit(h.GPU) || h.CPU != h.CPU || h.GPU != h.GPU {
		b, _ := json.Marshal(h)
		return engine.SubjectHeartbeat, sut.Message{Data: b}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[h]
	if !ok {
		// Equal reports share these bytes: no reader writes a message's data.
		b, _ = json.Marshal(h)
		if c.m == nil || len(c.m) >= maxHeartbeats {
			c.m = map[engine.Heartbeat][]byte{}
		}
		c.m[h] = b
	}
	return engine.SubjectHeartbeat, sut.Message{Data: b}
}

// ReadHeartbeat reads a heartbeat message back (sut.HeartbeatReader).
func (workerProtocol) ReadHeartbeat(data []byte) (sut.Heartbeat, error) {
	var hb engine.Heartbeat
	if err := json.Unmarshal(data, &hb); err != nil {
		return sut.Heartbeat{}, err
	}
	return sut.Heartbeat{WorkerID: hb.WorkerID, Pool: hb.Pool, Active: hb.Active, Parallel: hb.MaxParallel,
		CPU: hb.CPU, GPU: hb.GPU}, nil
}
