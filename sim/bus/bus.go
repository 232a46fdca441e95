package bus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Handler consumes one raw message and settles it.
type Handler func(ctx context.Context, data []byte) sut.Settle

// Bus is the simulated broker, shaped like a JetStream deployment: streams
// (each a set of subjects with its own duplicate window), durable consumers
// (one per queue and subject, shared by the queue's members: each message to
// one of them) and fan-out consumers (a subscriber's own, started afresh with
// it), acks and NAKs settled by stream sequence, NAK with delay, ack-wait
// redelivery ahead of new messages, max deliver and max ack pending. It
// records what it stored.
type Bus struct {
	k         *kernel.Kernel
	host      kernel.Host
	hist      *history.History
	obs       sut.Observer
	cfg       history.BusConfig
	rng       *rand.Rand
	subs      []*subscription
	streams   map[string]*stream // by name (history.BusConfig.StreamOf)
	bySubject map[string]*stream // streamOf's answers; nil: no stream holds it
	// consumers in the order they were made: deliveries are handed out in it
	consumers []*consumer
	log       []*message      // every stored message, for a durable consumer made later
	members   []*subscription // pump's scratch list
	// decoded payloads of plain types, by handler type and bytes (see decode)
	decoded map[reflect.Type]map[string]any
	seq     uint64
	// unsettled are the deliveries a handler holds, by actor name, for inspection.
	unsettled map[string]InFlight
	// draining are groups handed no more deliveries (StopDeliveries).
	draining map[string]bool
	// settled are the messages settled since RememberSettles, for a broker
	// restart that forgets them (nil: not remembering).
	settled []settledMessage
	// point is the fault point being asked: an injector reads it during the
	// call and keeps nothing, so one serves every publish, delivery and ack.
	point kernel.Point
}

type settledMessage struct {
	c *consumer
	p *pending
}

// stream is what the broker remembers of a stream: the message ids it
// stored, for its duplicate window.
type stream struct {
	seen map[string]time.Duration // message id -> when stored
}

// consumer is JetStream's consumer state: what waits to be delivered, what
// is due again, and what is delivered and unsettled (ack pending).
type consumer struct {
	queue, filter string
	// fanOut: a subscriber's own consumer (owner), gone when it unsubscribes
	fanOut  bool
	owner   string
	deleted bool
	waiting []*message // stored, never delivered, in stream order
	due     []*pending // redeliveries due, handed out before waiting
	pending map[uint64]*pending
}

// pending is a message delivered and not yet settled. Every (re)scheduling
// bumps epoch, so a superseded ack-wait or NAK timer does nothing.
type pending struct {
	m     *message
	count int // deliveries so far
	epoch int
}

type subscription struct {
	subject string // a NATS subject pattern
	queue   string // the queue; "" for fan-out (the group's own consumer)
	group   string // the actor group that runs the handler
	handler Handler
	decoder sut.Handler // instead of handler: takes the decoded message
	// decoderType keys the decoded values: handlers of one Go type decode alike.
	decoderType reflect.Type
	// gone: the group unsubscribed (its process restarted or went away)
	// since; the handler belongs to a process that no longer runs.
	gone bool
	// grp is the kernel's group of that name, which lives as long as the
	// kernel: pump asks whether it crashed for every message.
	grp *kernel.Group
}

// consume runs the subscription's handler on m. A message is decoded once,
// on its first delivery to a handler of a given type, and the value is shared
// by every delivery of it (every queue, every redelivery).
func (b *Bus) consume(ctx context.Context, s *subscription, m *message) sut.Settle {
	if s.decoder == nil {
		return s.handler(ctx, m.data)
	}
	if t := s.decoderType; m.valueType != t {
		m.value, m.valueErr = b.decode(s, m.data)
		m.valueType = t
	}
	if m.valueErr != nil {
		return sut.Drop(m.valueErr)
	}
	return s.decoder.Handle(ctx, m.value)
}

// maxDecoded bounds the decoded payloads kept per handler type.
const maxDecoded = 1024

