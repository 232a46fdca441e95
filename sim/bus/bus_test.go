package bus

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// testWorld is the part of a world the bus needs: a kernel, the run record
// and a host whose injector a test sets.
type testWorld struct {
	k    *kernel.Kernel
	bus  *Bus
	hist *history.History
	host *kerneltest.Host
}

func busWorld(t *testing.T, cfg history.BusConfig) *testWorld {
	t.Helper()
	env, host, _ := kerneltest.NewEnv(t, 7, true, cordum.System{}.Observer())
	return &testWorld{k: env.Kernel, bus: New(env, cfg), hist: env.History, host: host}
}

// publishAt publishes one message from a client actor at virtual time at.
func publishAt(w *testWorld, at time.Duration, subject, id string) {
	w.k.At(at, func() {
		w.k.Spawn("clients", "pub-"+id, func(ctx context.Context) {
			_ = w.bus.Publisher("clients").Publish(ctx, subject, sut.Message{ID: id, Data: []byte(`{}`)})
		})
	})
}

type deliveryLog struct{ at []time.Duration }

func (d *deliveryLog) handler(w *testWorld, result func(n int) error) Handler {
	return func(ctx context.Context, _ []byte) sut.Settle {
		d.at = append(d.at, w.k.Now())
		return settleOf(result(len(d.at)))
	}
}

// retryAfter is a handler error asking for redelivery after delay.
type retryAfter struct {
	err   error
	delay time.Duration
}

func (r *retryAfter) Error() string { return r.err.Error() }

func settleOf(err error) sut.Settle {
	var ra *retryAfter
	switch {
	case err == nil:
		return sut.Ack()
	case errors.As(err, &ra):
		return sut.NakAfter(ra.delay)
	}
	return sut.Drop(err)
}

func TestBusNakRedeliversAfterDelay(t *testing.T) {
	w := busWorld(t, history.BusConfig{})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", log.handler(w, func(n int) error {
		if n < 3 {
			return &retryAfter{err: errors.New("busy"), delay: 7 * time.Second}
		}
		return nil
	}))
	publishAt(w, time.Second, "s", "m1")
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []time.Duration{time.Second, 8 * time.Second, 15 * time.Second}, log.at)
}

func TestBusRedeliversUnackedAfterAckWait(t *testing.T) {
	w := busWorld(t, history.BusConfig{AckWait: time.Minute})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", func(ctx context.Context, data []byte) sut.Settle {
		log.at = append(log.at, w.k.Now())
		if len(log.at) == 1 {
			// The consumer dies before it acks and comes straight back.
			w.k.CrashGroup("g")
			w.k.RestartGroup("g")
			kernel.ActorOf(ctx).ExitIfDead()
		}
		return sut.Ack()
	})
	publishAt(w, 0, "s", "m1")
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []time.Duration{0, time.Minute}, log.at)
}

func TestBusAckLostRedelivers(t *testing.T) {
	w := busWorld(t, history.BusConfig{AckWait: time.Minute})
	w.host.Injector = injectorFunc(func(p *kernel.Point) (kernel.Fault, bool) {
		if p.Kind == history.PointAck && p.Delivery == 1 {
			return kernel.Fault{Kind: "AckLost", Effect: history.EffectAckLost}, true
		}
		return kernel.Fault{}, false
	})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error { return nil }))
	publishAt(w, 0, "s", "m1")
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []time.Duration{0, time.Minute}, log.at)
}

func TestBusDedupWindow(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		w := busWorld(t, history.BusConfig{Dedup: dedup, DedupWindow: 2 * time.Minute})
		var log deliveryLog
		w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error { return nil }))
		publishAt(w, 0, "s", "same")
		publishAt(w, 119*time.Second, "s", "same") // inside the window
		publishAt(w, 125*time.Second, "s", "same") // outside it (window counts from the stored copy)
		publishAt(w, 10*time.Second, "s", "other")
		require.NoError(t, w.k.Run(time.Hour, nil))
		outcomes := map[history.PublishOutcome]int{}
		for _, p := range w.hist.Publishes {
			outcomes[p.Outcome]++
		}
		if dedup {
			require.Len(t, log.at, 3)
			require.Equal(t, 1, outcomes[history.PublishDeduplicated])
		} else {
			require.Len(t, log.at, 4)
			require.Zero(t, outcomes[history.PublishDeduplicated])
		}
	}
}

