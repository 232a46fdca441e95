package live

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// callTimeout bounds one call to the broker made while an actor holds the
// baton: a broker that does not answer must not stall the whole run.
const callTimeout = 5 * time.Second

// fetchBatch is how many messages a member asks for at a time, as the
// engine's own bus does.
const fetchBatch = 64

// Broker is a world's bus on a real JetStream: the streams of the world's
// topology, a durable consumer per queue and subject shared by the queue's
// members, a fan-out consumer per subscriber without a queue.
type Broker struct {
	k    *kernel.Kernel
	hist *history.History
	obs  sut.Observer
	cfg  history.BusConfig
	js   jetstream.JetStream

	open      map[string]*openStream     // by name
	ambiguous map[string]int             // by stream and message id: an unknown outcome's record
	subs      map[string][]*subscription // by group
	draining  map[string]bool
	unsettled map[string]bus.InFlight // by delivery actor name
}

type subscription struct {
	subject, queue, group string
	handler               sut.Handler
	cc                    jetstream.ConsumeContext
	stream, consumer      string
	// gone is set on the controller when the group unsubscribes; deliveries
	// already posted for it are left unsettled (the ack wait returns them).
	gone bool
}

// Connect returns the sim.Live broker factory on nc. Each world's broker
// deletes and recreates the topology's streams, refusing streams that hold
// messages unless flush is set.
func Connect(nc *nats.Conn) func(kernel.Env, history.BusConfig, bool) (*Broker, error) {
	return func(env kernel.Env, cfg history.BusConfig, flush bool) (*Broker, error) {
		return New(env, nc, cfg, flush)
	}
}