// decode decodes data for s. A value that holds no references is a pure
// function of the bytes, so identical payloads (a worker's heartbeats repeat)
// share one decoding.
func (b *Bus) decode(s *subscription, data []byte) (any, error) {
	seen := b.decoded[s.decoderType]
	if v, ok := seen[string(data)]; ok {
		return v, nil
	}
	v, err := s.decoder.Decode(data)
	if err != nil || !plainValue(reflect.ValueOf(v)) {
		return v, err
	}
	if seen == nil || len(seen) >= maxDecoded {
		seen = map[string]any{}
		b.decoded[s.decoderType] = seen
	}
	seen[string(data)] = v
	return v, nil
}

// plainValue reports whether v holds no references: a plain type, or a
// struct or array whose interface fields hold plain values (a wrapper that
// decodes a heartbeat twice, say), which no one can change in place.
func plainValue(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	if plainType(v.Type()) {
		return true
	}
	switch v.Kind() {
	case reflect.Interface:
		return !v.IsNil() && plainValue(v.Elem())
	case reflect.Array:
		for i := range v.Len() {
			if !plainValue(v.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range v.NumField() {
			if !plainValue(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// plainType reports whether values of t hold no references.
func plainType(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Array:
		return plainType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainType(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

type message struct {
	seq     uint64
	at      time.Duration // when the broker stored it
	subject string
	id      string
	data    []byte
	jobID   string
	// heartbeat marks worker load reports, which have their own fault kind.
	heartbeat bool
	cancel    bool
	// gen and resultPtr are what a result message reports on (its fact).
	gen       int
	resultPtr string
	// digest names a job message that is neither a dispatch nor a cancel
	// (a worker's result, a job request) by its bytes (history.MessageDigest).
	digest uint64

	// the data decoded by a typedHandler, kept for the next delivery
	valueType reflect.Type
	value     any
	valueErr  error
}

// New returns the bus of a world; which member of a queue gets a message is
// drawn from the "bus" PRNG of the seed tree.
func New(env kernel.Env, cfg history.BusConfig) *Bus {
	cfg = cfg.WithDefaults()
	b := &Bus{k: env.Kernel, host: env.Host, hist: env.History, obs: env.Observer, cfg: cfg,
		rng: env.Seeds.Child("bus"), streams: map[string]*stream{}, bySubject: map[string]*stream{}, unsettled: map[string]InFlight{}, decoded: map[reflect.Type]map[string]any{}}
	return b
}

// Subscribe adds a member to the consumer of (queue, subject), made with the
// first member; queue "" is a fan-out subscriber: a consumer of the group's
// own, from now on, gone when the group unsubscribes.
func (b *Bus) Subscribe(subject, queue, group string, h Handler) {
	b.join(&subscription{subject: subject, queue: queue, group: group, handler: h})
}

// SubscribeHandler is Subscribe for a handler that takes decoded messages: a
// system's handler or a worker.
func (b *Bus) SubscribeHandler(subject, queue, group string, h sut.Handler) {
	b.join(&subscription{subject: subject, queue: queue, group: group, decoder: h, decoderType: reflect.TypeOf(h)})
}

func (b *Bus) join(s *subscription) {
	s.grp = b.k.Group(s.group)
	b.subs = append(b.subs, s)
	c := b.consumerOf(s)
	if c == nil {
		c = &consumer{queue: s.queue, filter: s.subject, pending: map[uint64]*pending{}}
		if s.queue == "" {
			c.fanOut, c.owner = true, s.group
		} else {
			// A durable consumer delivers what its stream already holds.
			for _, m := range b.log {
				if sut.SubjectMatches(c.filter, m.subject) {
					c.waiting = append(c.waiting, m)
				}
			}
		}
		b.consumers = append(b.consumers, c)
	}
	b.pump(c)
}

// consumerOf is the consumer s is a member of, if it exists yet.
func (b *Bus) consumerOf(s *subscription) *consumer {
	for _, c := range b.consumers {
		if c.filter != s.subject {
			continue
		}
		if s.queue == "" && c.fanOut && c.owner == s.group || s.queue != "" && c.queue == s.queue {
			return c
		}
	}
	return nil
}

// member reports whether s serves c.
func (c *consumer) member(s *subscription) bool {
	if s.subject != c.filter {
		return false
	}
	if c.fanOut {
		return s.queue == "" && s.group == c.owner
	}
	return s.queue == c.queue
}

// name is the consumer's queue as inspection reports it.
func (c *consumer) name() string {
	if c.fanOut {
		return c.owner
	}
	return c.queue
}

// StopDeliveries hands a group's subscriptions nothing more, as a draining
// process that closed its consumers; the consumers themselves stay, so what
// arrives meanwhile waits for another member or the group's return, as a
// durable consumer's messages do. Unsubscribe ends it.
func (b *Bus) StopDeliveries(group string) {
	if b.draining == nil {
		b.draining = map[string]bool{}
	}
	b.draining[group] = true
}

// Unsubscribe removes a group's subscriptions (before it resubscribes) and
// its fan-out consumers: a subscriber that returns starts afresh.
func (b *Bus) Unsubscribe(group string) {
	delete(b.draining, group)
	kept := b.subs[:0]
	for _, s := range b.subs {
		if s.group != group {
			kept = append(kept, s)
		} else {
			s.gone = true
		}
	}
	clear(b.subs[len(kept):])
	b.subs = kept
	cs := b.consumers[:0]
	for _, c := range b.consumers {
		if c.fanOut && c.owner == group {
			c.deleted = true
			continue
		}
		cs = append(cs, c)
	}
	clear(b.consumers[len(cs):])
	b.consumers = cs
}

// InFlight is a delivery a handler holds and has not acked yet.
type InFlight struct {
	Subject, MsgID, JobID, Queue, Group string
	Delivery                            int
	Since                               time.Duration
}

// Unsettled lists the deliveries handlers hold, by actor name.
func (b *Bus) Unsettled() []InFlight {
	names := make([]string, 0, len(b.unsettled))
	for name := range b.unsettled {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]InFlight, 0, len(names))
	for _, name := range names {
		out = append(out, b.unsettled[name])
	}
	return out
}

// Publisher returns the bus port a group publishes through.
func (b *Bus) Publisher(group string) sut.Bus { return publisher{b: b, group: group} }

type publisher struct {
	b     *Bus
	group string
}

func (p publisher) Publish(ctx context.Context, subject string, msg sut.Message) error {
	return p.b.publish(ctx, subject, msg)
}

// publish is a yield point and a fault point.
func (b *Bus) publish(ctx context.Context, subject string, msg sut.Message) error {
	k := b.k
	a := k.Current(ctx, "bus publish")
	if a.Exiting() {
		return kernel.ErrActorDead
	}
	a.Yield()
	fact := b.obs.Message(subject, msg.Data)
	jobID := fact.JobID
	rec := history.PublishRecord{Actor: a.Name(), Subject: subject, MsgID: msg.ID, JobID: jobID, Gen: fact.Gen,
		Dispatch: fact.Dispatch}
	p := &b.point
	*p = kernel.Point{Kind: history.PointPublish, Actor: a.Name(), Group: a.Group().Name, Subject: subject, MsgID: msg.ID, JobID: jobID,
		Heartbeat: fact.Heartbeat}
	f, fired := b.host.Fault(p)
	stored := true
	if fired {
		b.host.RecordFault(a, p, f, subject)
		switch f.Effect {
		case history.EffectCrash:
			b.host.Crash(a)
			a.ExitIfDead()
		case history.EffectDelay:
			a.SleepUntil(k.Now() + f.Duration)
		case history.EffectFailClean:
			stored = false
		}
	}
	rec.Step, rec.Time = k.Step(), k.Now()
	failed := fired && (f.Effect == history.EffectFailClean || f.Effect == history.EffectFailStored)
	st := b.streamOf(subject)
	switch {
	case st == nil:
		// No stream holds the subject: JetStream answers no one, the
		// publisher gets an error and nothing is kept.
		rec.Outcome = history.PublishFailedClean
	case !stored:
		rec.Outcome = history.PublishFailedClean
	case b.duplicate(st, msg.ID):
		rec.Outcome = history.PublishDeduplicated
		if failed {
			rec.Outcome = history.PublishFailedClean // the broker kept nothing new
		}
	default:
		rec.Outcome = history.PublishStored
		if failed {
			rec.Outcome = history.PublishFailedStored
		}
		b.store(st, subject, msg, fact)
	}
	b.hist.Publishes = append(b.hist.Publishes, rec)
	line := append(k.TraceStart(a.Name()), "publish "...)
	line = append(append(line, subject...), " id="...)
	line = append(append(line, msg.ID...), " -> "...)
	if st == nil {
		line = append(line, "no stream, "...)
	}
	k.TraceEnd(append(line, rec.Outcome...))
	if st == nil {
		return fmt.Errorf("publish %s: %w", subject, errNoStream)
	}
	if failed {
		return fmt.Errorf("publish %s: %w", subject, errBroker)
	}
	return nil
}

var (
	errBroker   = errors.New("sim: broker unavailable")
	errNoStream = errors.New("sim: no stream holds the subject (no responders)")
)

// streamOf is the stream that holds subject, nil if none does.
func (b *Bus) streamOf(subject string) *stream {
	if st, ok := b.bySubject[subject]; ok {
		return st
	}
	var st *stream
	if name := b.cfg.StreamOf(subject); name != "" {
		st = b.streams[name]
		if st == nil {
			st = &stream{seen: map[string]time.Duration{}}
			b.streams[name] = st
		}
	}
	b.bySubject[subject] = st
	return st
}

// duplicate reports whether the broker drops msgID as seen within the
// stream's window.
func (b *Bus) duplicate(st *stream, id string) bool {
	if !b.cfg.Dedup || id == "" {
		return false
	}
	at, ok := st.seen[id]
	return ok && b.k.Now()-at < b.cfg.DedupWindow
}

func (b *Bus) store(st *stream, subject string, msg sut.Message, fact sut.MessageFact) {
	b.seq++
	m := &message{seq: b.seq, at: b.k.Now(), subject: subject, id: msg.ID, data: msg.Data, jobID: fact.JobID, heartbeat: fact.Heartbeat, cancel: fact.Cancel,
		gen: fact.Gen, resultPtr: fact.ResultPtr}
	if fact.JobID != "" && !fact.Dispatch && !fact.Cancel {
		m.digest = history.MessageDigest(msg.Data) // a worker's result, a job request
	}
	if msg.ID != "" {
		st.seen[msg.ID] = b.k.Now()
	}
	b.log = append(b.log, m)
	for _, c := range b.consumers {
		if sut.SubjectMatches(c.filter, subject) {
			c.waiting = append(c.waiting, m)
			b.pump(c)
		}
	}
}

// pump hands out what c can deliver now: redeliveries due first, then new
// messages while fewer than max ack pending are unsettled, each to a live
// member drawn at random. With no live member, messages wait for one.
func (b *Bus) pump(c *consumer) {
	for !c.deleted {
		members := b.members[:0] // scratch: nothing below delivers before sub is picked
		for _, s := range b.subs {
			if c.member(s) && !s.grp.Crashed() && (len(b.draining) == 0 || !b.draining[s.group]) {
				members = append(members, s)
			}
		}
		b.members = members
		if len(members) == 0 {
			return
		}
		var p *pending
		switch {
		case len(c.due) > 0:
			p = c.due[0]
			c.due = c.due[1:]
		case len(c.waiting) > 0 && len(c.pending) < b.cfg.MaxAckPending:
			m := c.waiting[0]
			c.waiting = c.waiting[1:]
			p = &pending{m: m}
			c.pending[m.seq] = p
		default:
			clear(members)
			return
		}
		sub := members[0]
		if len(members) > 1 {
			sub = members[b.rng.IntN(len(members))]
		}
		clear(members)
		b.send(c, p, sub)
	}
}

// send delivers p to sub: a fault point that may duplicate or hold the
// delivery back. Either way the broker counts it sent now.
func (b *Bus) send(c *consumer, p *pending, sub *subscription) {
	k := b.k
	m := p.m
	if b.host.FaultsArmed() {
		pt := &b.point
		*pt = kernel.Point{Kind: history.PointDeliver, Actor: "bus", Group: sub.group, Subject: m.subject, MsgID: m.id,
			JobID: m.jobID, Delivery: p.count + 1, Heartbeat: m.heartbeat}
		if f, fired := b.host.Fault(pt); fired {
			b.host.RecordFault(nil, pt, f, m.subject)
			switch f.Effect {
			case history.EffectDuplicate:
				// Two copies of one message: both count as deliveries of it,
				// and whichever settles first settles it.
				k.Tracef("bus", "duplicate delivery %s#%d", m.subject, m.seq)
				b.spawnDelivery(c, p, sub)
			case history.EffectDelay:
				d := b.armAckWait(c, p, sub)
				k.At(k.Now()+f.Duration, func() {
					if k.Group(sub.group).Crashed() || b.draining[sub.group] || sub.gone {
						// The member went away while the message was held
						// back: the ack wait brings it back.
						k.Tracef("bus", "delayed delivery %s#%d lost with its member", m.subject, m.seq)
						return
					}
					b.runDelivery(d)
				})
				return
			}
		}
	}
	b.spawnDelivery(c, p, sub)
}

// spawnDelivery counts a delivery of p, arms its ack wait and runs the handler.
func (b *Bus) spawnDelivery(c *consumer, p *pending, sub *subscription) {
	b.runDelivery(b.armAckWait(c, p, sub))
}

// deliveryRun is one delivery of a pending message to a member: its ack wait
// (Fire) and its handler's actor (Run), one value for both.
type deliveryRun struct {
	b     *Bus
	c     *consumer
	p     *pending
	sub   *subscription
	count int    // p.count when it was made
	epoch int    // p.epoch its ack wait belongs to
	actor string // the actor's name (deliveryName)
}

// name is the delivery's name in unsettled: its actor's without the group.
func (d *deliveryRun) name() string { return d.actor[len(d.sub.group)+1:] }

// armAckWait counts a delivery of p and brings p back after the ack wait
// unless it is settled or rescheduled first; by then its handler no longer
// holds it, as far as the broker is concerned.
func (b *Bus) armAckWait(c *consumer, p *pending, sub *subscription) *deliveryRun {
	p.count++
	p.epoch++
	d := &deliveryRun{b: b, c: c, p: p, sub: sub, count: p.count, epoch: p.epoch,
		actor: deliveryName(sub.group, p.m.subject, p.m.seq, p.count)}
	b.k.AtAlarm(b.k.Now()+b.cfg.AckWait, d)
	return d
}

// Fire is the delivery's ack wait running out.
func (d *deliveryRun) Fire() {
	b, c, p := d.b, d.c, d.p
	delete(b.unsettled, d.name())
	if p.epoch != d.epoch || c.pending[p.m.seq] != p {
		return
	}
	b.k.Tracef("bus", "ack wait expired %s#%d", p.m.subject, p.m.seq)
	b.redeliver(c, p)
}

// redeliver puts p back in line, ahead of new messages, or ends it at max
// deliver.
func (b *Bus) redeliver(c *consumer, p *pending) {
	k := b.k
	if c.deleted {
		return
	}
	if p.count >= b.cfg.MaxDeliver {
		delete(c.pending, p.m.seq)
		b.hist.Terminated = append(b.hist.Terminated, history.PublishRecord{Step: k.Step(), Time: k.Now(),
			Subject: p.m.subject, MsgID: p.m.id, JobID: p.m.jobID})
		k.Tracef("bus", "terminated %s#%d after %d deliveries", p.m.subject, p.m.seq, p.count)
		b.pump(c)
		return
	}
	c.due = append(c.due, p)
	b.pump(c)
}

// runDelivery runs the handler as an actor of the member's group and settles
// the message by its sequence: ack, NAK with delay, or term; a settle that
// comes after the ack wait still counts while the message is unsettled.
func (b *Bus) runDelivery(d *deliveryRun) {
	m := d.p.m
	b.unsettled[d.name()] = InFlight{Subject: m.subject, MsgID: m.id, JobID: m.jobID, Queue: d.c.name(),
		Delivery: d.count, Group: d.sub.group, Since: b.k.Now()}
	b.k.SpawnTask(d.sub.group, d.actor, d)
}

// Run is the delivery's actor: the handler, then the ack.
func (d *deliveryRun) Run(ctx context.Context) {
	b, k, c, p, sub, count := d.b, d.b.k, d.c, d.p, d.sub, d.count
	m := p.m
	a := kernel.ActorOf(ctx)
	line := append(k.TraceStart(a.Name()), "deliver "...)
	line = append(append(line, m.subject...), " id="...)
	line = append(append(line, m.id...), " n="...)
	k.TraceEnd(strconv.AppendInt(line, int64(count), 10))
	settle := b.consume(ctx, sub, m)
	b.recordSettle(a, m, settle)
	a.Yield() // the ack is a yield point
	if b.host.FaultsArmed() {
		pt := &b.point
		*pt = kernel.Point{Kind: history.PointAck, Actor: a.Name(), Group: a.Group().Name, Subject: m.subject, MsgID: m.id,
			JobID: m.jobID, Delivery: count, Heartbeat: m.heartbeat}
		if f, fired := b.host.Fault(pt); fired {
			b.host.RecordFault(a, pt, f, m.subject)
			switch f.Effect {
			case history.EffectCrash:
				b.host.Crash(a)
				a.ExitIfDead()
			case history.EffectAckLost:
				k.Tracef(a.Name(), "ack lost %s#%d", m.subject, m.seq)
				return
			case history.EffectAckLate:
				k.Tracef(a.Name(), "ack of %s#%d late past the ack wait", m.subject, m.seq)
				a.SleepUntil(k.Now() + b.cfg.AckWait + f.Duration)
			}
		}
	}
	delete(b.unsettled, d.name())
	b.settle(c, p, a, settle)
}

// settle applies a handler's answer to the message it was given.
func (b *Bus) settle(c *consumer, p *pending, a *kernel.Actor, settle sut.Settle) {
	k := b.k
	m := p.m
	if c.deleted || c.pending[m.seq] != p {
		k.Tracef(a.Name(), "settle of %s#%d ignored: already settled", m.subject, m.seq)
		return
	}
	if delay := settle.NakDelay; delay > 0 {
		k.Tracef(a.Name(), "nak %s#%d delay=%s", m.subject, m.seq, delay)
		p.epoch++
		epoch := p.epoch
		k.At(k.Now()+delay, func() {
			if p.epoch == epoch && c.pending[m.seq] == p {
				b.redeliver(c, p)
			}
		})
		return
	}
	delete(c.pending, m.seq)
	if b.settled != nil {
		b.settled = append(b.settled, settledMessage{c, p})
	}
	if settle.Dropped != nil {
		k.Tracef(a.Name(), "ack (dropped: %v) %s#%d", settle.Dropped, m.subject, m.seq)
	} else {
		line := append(k.TraceStart(a.Name()), "ack "...)
		line = append(append(line, m.subject...), '#')
		k.TraceEnd(strconv.AppendUint(line, m.seq, 10))
	}
	b.pump(c)
}

// recordSettle keeps the handler's decision on a job message: what a
// checker holds against the job's state at that moment.
func (b *Bus) recordSettle(a *kernel.Actor, m *message, settle sut.Settle) {
	if m.jobID == "" {
		return
	}
	outcome := history.SettleOf(settle)
	b.hist.Settles = append(b.hist.Settles, history.Settle{Step: b.k.Step(), Time: b.k.Now(), Actor: a.Name(),
		Subject: m.subject, MsgID: m.id, JobID: m.jobID, Cancel: m.cancel, Outcome: outcome, Delay: settle.NakDelay,
		Gen: m.gen, ResultPtr: m.resultPtr, Message: m.digest})
}

// deliveryName is the delivery actor's name, "group/subject#seq.count",
// built once: its tail after the group is the delivery's name in unsettled.
func deliveryName(group, subject string, seq uint64, count int) string {
	b := make([]byte, 0, len(group)+len(subject)+26)
	b = append(append(b, group...), '/')
	b = append(append(b, subject...), '#')
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, '.')
	return string(strconv.AppendInt(b, int64(count), 10))
}

// Lose is the broker coming back from a crash without the messages it
// stored since since (acknowledged, not yet flushed to disk: JetStream's
// default fsync runs every two minutes): gone from every consumer, their ids
// gone from the duplicate windows. A handler holding one may still settle
// it; the broker no longer knows it. It returns what was lost.
func (b *Bus) Lose(since time.Duration) history.BrokerLoss {
	k := b.k
	loss := history.BrokerLoss{Step: k.Step(), Time: k.Now(), Since: since}
	keep := len(b.log)
	for keep > 0 && b.log[keep-1].at >= since {
		keep--
	}
	lost := map[uint64]bool{}
	jobs := map[string]bool{}
	for _, m := range b.log[keep:] {
		lost[m.seq] = true
		if m.jobID != "" && !jobs[m.jobID] {
			jobs[m.jobID] = true
			loss.Jobs = append(loss.Jobs, m.jobID)
		}
	}
	clear(b.log[keep:])
	b.log = b.log[:keep]
	loss.Messages = len(lost)
	sort.Strings(loss.Jobs)
	for _, c := range b.consumers {
		c.waiting = slices.DeleteFunc(c.waiting, func(m *message) bool { return lost[m.seq] })
		c.due = slices.DeleteFunc(c.due, func(p *pending) bool { return lost[p.m.seq] })
		for seq := range c.pending {
			if lost[seq] {
				delete(c.pending, seq)
			}
		}
	}
	for _, st := range b.streams {
		for id, at := range st.seen {
			if at >= since {
				delete(st.seen, id)
			}
		}
	}
	b.hist.BrokerLosses = append(b.hist.BrokerLosses, loss)
	k.Tracef("bus", "broker lost %d messages stored since %s (jobs %v)", loss.Messages, since, loss.Jobs)
	for _, c := range b.consumers {
		b.pump(c) // slots freed
	}
	return loss
}

// RememberSettles starts keeping the messages settled from now on, for
// ForgetSettles.
func (b *Bus) RememberSettles() {
	if b.settled == nil {
		b.settled = []settledMessage{}
	}
}

// ForgetSettles is a broker restart that lost the acks (and terms) it took
// since RememberSettles: those messages are unsettled again and delivered
// anew, ahead of new ones, as nats-server did during rolling restarts. A
// handler must take a message it already handled again; nothing excuses what
// follows. It returns how many came back.
func (b *Bus) ForgetSettles() int {
	k := b.k
	n := 0
	for _, s := range b.settled {
		c, p := s.c, s.p
		if c.deleted || c.pending[p.m.seq] != nil || !b.holds(p.m) {
			continue
		}
		c.pending[p.m.seq] = p
		p.epoch++
		c.due = append(c.due, p)
		n++
	}
	b.settled = nil
	k.Tracef("bus", "broker restarted: %d settled messages unsettled again", n)
	for _, c := range b.consumers {
		b.pump(c)
	}
	return n
}

// holds reports whether the broker still has m (a loss may have taken it).
func (b *Bus) holds(m *message) bool {
	i := sort.Search(len(b.log), func(i int) bool { return b.log[i].seq >= m.seq })
	return i < len(b.log) && b.log[i] == m
}