func TestBusMaxDeliverTerminates(t *testing.T) {
	w := busWorld(t, history.BusConfig{MaxDeliver: 4})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error {
		return &retryAfter{err: errors.New("never"), delay: time.Second}
	}))
	publishAt(w, 0, "s", "m1")
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Len(t, log.at, 4)
	require.Len(t, w.hist.Terminated, 1)
}

func TestBusQueueGroupDeliversToOneMemberAndFansOutAcrossQueues(t *testing.T) {
	w := busWorld(t, history.BusConfig{})
	var a, b, c deliveryLog
	w.bus.Subscribe("s", "workers", "g1", a.handler(w, func(int) error { return nil }))
	w.bus.Subscribe("s", "workers", "g2", b.handler(w, func(int) error { return nil }))
	w.bus.Subscribe("s", "audit", "g3", c.handler(w, func(int) error { return nil }))
	for i := range 20 {
		publishAt(w, time.Duration(i)*time.Second, "s", "")
	}
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, 20, len(a.at)+len(b.at))
	require.NotZero(t, len(a.at))
	require.NotZero(t, len(b.at))
	require.Len(t, c.at, 20)
}

func TestPublishFaultsRecordGroundTruth(t *testing.T) {
	w := busWorld(t, history.BusConfig{})
	effects := []history.Effect{history.EffectFailClean, history.EffectFailStored}
	w.host.Injector = injectorFunc(func(p *kernel.Point) (kernel.Fault, bool) {
		if p.Kind != history.PointPublish || len(effects) == 0 {
			return kernel.Fault{}, false
		}
		e := effects[0]
		effects = effects[1:]
		return kernel.Fault{Kind: string(e), Effect: e}, true
	})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error { return nil }))
	var errs []error
	for i := range 3 {
		w.k.At(time.Duration(i)*time.Second, func() {
			w.k.Spawn("clients", "pub", func(ctx context.Context) {
				errs = append(errs, w.bus.Publisher("clients").Publish(ctx, "s", sut.Message{Data: []byte(`{}`)}))
			})
		})
	}
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Len(t, errs, 3)
	require.Error(t, errs[0])
	require.Error(t, errs[1])
	require.NoError(t, errs[2])
	require.Equal(t, history.PublishFailedClean, w.hist.Publishes[0].Outcome)
	require.Equal(t, history.PublishFailedStored, w.hist.Publishes[1].Outcome)
	require.Equal(t, history.PublishStored, w.hist.Publishes[2].Outcome)
	require.Len(t, log.at, 2, "the ambiguous failure was delivered")
}

type injectorFunc func(p *kernel.Point) (kernel.Fault, bool)

func (f injectorFunc) At(p *kernel.Point) (kernel.Fault, bool) { return f(p) }

// countingDecoder is a sut.Handler of T that counts its decodings.
type countingDecoder[T any] struct {
	sut.Handler
	decodes *int
}

func (c countingDecoder[T]) Decode(data []byte) (any, error) {
	*c.decodes++
	return c.Handler.Decode(data)
}