// New sets up the topology of cfg on the server nc is connected to.
func New(env kernel.Env, nc *nats.Conn, cfg history.BusConfig, flush bool) (*Broker, error) {
	cfg = cfg.WithDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("nats: jetstream: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*callTimeout)
	defer cancel()
	open := map[string]*openStream{}
	for _, s := range cfg.Streams {
		if st, err := js.Stream(ctx, s.Name); err == nil {
			info, err := st.Info(ctx)
			if err != nil {
				return nil, fmt.Errorf("nats: stream %s: %w", s.Name, err)
			}
			if info.State.Msgs > 0 && !flush {
				return nil, fmt.Errorf("nats: stream %s holds %d messages: a live run needs fresh streams (or --disposable-target to delete them)",
					s.Name, info.State.Msgs)
			}
			if err := js.DeleteStream(ctx, s.Name); err != nil {
				return nil, fmt.Errorf("nats: delete stream %s: %w", s.Name, err)
			}
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("nats: stream %s: %w", s.Name, err)
		}
		sc := jetstream.StreamConfig{Name: s.Name, Subjects: s.Subjects, Storage: jetstream.FileStorage}
		if cfg.Dedup {
			sc.Duplicates = cfg.DedupWindow
		}
		if closed, isOpen := splitOpen(s); isOpen {
			sc.Subjects = closed
			open[s.Name] = &openStream{config: sc, created: len(closed) > 0}
			if len(closed) == 0 {
				continue // created with the first subject the run uses
			}
		}
		if _, err := js.CreateStream(ctx, sc); err != nil {
			return nil, fmt.Errorf("nats: create stream %s: %w", s.Name, err)
		}
	}
	return &Broker{k: env.Kernel, hist: env.History, obs: env.Observer, cfg: cfg, js: js, open: open, ambiguous: map[string]int{},
		subs: map[string][]*subscription{}, draining: map[string]bool{}, unsettled: map[string]bus.InFlight{}}, nil
}

var _ bus.Broker = (*Broker)(nil)

// Publisher returns the bus port a group publishes through.
func (b *Broker) Publisher(group string) sut.Bus { return publisher{b} }

type publisher struct{ b *Broker }

func (p publisher) Publish(ctx context.Context, subject string, msg sut.Message) error {
	return p.b.publish(ctx, subject, msg)
}

// publish is a yield point, as in the simulated bus; the broker's answer
// decides the outcome the history records.
func (b *Broker) publish(ctx context.Context, subject string, msg sut.Message) error {
	k := b.k
	a := k.Current(ctx, "bus publish")
	if a.Exiting() {
		return kernel.ErrActorDead
	}
	a.Yield()
	fact := b.obs.Message(subject, msg.Data)
	rec := history.PublishRecord{Actor: a.Name(), Subject: subject, MsgID: msg.ID, JobID: fact.JobID, Gen: fact.Gen,
		Dispatch: fact.Dispatch}
	m := nats.NewMsg(subject)
	m.Data = msg.Data
	var opts []jetstream.PublishOpt
	if msg.ID != "" && b.cfg.Dedup {
		opts = append(opts, jetstream.WithMsgID(msg.ID))
	}
	hctx, cancel := context.WithTimeout(ctx, callTimeout)
	holdErr := b.hold(hctx, subject)
	cancel()
	var ack *jetstream.PubAck
	err := holdErr
	if err == nil {
		// The wait for the broker's answer lets the rest of the world run.
		a.AwaitOutside(func() {
			pctx, cancel := context.WithTimeout(ctx, callTimeout)
			ack, err = b.js.PublishMsg(pctx, m, opts...)
			cancel()
		})
	}
	rec.Step, rec.Time = k.Step(), k.Now()
	rec.Outcome = publishOutcome(holdErr == nil, ack, err)
	b.settleAmbiguous(subject, msg.ID, rec)
	b.hist.Publishes = append(b.hist.Publishes, rec)
	k.Tracef(a.Name(), "publish %s id=%s -> %s", subject, msg.ID, rec.Outcome)
	a.ExitIfDead() // killed while it waited: what it published is recorded
	if err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}

// publishOutcome is what the history records of a publish from the broker's
// answer: sent says the call was made at all. An error other than "no stream
// listens" leaves it unknown whether the broker stored the message (a call
// that timed out may have landed: the stored side of the ambiguous outcome),
// until a later publish of the id tells (settleAmbiguous).
func publishOutcome(sent bool, ack *jetstream.PubAck, err error) history.PublishOutcome {
	switch {
	case !sent:
		return history.PublishFailedClean
	case errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse):
		return history.PublishFailedClean
	case err != nil:
		return history.PublishFailedStored
	case ack.Duplicate:
		return history.PublishDeduplicated
	}
	return history.PublishStored
}

// SubscribeHandler starts consuming subject for a member of group. Called on
// the controller or by the actor holding the baton.
func (b *Broker) SubscribeHandler(subject, queue, group string, h sut.Handler) {
	s := &subscription{subject: subject, queue: queue, group: group, handler: h}
	if err := b.consume(s); err != nil {
		// The world cannot go on without its consumers; the run fails with
		// the broker's reason.
		panic(fmt.Sprintf("live: subscribe %s for %s: %v", subject, group, err))
	}
	b.subs[group] = append(b.subs[group], s)
}

func (b *Broker) consume(s *subscription) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := b.hold(ctx, s.subject); err != nil {
		return err
	}
	stream, err := b.js.StreamNameBySubject(ctx, s.subject)
	if err != nil {
		return fmt.Errorf("no stream holds it: %w", err)
	}
	cc := jetstream.ConsumerConfig{
		FilterSubject: s.subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       b.cfg.AckWait,
		MaxDeliver:    b.cfg.MaxDeliver,
		MaxAckPending: b.cfg.MaxAckPending,
	}
	if s.queue == "" {
		cc.DeliverPolicy = jetstream.DeliverNewPolicy
		cc.InactiveThreshold = b.cfg.AckWait
	} else {
		cc.Durable = durableName(s.queue, s.subject)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, stream, cc)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	k := b.k
	s.stream, s.consumer = stream, cons.CachedInfo().Name
	s.cc, err = cons.Consume(func(m jetstream.Msg) {
		k.Post(func() { b.deliver(s, m) })
	}, jetstream.PullMaxMessages(fetchBatch))
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	return nil
}

