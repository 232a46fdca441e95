package scenarios

import (
	"context"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// heartbeatLog hosts a system and records each heartbeat a replica handled,
// with the step and time it did: the load each replica was told, for the
// placement check. It changes nothing the system sees: no yield, no draw.
type heartbeatLog struct {
	sut.System
	reader  sut.HeartbeatReader
	subject string
	seen    []checker.HeartbeatFact
}

// recordHeartbeats wraps sys when its worker protocol can read heartbeats
// back; otherwise it returns nil.
func recordHeartbeats(sys sut.System) *heartbeatLog {
	proto := sys.Worker()
	reader, ok := proto.(sut.HeartbeatReader)
	if !ok {
		return nil
	}
	subject, _ := proto.Heartbeat(sut.Heartbeat{})
	return &heartbeatLog{System: sys, reader: reader, subject: subject}
}

func (h *heartbeatLog) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	r, err := h.System.StartReplica(p, o)
	if err != nil {
		return nil, err
	}
	return heartbeatReplica{Replica: r, log: h}, nil
}

type heartbeatReplica struct {
	sut.Replica
	log *heartbeatLog
}

func (r heartbeatReplica) Subscriptions() []sut.Subscription {
	subs := r.Replica.Subscriptions()
	out := make([]sut.Subscription, len(subs))
	for i, s := range subs {
		if s.Subject == r.log.subject {
			s.Handler = heartbeatHandler{inner: s.Handler, log: r.log}
		}
		out[i] = s
	}
	return out
}

// heartbeatHandler hands the replica's handler what it decodes, and records
// the heartbeat once the handler took it in.
type heartbeatHandler struct {
	inner sut.Handler
	log   *heartbeatLog
}

type readHeartbeat struct {
	value any
	hb    sut.Heartbeat
	ok    bool
}

func (h heartbeatHandler) Decode(data []byte) (any, error) {
	v, err := h.inner.Decode(data)
	if err != nil {
		return nil, err
	}
	hb, rerr := h.log.reader.ReadHeartbeat(data)
	return readHeartbeat{value: v, hb: hb, ok: rerr == nil}, nil
}

func (h heartbeatHandler) Handle(ctx context.Context, v any) sut.Settle {
	read := v.(readHeartbeat)
	settle := h.inner.Handle(ctx, read.value)
	if a := kernel.ActorOf(ctx); read.ok && a != nil {
		k := a.Kernel()
		hb := read.hb
		h.log.seen = append(h.log.seen, checker.HeartbeatFact{Step: k.Step(), Time: k.Now(), Replica: a.Group().Name,
			Worker: hb.WorkerID, Pool: hb.Pool, Active: hb.Active, MaxParallel: hb.Parallel, CPU: hb.CPU, GPU: hb.GPU})
	}
	return settle
}