// A message is decoded once for all its queues; a plain payload seen before
// is not decoded again, while one holding references is decoded per message.
func TestBusDecodesOnce(t *testing.T) {
	type plain struct{ N int }
	type withSlice struct{ N []int }
	var plainDecodes, sliceDecodes int
	var gotPlain []plain
	var gotSlice []withSlice
	w := busWorld(t, history.BusConfig{})
	for _, q := range []string{"q1", "q2"} {
		w.bus.SubscribeHandler("p", q, "g", countingDecoder[plain]{
			Handler: sut.JSON("decode", func(_ context.Context, v plain) sut.Settle {
				gotPlain = append(gotPlain, v)
				return sut.Ack()
			}),
			decodes: &plainDecodes,
		})
		w.bus.SubscribeHandler("s", q, "g", countingDecoder[withSlice]{
			Handler: sut.JSON("decode", func(_ context.Context, v withSlice) sut.Settle {
				gotSlice = append(gotSlice, v)
				return sut.Ack()
			}),
			decodes: &sliceDecodes,
		})
	}
	for i, subject := range []string{"p", "p", "s", "s"} {
		data := []byte(`{"N":1}`)
		if subject == "s" {
			data = []byte(`{"N":[1]}`)
		}
		w.k.At(time.Duration(i)*time.Second, func() {
			w.k.Spawn("clients", "pub", func(ctx context.Context) {
				_ = w.bus.Publisher("clients").Publish(ctx, subject, sut.Message{Data: data})
			})
		})
	}
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []plain{{1}, {1}, {1}, {1}}, gotPlain)
	require.Equal(t, 1, plainDecodes, "identical plain payloads decode once")
	require.Len(t, gotSlice, 4)
	require.Equal(t, 2, sliceDecodes, "a payload with references decodes once per message")
	require.True(t, plainType(reflect.TypeFor[sut.Dispatch]()))
	require.False(t, plainType(reflect.TypeFor[sut.Job]()))
	// A wrapper's interface field counts by what it holds.
	type wrapped struct {
		v  any
		ok bool
	}
	require.True(t, plainValue(reflect.ValueOf(wrapped{v: sut.Dispatch{JobID: "j"}})))
	require.False(t, plainValue(reflect.ValueOf(wrapped{v: sut.Job{}})))
	require.False(t, plainValue(reflect.ValueOf(wrapped{})), "nil is not known plain")
	require.False(t, plainValue(reflect.ValueOf(wrapped{v: &sut.Dispatch{}})))
}

// A queue's only member is draining (a replica stopped for a deploy): what
// arrives meanwhile is kept, as a durable consumer keeps it, and delivered
// once the member subscribes again.
func TestBusKeepsMessagesWhileTheOnlyMemberDrains(t *testing.T) {
	w := busWorld(t, history.BusConfig{AckWait: time.Minute})
	var log deliveryLog
	subscribe := func() {
		w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error { return nil }))
	}
	subscribe()
	w.bus.StopDeliveries("g")
	publishAt(w, time.Second, "s", "m1")
	w.k.At(90*time.Second, func() { w.bus.Unsubscribe("g"); subscribe() })
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []time.Duration{90 * time.Second}, log.at, "kept past the drain, delivered as soon as the member returned")
}

// A delivery held back by a delay fault is not handed to a member that
// crashed meanwhile: a dead process runs no handler.
func TestBusDelayedDeliveryAvoidsACrashedMember(t *testing.T) {
	w := busWorld(t, history.BusConfig{AckWait: time.Minute})
	var log deliveryLog
	w.bus.Subscribe("s", "q", "g", log.handler(w, func(int) error { return nil }))
	w.host.Injector = &delayOnce{d: 10 * time.Second}
	publishAt(w, 0, "s", "m1")
	w.k.At(5*time.Second, func() { w.k.CrashGroup("g") })
	w.k.At(30*time.Second, func() { w.k.RestartGroup("g") })
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Equal(t, []time.Duration{60 * time.Second}, log.at, "lost with the member, back after the ack wait")
}

// delayOnce delays the first delivery it is asked about, and no other.
type delayOnce struct {
	d     time.Duration
	fired bool
}

func (o *delayOnce) At(p *kernel.Point) (kernel.Fault, bool) {
	if p.Kind != history.PointDeliver || o.fired {
		return kernel.Fault{}, false
	}
	o.fired = true
	return kernel.Fault{Kind: "DeliveryDelayed", Effect: history.EffectDelay, Duration: o.d}, true
}