// durableName is the durable consumer of a queue on a subject, as the
// engine's bus names it.
func durableName(queue, subject string) string {
	return queue + "_" + strings.NewReplacer(".", "_", "*", "any", ">", "all", " ", "_").Replace(subject)
}

// deliver runs on the controller: the handler becomes an actor of the
// member's group. A member that is down or draining stops fetching, and what
// it had fetched but not started is handed back at once (a NAK), as the
// simulated bus never delivers to such a member; a delivery whose handler
// was running when its process died still waits for the ack wait.
func (b *Broker) deliver(s *subscription, m jetstream.Msg) {
	k := b.k
	if s.gone || k.Group(s.group).Crashed() || b.draining[s.group] {
		if !s.gone {
			b.stopConsuming(s.group)
		}
		_ = m.Nak() // lost, it comes back after the ack wait all the same
		return
	}
	meta, err := m.Metadata()
	if err != nil {
		return
	}
	subject, data := m.Subject(), m.Data()
	id := m.Headers().Get(jetstream.MsgIDHeader)
	fact := b.obs.Message(subject, data)
	count := int(meta.NumDelivered)
	name := s.subject + "#" + strconv.FormatUint(meta.Sequence.Stream, 10) + "." + strconv.Itoa(count)
	queue := s.queue
	if queue == "" {
		queue = s.group
	}
	// Keyed by the actor's full name: a fan-out message reaches every
	// subscriber under the same sequence and count.
	key := s.group + "/" + name
	b.unsettled[key] = bus.InFlight{Subject: subject, MsgID: id, JobID: fact.JobID, Queue: queue, Delivery: count,
		Group: s.group, Since: k.Now()}
	k.Spawn(s.group, name, func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		defer delete(b.unsettled, key)
		k.Tracef(a.Name(), "deliver %s id=%s n=%d", subject, id, count)
		var settle sut.Settle
		if v, err := s.handler.Decode(data); err != nil {
			settle = sut.Drop(err)
		} else {
			settle = s.handler.Handle(ctx, v)
		}
		b.recordSettle(a, subject, id, data, fact, settle)
		a.Yield() // the ack is a yield point
		var serr error
		switch {
		case settle.NakDelay > 0:
			k.Tracef(a.Name(), "nak %s#%d delay=%s", subject, meta.Sequence.Stream, settle.NakDelay)
			serr = m.NakWithDelay(settle.NakDelay)
		case settle.Dropped != nil:
			k.Tracef(a.Name(), "term (dropped: %v) %s#%d", settle.Dropped, subject, meta.Sequence.Stream)
			serr = m.TermWithReason(settle.Dropped.Error())
		default:
			k.Tracef(a.Name(), "ack %s#%d", subject, meta.Sequence.Stream)
			serr = m.Ack()
		}
		if serr != nil {
			// The broker redelivers after the ack wait: at-least-once holds.
			k.Tracef(a.Name(), "settle of %s#%d failed: %v", subject, meta.Sequence.Stream, serr)
		}
	})
}

// recordSettle keeps the handler's decision on a job message, as the
// simulated bus does.
func (b *Broker) recordSettle(a *kernel.Actor, subject, id string, data []byte, fact sut.MessageFact, settle sut.Settle) {
	if fact.JobID == "" {
		return
	}
	outcome := history.SettleOf(settle)
	var digest uint64
	if !fact.Dispatch && !fact.Cancel {
		digest = history.MessageDigest(data)
	}
	b.hist.Settles = append(b.hist.Settles, history.Settle{Step: b.k.Step(), Time: b.k.Now(), Actor: a.Name(),
		Subject: subject, MsgID: id, JobID: fact.JobID, Cancel: fact.Cancel, Outcome: outcome, Delay: settle.NakDelay,
		Gen: fact.Gen, ResultPtr: fact.ResultPtr, Message: digest})
}

