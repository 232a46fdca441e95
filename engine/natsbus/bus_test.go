package natsbus_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/engine/natsbus"
	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
)

// testStreams is a small topology: "a.*" shares one stream (and one duplicate
// window), "b" has its own.
var testStreams = []natsbus.Stream{
	{Name: "A", Subjects: []string{"a.*"}},
	{Name: "B", Subjects: []string{"b"}},
}

func newBus(t *testing.T, cfg natsbus.Config) *natsbus.Bus {
	t.Helper()
	if cfg.Conn == nil {
		cfg.Conn = natsbustest.Connect(t)
	}
	if cfg.Streams == nil {
		cfg.Streams = testStreams
	}
	b, err := natsbus.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Drain(context.Background()) })
	return b
}

// deliveries records when each delivery arrived, and answers it.
type deliveries struct {
	mu     sync.Mutex
	start  time.Time
	at     []time.Duration
	data   []string
	answer func(n int) error
}

func newDeliveries(answer func(n int) error) *deliveries {
	return &deliveries{start: time.Now(), answer: answer}
}

func (d *deliveries) handle(_ context.Context, data []byte) error {
	d.mu.Lock()
	d.at = append(d.at, time.Since(d.start))
	d.data = append(d.data, string(data))
	n := len(d.at)
	d.mu.Unlock()
	return d.answer(n)
}

func (d *deliveries) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.at)
}

func (d *deliveries) times() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.at...)
}

func ack(int) error { return nil }

func publish(t *testing.T, b *natsbus.Bus, subject, id, data string) {
	t.Helper()
	require.NoError(t, b.Publish(context.Background(), subject, engine.Message{ID: id, Data: []byte(data)}))
}

func TestPublishDropsADuplicateInsideTheWindowOfItsStream(t *testing.T) {
	b := newBus(t, natsbus.Config{DuplicateWindow: time.Second, EngineDedupWindow: 500 * time.Millisecond})
	d := newDeliveries(ack)
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "a.*", Queue: "q", Handler: d.handle}))
	e := newDeliveries(ack)
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: e.handle}))

	publish(t, b, "a.1", "x", "first")
	publish(t, b, "a.2", "x", "same stream, inside the window")
	publish(t, b, "b", "x", "another stream")
	time.Sleep(1200 * time.Millisecond)
	publish(t, b, "a.1", "x", "past the window")

	require.Eventually(t, func() bool { return d.count() == 2 && e.count() == 1 }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, []string{"first", "past the window"}, d.data)
	require.Equal(t, []string{"another stream"}, e.data)
}

func TestPublishToASubjectNoStreamHoldsFails(t *testing.T) {
	b := newBus(t, natsbus.Config{})
	err := b.Publish(context.Background(), "nowhere", engine.Message{Data: []byte("x")})
	require.ErrorIs(t, err, jetstream.ErrNoStreamResponse)
}

func TestNewRefusesADuplicateWindowTheEngineOutlives(t *testing.T) {
	_, err := natsbus.New(context.Background(), natsbus.Config{Conn: natsbustest.Connect(t),
		DuplicateWindow: time.Minute, EngineDedupWindow: 90 * time.Second})
	require.ErrorContains(t, err, "must be longer than the engine's dedup window")
}

func TestRetryAfterNaksWithItsDelay(t *testing.T) {
	b := newBus(t, natsbus.Config{})
	d := newDeliveries(func(n int) error {
		if n == 1 {
			return &engine.RetryAfterError{Err: errors.New("busy"), Delay: 400 * time.Millisecond}
		}
		return nil
	})
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: d.handle}))
	publish(t, b, "b", "", "m")
	require.Eventually(t, func() bool { return d.count() == 2 }, 5*time.Second, 10*time.Millisecond)
	at := d.times()
	require.GreaterOrEqual(t, at[1]-at[0], 400*time.Millisecond)
	require.Less(t, at[1]-at[0], 3*time.Second, "a NAK with delay, not the ack wait")
}

// Any other error acks and drops: the message is terminated, never
// redelivered, not even after the ack wait.
func TestOtherErrorsTerminate(t *testing.T) {
	nc := natsbustest.Connect(t)
	b := newBus(t, natsbus.Config{Conn: nc, AckWait: 300 * time.Millisecond})
	d := newDeliveries(func(int) error { return errors.New("permanent") })
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: d.handle}))
	publish(t, b, "b", "", "m")
	require.Eventually(t, func() bool { return d.count() == 1 }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(time.Second)
	require.Equal(t, 1, d.count())
	require.Zero(t, pending(t, nc, "B", natsbus.DurableName("q", "b")))
}

// A decode error is such an error.
func TestUndecodableMessagesTerminate(t *testing.T) {
	b := newBus(t, natsbus.Config{AckWait: 300 * time.Millisecond})
	var calls int
	h := natsbus.JSON(func(context.Context, engine.JobRequest) error { calls++; return nil })
	d := newDeliveries(ack)
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q",
		Handler: func(ctx context.Context, data []byte) error { _ = d.handle(ctx, data); return h(ctx, data) }}))
	publish(t, b, "b", "", "not json")
	time.Sleep(time.Second)
	require.Equal(t, 1, d.count())
	require.Zero(t, calls)
}