// Nor is it handed to the handler of a process that restarted meanwhile:
// the subscription it was meant for went with that process (world-swarm seed
// 6010660: the old engine placed the job from its stale worker registry).
// As with JetStream, the delivery is lost with it, and the ack wait brings
// the message back to the restarted process.
func TestBusDelayedDeliveryGoesToTheRestartedProcess(t *testing.T) {
	w := busWorld(t, history.BusConfig{AckWait: time.Minute})
	var before, after deliveryLog
	w.bus.Subscribe("s", "q", "g", before.handler(w, func(int) error { return nil }))
	w.host.Injector = &delayOnce{d: 10 * time.Second}
	publishAt(w, 0, "s", "m1")
	w.k.At(3*time.Second, func() { w.k.CrashGroup("g") })
	w.k.At(5*time.Second, func() {
		w.k.RestartGroup("g")
		w.bus.Unsubscribe("g")
		w.bus.Subscribe("s", "q", "g", after.handler(w, func(int) error { return nil }))
	})
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Empty(t, before.at, "the process that is gone ran no handler")
	require.Equal(t, []time.Duration{time.Minute}, after.at, "the restarted process took it after the ack wait")
}

// A handler's settle of a worker's result names the result: the generation
// and pointer the message carries and its bytes' digest, the worker's report
// holds the same; a cancel's settle carries none.
func TestSettleNamesTheResultItSettled(t *testing.T) {
	w := busWorld(t, history.BusConfig{})
	sys := cordum.System{}
	_, result := sys.Worker().Result(sut.Dispatch{JobID: "j-1", Gen: 2, ID: "d-2"}, "w1", sut.Succeeded)
	w.bus.Subscribe("sys.job.>", "q", "replica-1", func(context.Context, []byte) sut.Settle { return sut.Ack() })
	w.k.Spawn("worker-w1", "report", func(ctx context.Context) {
		_ = w.bus.Publisher("worker-w1").Publish(ctx, "sys.job.result", result)
		_ = w.bus.Publisher("worker-w1").Publish(ctx, "sys.job.cancel", sut.Message{Data: []byte(`{"job_id":"j-1"}`)})
	})
	require.NoError(t, w.k.Run(time.Hour, nil))
	require.Len(t, w.hist.Settles, 2)
	got := w.hist.Settles[0]
	require.Equal(t, 2, got.Gen)
	require.Equal(t, "mem://j-1/d-2", got.ResultPtr)
	require.Equal(t, history.MessageDigest(result.Data), got.Message)
	require.True(t, w.hist.Settles[1].Cancel)
	require.Zero(t, w.hist.Settles[1].Message, "a cancel is no result")
}

// A deployment with a stream per subject keeps a window per subject: one
// message id published on two worker subjects is stored twice, and once on
// the same subject. A subject no stream holds cannot be published to.
func TestBusSplitStreamsKeepAWindowPerSubject(t *testing.T) {
	w := busWorld(t, history.BusConfig{Dedup: true, SplitStreams: true,
		Streams: []sut.Stream{{Name: "JOBS", Subjects: []string{"worker.*.jobs"}}}})
	publishAt(w, 0, "worker.a.jobs", "jobreq:j1")
	publishAt(w, time.Second, "worker.b.jobs", "jobreq:j1")
	publishAt(w, 2*time.Second, "worker.b.jobs", "jobreq:j1")
	publishAt(w, 3*time.Second, "sys.elsewhere", "x")
	require.NoError(t, w.k.Run(time.Minute, nil))
	var got []string
	for _, p := range w.hist.Publishes {
		got = append(got, p.Subject+" "+string(p.Outcome))
	}
	require.Equal(t, []string{"worker.a.jobs stored", "worker.b.jobs stored", "worker.b.jobs deduplicated",
		"sys.elsewhere failed_clean"}, got)
}