// StopDeliveries hands a group's subscriptions nothing more: it stops
// fetching, as a draining process that closed its consumers.
func (b *Broker) StopDeliveries(group string) {
	b.draining[group] = true
	b.stopConsuming(group)
}

// stopConsuming stops the group's fetches; what they already took and did
// not hand out returns after the ack wait.
func (b *Broker) stopConsuming(group string) {
	for _, s := range b.subs[group] {
		if s.cc != nil {
			s.cc.Stop()
			s.cc = nil
		}
	}
}

// Unsubscribe removes a group's subscriptions (before it resubscribes) and
// deletes its fan-out consumers: a subscriber that returns starts afresh.
func (b *Broker) Unsubscribe(group string) {
	delete(b.draining, group)
	b.stopConsuming(group)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	for _, s := range b.subs[group] {
		s.gone = true
		if s.queue == "" && s.consumer != "" {
			_ = b.js.DeleteConsumer(ctx, s.stream, s.consumer) // an inactive one expires anyway
		}
	}
	delete(b.subs, group)
}

// Unsettled lists the deliveries handlers hold, by actor name.
func (b *Broker) Unsettled() []bus.InFlight {
	names := make([]string, 0, len(b.unsettled))
	for name := range b.unsettled {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]bus.InFlight, 0, len(names))
	for _, name := range names {
		out = append(out, b.unsettled[name])
	}
	return out
}

// Close stops every consumer. Called once the kernel has shut down, so no
// delivery is posted to it any more that anyone reads; the posts a consumer
// makes while stopping are drained here.
func (b *Broker) Close() {
	var wg sync.WaitGroup
	for group := range b.subs {
		for _, s := range b.subs[group] {
			if s.cc != nil {
				s.cc.Stop()
				wg.Add(1)
				go func(cc jetstream.ConsumeContext) { // determinism-ok: live mode only
					defer wg.Done()
					select {
					case <-cc.Closed():
					case <-time.After(callTimeout): // determinism-ok: live mode only
					}
				}(s.cc)
				s.cc = nil
			}
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // determinism-ok: live mode only
	b.k.DiscardPosts(done)
}

// settleAmbiguous learns, from the broker's answer to a publish, what became
// of an earlier publish of the same id whose answer never came (a timeout
// while the broker restarted): inside the stream's duplicate window, a
// later copy the broker calls a duplicate means the earlier one was kept,
// and one it stores means it was not. The history then holds what the
// broker did, not what the publisher could tell.
func (b *Broker) settleAmbiguous(subject, id string, rec history.PublishRecord) {
	if id == "" || !b.cfg.Dedup {
		return
	}
	key := b.cfg.StreamOf(subject) + "\x00" + id
	if i, ok := b.ambiguous[key]; ok {
		earlier := &b.hist.Publishes[i]
		// The earlier copy, if kept, was kept before its call gave up.
		if rec.Time-earlier.Time+callTimeout < b.cfg.DedupWindow {
			switch rec.Outcome {
			case history.PublishStored:
				earlier.Outcome = history.PublishFailedClean
				b.k.Tracef("outside", "publish %s id=%s at step %d: not kept (a later copy was stored)", earlier.Subject, id, earlier.Step)
			case history.PublishDeduplicated:
				b.k.Tracef("outside", "publish %s id=%s at step %d: kept (a later copy was a duplicate)", earlier.Subject, id, earlier.Step)
			default:
				return // the later one knows no more
			}
		}
		delete(b.ambiguous, key)
	}
	if rec.Outcome == history.PublishFailedStored {
		b.ambiguous[key] = len(b.hist.Publishes)
	}
}
