// Package natsbus is the engine's bus on NATS JetStream, as every real
// deployment runs it: streams holding the engine's subjects with the
// Nats-Msg-Id header and a duplicate window, durable queue consumers (one per
// queue and subject, shared by the queue's members), fan-out consumers for a
// subscription without a queue, and the handler contract of engine.Bus:
// nil acks, an engine.RetryAfterError NAKs with its delay, any other error
// terminates the message (acked, never redelivered).
//
// It is production code: it never runs inside a simulation, so it may start
// goroutines and wait on the wall clock. It owns no connection; the caller's
// *nats.Conn outlives it.
package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dispatchsim/dispatchsim/engine"
)

// Handler consumes one message. Its error settles the delivery: see the
// package comment.
type Handler func(ctx context.Context, data []byte) error

// Subscription is a consumer: Subject (wildcards allowed, inside one stream)
// delivered once per Queue to one of its members; an empty Queue gives this
// subscriber every message published from now on (fan-out).
type Subscription struct {
	Subject string
	Queue   string
	Handler Handler
}

// Bus publishes to JetStream and runs handlers for its subscriptions.
type Bus struct {
	cfg Config
	js  jetstream.JetStream

	// handlerCtx is every handler's context; cancelled when a drain runs out
	// of time.
	handlerCtx    context.Context
	cancelHandles context.CancelFunc
	handlers      sync.WaitGroup

	mu       sync.Mutex
	consumes []consuming
	draining bool
}

type consuming struct {
	ctx       jetstream.ConsumeContext
	stream    string
	consumer  string
	ephemeral bool // a fan-out consumer, deleted on drain
}

var _ engine.Bus = (*Bus)(nil)

// New creates or updates the configured streams and returns a bus on them.
func New(ctx context.Context, cfg Config) (*Bus, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("natsbus: jetstream: %w", err)
	}
	for _, s := range cfg.Streams {
		window := cfg.DuplicateWindow
		if s.MaxAge > 0 {
			window = min(window, s.MaxAge) // JetStream forgets ids with the messages
		}
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       s.Name,
			Subjects:   s.Subjects,
			Duplicates: window,
			MaxAge:     s.MaxAge,
			Storage:    jetstream.FileStorage,
		})
		if err != nil {
			return nil, fmt.Errorf("natsbus: stream %s: %w", s.Name, err)
		}
	}
	hctx, cancel := context.WithCancel(context.Background())
	return &Bus{cfg: cfg, js: js, handlerCtx: hctx, cancelHandles: cancel}, nil
}

// Publish stores msg on the stream that holds subject, with msg.ID as its
// de-duplication id. A subject no stream holds is an error, not a silent loss.
func (b *Bus) Publish(ctx context.Context, subject string, msg engine.Message) error {
	m := nats.NewMsg(subject)
	m.Data = msg.Data
	var opts []jetstream.PublishOpt
	if msg.ID != "" {
		opts = append(opts, jetstream.WithMsgID(msg.ID))
	}
	if _, err := b.js.PublishMsg(ctx, m, opts...); err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}