func TestMaxDeliverEndsRedelivery(t *testing.T) {
	b := newBus(t, natsbus.Config{MaxDeliver: 3})
	d := newDeliveries(func(int) error {
		return &engine.RetryAfterError{Err: errors.New("never"), Delay: 50 * time.Millisecond}
	})
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: d.handle}))
	publish(t, b, "b", "", "m")
	require.Eventually(t, func() bool { return d.count() == 3 }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 3, d.count())
}

// The members of a queue share its messages; another queue and a fan-out
// subscriber each get every one.
func TestQueuesShareAndFanOut(t *testing.T) {
	nc := natsbustest.Connect(t)
	replica1, replica2 := newBus(t, natsbus.Config{Conn: nc}), newBus(t, natsbus.Config{Conn: nc})
	var member1, member2, audit, fan1, fan2 = newDeliveries(ack), newDeliveries(ack), newDeliveries(ack),
		newDeliveries(ack), newDeliveries(ack)
	ctx := context.Background()
	require.NoError(t, replica1.Subscribe(ctx, natsbus.Subscription{Subject: "b", Queue: "q", Handler: member1.handle}))
	require.NoError(t, replica2.Subscribe(ctx, natsbus.Subscription{Subject: "b", Queue: "q", Handler: member2.handle}))
	require.NoError(t, replica1.Subscribe(ctx, natsbus.Subscription{Subject: "b", Queue: "audit", Handler: audit.handle}))
	require.NoError(t, replica1.Subscribe(ctx, natsbus.Subscription{Subject: "b", Handler: fan1.handle}))
	require.NoError(t, replica2.Subscribe(ctx, natsbus.Subscription{Subject: "b", Handler: fan2.handle}))
	for range 20 {
		publish(t, replica1, "b", "", "m")
	}
	require.Eventually(t, func() bool {
		return member1.count()+member2.count() == 20 && audit.count() == 20 && fan1.count() == 20 && fan2.count() == 20
	}, 5*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, 20, member1.count()+member2.count())
}

// Drain waits for a delivery in hand to finish and settle.
func TestDrainWaitsForHandlers(t *testing.T) {
	nc := natsbustest.Connect(t)
	b := newBus(t, natsbus.Config{Conn: nc})
	started, release := make(chan struct{}), make(chan struct{})
	var acked bool
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q",
		Handler: func(context.Context, []byte) error {
			close(started)
			<-release
			acked = true
			return nil
		}}))
	publish(t, b, "b", "", "m")
	<-started
	drained := make(chan error)
	go func() { drained <- b.Drain(context.Background()) }()
	select {
	case err := <-drained:
		t.Fatalf("drain returned %v while a handler ran", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-drained)
	require.True(t, acked)
	require.Zero(t, pending(t, nc, "B", natsbus.DurableName("q", "b")))
	require.ErrorIs(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q",
		Handler: func(context.Context, []byte) error { return nil }}), natsbus.ErrDraining)
}

// A drain out of time cancels its handlers and hands their messages back at
// once: the queue's other member gets them without waiting for the ack wait.
func TestDrainOutOfTimeHandsMessagesBack(t *testing.T) {
	nc := natsbustest.Connect(t)
	leaving := newBus(t, natsbus.Config{Conn: nc})
	started := make(chan struct{})
	require.NoError(t, leaving.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q",
		Handler: func(ctx context.Context, _ []byte) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}}))
	publish(t, leaving, "b", "", "m")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, leaving.Drain(ctx), context.DeadlineExceeded)

	staying := newBus(t, natsbus.Config{Conn: nc})
	d := newDeliveries(ack)
	require.NoError(t, staying.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: d.handle}))
	require.Eventually(t, func() bool { return d.count() == 1 }, 5*time.Second, 10*time.Millisecond,
		"redelivered long before the 10m ack wait")
}

// pending is a consumer's count of unsettled deliveries.
func pending(t *testing.T, nc *nats.Conn, stream, consumer string) int {
	t.Helper()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	c, err := js.Consumer(context.Background(), stream, consumer)
	require.NoError(t, err)
	info, err := c.Info(context.Background())
	require.NoError(t, err)
	return info.NumAckPending + int(info.NumPending)
}

// Once drained, the bus leaves no goroutine of its own behind: its handlers
// and its consumers' fetch loops have ended.
func TestDrainLeavesNoGoroutines(t *testing.T) {
	nc := natsbustest.Connect(t)
	b, err := natsbus.New(context.Background(), natsbus.Config{Conn: nc, Streams: testStreams})
	require.NoError(t, err)
	d := newDeliveries(ack)
	for _, s := range []natsbus.Subscription{{Subject: "b", Queue: "q", Handler: d.handle}, {Subject: "a.*", Handler: d.handle}} {
		require.NoError(t, b.Subscribe(context.Background(), s))
	}
	for range 10 {
		publish(t, b, "b", "", "m")
	}
	require.Eventually(t, func() bool { return d.count() == 10 }, 5*time.Second, 10*time.Millisecond)
	require.NotZero(t, busGoroutines(), "the walk sees the bus's goroutines")
	require.NoError(t, b.Drain(context.Background()))
	require.Eventually(t, func() bool { return busGoroutines() == 0 }, 5*time.Second, 10*time.Millisecond,
		"goroutines of the bus or its consumers after the drain: %d", busGoroutines())
}

// busGoroutines counts the goroutines running the bus's code or the JetStream
// client's consumers (the connection's own, and the server's, excepted).
func busGoroutines() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "engine/natsbus.") || strings.Contains(g, "nats.go/jetstream.") {
			n++
		}
	}
	return n
}