// Subscribe starts consuming s. Members of one queue share a durable consumer,
// so a message goes to one of them, and one that is unsettled when its member
// leaves goes to another after the ack wait.
func (b *Bus) Subscribe(ctx context.Context, s Subscription) error {
	if s.Handler == nil {
		return errors.New("natsbus: subscription without a handler")
	}
	b.mu.Lock()
	draining := b.draining
	b.mu.Unlock()
	if draining {
		return fmt.Errorf("subscribe %s: %w", s.Subject, ErrDraining)
	}
	stream, err := b.js.StreamNameBySubject(ctx, s.Subject)
	if err != nil {
		return fmt.Errorf("subscribe %s: no stream holds it: %w", s.Subject, err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, stream, b.consumerConfig(s))
	if err != nil {
		return fmt.Errorf("subscribe %s: consumer: %w", s.Subject, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { b.dispatch(s.Handler, m) },
		jetstream.PullMaxMessages(b.cfg.FetchBatch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			b.cfg.Logger.Warn("consume", "subject", s.Subject, "queue", s.Queue, "error", err)
		}))
	if err != nil {
		return fmt.Errorf("subscribe %s: consume: %w", s.Subject, err)
	}
	b.mu.Lock()
	b.consumes = append(b.consumes, consuming{ctx: cc, stream: stream, consumer: cons.CachedInfo().Name,
		ephemeral: s.Queue == ""})
	b.mu.Unlock()
	return nil
}

// ErrDraining is returned by Subscribe once Drain has started.
var ErrDraining = errors.New("natsbus: bus is draining")

func (b *Bus) consumerConfig(s Subscription) jetstream.ConsumerConfig {
	c := jetstream.ConsumerConfig{
		FilterSubject: s.Subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       b.cfg.AckWait,
		MaxDeliver:    b.cfg.MaxDeliver,
		MaxAckPending: b.cfg.MaxAckPending,
	}
	if s.Queue == "" {
		// Fan-out: this subscriber's own consumer, from now on, gone when
		// the subscriber is (drained, or silent past the ack wait).
		c.DeliverPolicy = jetstream.DeliverNewPolicy
		c.InactiveThreshold = b.cfg.AckWait
		return c
	}
	c.Durable = DurableName(s.Queue, s.Subject)
	return c
}

// DurableName is the durable consumer of a queue on a subject: the two
// joined, with the characters a consumer name may not hold replaced.
func DurableName(queue, subject string) string {
	return queue + "_" + strings.NewReplacer(".", "_", "*", "any", ">", "all", " ", "_").Replace(subject)
}

// dispatch runs the handler on its own goroutine: a consumer's concurrency is
// bounded by MaxAckPending, not by one handler at a time.
func (b *Bus) dispatch(h Handler, m jetstream.Msg) {
	b.handlers.Add(1)
	go func() { // determinism-ok: production bus, never run in a simulation
		defer b.handlers.Done()
		b.settle(m, h(b.handlerCtx, m.Data()))
	}()
}

// settle applies the handler contract to one delivery.
func (b *Bus) settle(m jetstream.Msg, err error) {
	var settleErr error
	delay, retry := engine.AsRetryAfter(err)
	switch {
	case err == nil:
		settleErr = m.Ack()
	case b.handlerCtx.Err() != nil:
		// Cut short by a drain that ran out of time: another member takes
		// it now rather than after the ack wait.
		settleErr = m.Nak()
	case retry:
		settleErr = m.NakWithDelay(delay)
	default:
		b.cfg.Logger.Warn("message terminated", "subject", m.Subject(), "error", err)
		settleErr = m.TermWithReason(err.Error())
	}
	if settleErr != nil {
		// The broker redelivers after the ack wait: at-least-once holds.
		b.cfg.Logger.Warn("settle", "subject", m.Subject(), "error", settleErr)
	}
}

// Drain stops fetching, lets every delivery already taken finish and settle,
// and deletes this bus's fan-out consumers. If ctx ends first, running
// handlers see their context cancelled and their messages are NAKed; Drain
// still waits for them to return, so no goroutine outlives it.
func (b *Bus) Drain(ctx context.Context) error {
	b.mu.Lock()
	b.draining = true
	consumes := b.consumes
	b.consumes = nil
	b.mu.Unlock()

	for _, c := range consumes {
		c.ctx.Drain()
	}
	done := make(chan struct{})
	go func() { // determinism-ok: production bus, never run in a simulation
		for _, c := range consumes {
			<-c.ctx.Closed()
		}
		b.handlers.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("natsbus: drain: %w", ctx.Err())
		b.cancelHandles()
		for _, c := range consumes {
			c.ctx.Stop()
		}
		<-done
	}
	b.cancelHandles()
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	for _, c := range consumes {
		if !c.ephemeral {
			continue
		}
		if derr := b.js.DeleteConsumer(cleanup, c.stream, c.consumer); derr != nil &&
			!errors.Is(derr, jetstream.ErrConsumerNotFound) {
			err = errors.Join(err, fmt.Errorf("natsbus: delete consumer %s: %w", c.consumer, derr))
		}
	}
	return err
}
