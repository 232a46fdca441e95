package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
)

// BusConfig is the simulated broker's behaviour, modelled on a JetStream
// deployment. Zero values mean the defaults noted.
type BusConfig struct {
	// Dedup drops a publish whose message id was stored within DedupWindow.
	Dedup       bool
	DedupWindow time.Duration // 2m
	AckWait     time.Duration // 10m: an unacked delivery comes back after this
	MaxDeliver  int           // 100: then the message is terminated
}

func (c BusConfig) withDefaults() BusConfig {
	if c.DedupWindow == 0 {
		c.DedupWindow = 2 * time.Minute
	}
	if c.AckWait == 0 {
		c.AckWait = 10 * time.Minute
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 100
	}
	return c
}

// Handler consumes one message: nil acks it, an error carrying a retry-after
// delay (engine.AsRetryAfter) NAKs it with that delay, any other error acks and
// drops it.
type Handler func(ctx context.Context, data []byte) error

// Bus is the simulated broker: subjects, queue groups (each message goes to one
// member of each queue), acks, NAK delays, ack-wait redelivery, max deliver and
// optional de-duplication by message id. It records what it stored.
type Bus struct {
	w       *World
	cfg     BusConfig
	rng     *rand.Rand
	subs    []*subscription
	seen    map[string]time.Duration // message id -> when stored
	members []*subscription          // deliver's scratch list
	// decoded payloads of plain types, by type and bytes (see decode)
	decoded map[reflect.Type]map[string]any
	seq     uint64
	// inflight counts deliveries not yet settled (acked, dropped or terminated).
	inflight int
	// unsettled are the deliveries a handler holds, by actor name, for inspection.
	unsettled map[string]InFlight
}

type subscription struct {
	subject string // exact, or a prefix ending in '>'
	queue   string // consumer name: one delivery per queue per message
	group   string // the actor group that runs the handler
	handler Handler
	typed   typedHandler // instead of handler: takes the decoded message
}

// typedHandler consumes messages decoded into one Go type. A message is
// decoded once, on its first delivery to a typedHandler of that type, and the
// value is shared by every delivery of it (every queue, every redelivery):
// handlers must not change what they are given.
type typedHandler interface {
	valueType() reflect.Type
	// plainValue is true when the type holds no references (no pointers,
	// slices, maps or interfaces): a decoded value can then be shared freely.
	plainValue() bool
	decode(data []byte) (any, error)
	handle(ctx context.Context, v any) error
}

// consume runs the subscription's handler on m.
func (b *Bus) consume(ctx context.Context, s *subscription, m *message) error {
	if s.typed == nil {
		return s.handler(ctx, m.data)
	}
	if t := s.typed.valueType(); m.valueType != t {
		m.value, m.valueErr = b.decode(s.typed, m.data)
		m.valueType = t
	}
	if m.valueErr != nil {
		return m.valueErr
	}
	return s.typed.handle(ctx, m.value)
}

// maxDecoded bounds the decoded payloads kept per type.
const maxDecoded = 1024

// decode decodes data for h. A plain value is a pure function of the bytes,
// so identical payloads (a worker's heartbeats repeat) share one decoding.
func (b *Bus) decode(h typedHandler, data []byte) (any, error) {
	if !h.plainValue() {
		return h.decode(data)
	}
	t := h.valueType()
	seen := b.decoded[t]
	if v, ok := seen[string(data)]; ok {
		return v, nil
	}
	v, err := h.decode(data)
	if err != nil {
		return nil, err
	}
	if seen == nil || len(seen) >= maxDecoded {
		seen = map[string]any{}
		b.decoded[t] = seen
	}
	seen[string(data)] = v
	return v, nil
}

// plainType reports whether values of t hold no references.
func plainType(t reflect.Type) bool {
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

func (s *subscription) matches(subject string) bool {
	if p, ok := strings.CutSuffix(s.subject, ">"); ok {
		return strings.HasPrefix(subject, p)
	}
	return s.subject == subject
}

type message struct {
	seq     uint64
	subject string
	id      string
	data    []byte
	jobID   string

	// the data decoded by a typedHandler, kept for the next delivery
	valueType reflect.Type
	value     any
	valueErr  error
}

func newBus(w *World, cfg BusConfig, rng *rand.Rand) *Bus {
	return &Bus{w: w, cfg: cfg.withDefaults(), rng: rng, seen: map[string]time.Duration{}, unsettled: map[string]InFlight{},
		decoded: map[reflect.Type]map[string]any{}}
}

// Subscribe adds a consumer. Subscriptions of a crashed group receive nothing
// until the group resubscribes.
func (b *Bus) Subscribe(subject, queue, group string, h Handler) {
	b.subs = append(b.subs, &subscription{subject: subject, queue: queue, group: group, handler: h})
}

// subscribeDecoded adds a consumer that takes decoded messages.
func (b *Bus) subscribeDecoded(subject, queue, group string, h typedHandler) {
	b.subs = append(b.subs, &subscription{subject: subject, queue: queue, group: group, typed: h})
}

// unsubscribeGroup removes a group's subscriptions (before it resubscribes).
func (b *Bus) unsubscribeGroup(group string) {
	kept := b.subs[:0]
	for _, s := range b.subs {
		if s.group != group {
			kept = append(kept, s)
		}
	}
	b.subs = kept
}

// Publisher returns the engine.Bus a group publishes through.
func (b *Bus) Publisher(group string) engine.Bus { return publisher{b: b, group: group} }

type publisher struct {
	b     *Bus
	group string
}

func (p publisher) Publish(ctx context.Context, subject string, msg engine.Message) error {
	return p.b.publish(ctx, subject, msg)
}

// publish is a yield point and a fault point.
func (b *Bus) publish(ctx context.Context, subject string, msg engine.Message) error {
	w, k := b.w, b.w.k
	a := k.mustCurrent(ctx, "bus publish")
	if a.exiting {
		return errActorDead
	}
	a.Yield()
	jobID, gen := w.cfg.MessageJob(subject, msg.Data)
	rec := PublishRecord{Actor: a.name, Subject: subject, MsgID: msg.ID, JobID: jobID, Gen: gen}
	p := &Point{Kind: PointPublish, Actor: a.name, Group: a.grp.Name, Subject: subject, MsgID: msg.ID, JobID: jobID}
	f, fired := w.fault(p)
	stored := true
	if fired {
		w.recordFault(a, p, f, subject)
		switch f.Effect {
		case EffectCrash:
			w.crash(a)
			a.exitIfDead()
		case EffectDelay:
			a.SleepUntil(k.now + f.Duration)
		case EffectFailClean:
			stored = false
		}
	}
	rec.Step, rec.Time = k.step, k.now
	failed := fired && (f.Effect == EffectFailClean || f.Effect == EffectFailStored)
	switch {
	case !stored:
		rec.Outcome = PublishFailedClean
	case b.duplicate(msg.ID):
		rec.Outcome = PublishDeduplicated
		if failed {
			rec.Outcome = PublishFailedClean // the broker kept nothing new
		}
	default:
		rec.Outcome = PublishStored
		if failed {
			rec.Outcome = PublishFailedStored
		}
		b.store(subject, msg, jobID)
	}
	w.hist.Publishes = append(w.hist.Publishes, rec)
	line := append(k.traceStart(a.name), "publish "...)
	line = append(append(line, subject...), " id="...)
	line = append(append(line, msg.ID...), " -> "...)
	k.traceEnd(append(line, rec.Outcome...))
	if failed {
		return fmt.Errorf("publish %s: %w", subject, errBroker)
	}
	return nil
}

var errBroker = fmt.Errorf("sim: broker unavailable")

// duplicate reports whether the broker drops msgID as seen within its window.
func (b *Bus) duplicate(id string) bool {
	if !b.cfg.Dedup || id == "" {
		return false
	}
	at, ok := b.seen[id]
	return ok && b.w.k.now-at < b.cfg.DedupWindow
}

func (b *Bus) store(subject string, msg engine.Message, jobID string) {
	b.seq++
	m := &message{seq: b.seq, subject: subject, id: msg.ID, data: msg.Data, jobID: jobID}
	if msg.ID != "" {
		b.seen[msg.ID] = b.w.k.now
	}
	var queues []string
	for _, s := range b.subs {
		if s.matches(subject) && !contains(queues, s.queue) {
			queues = append(queues, s.queue)
		}
	}
	for _, q := range queues {
		b.deliver(m, q, 1)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// deliver hands m to one live member of queue, as a new actor. With no live
// member the message waits an ack-wait and tries again, like a durable consumer.
func (b *Bus) deliver(m *message, queue string, count int) {
	k := b.w.k
	if count > b.cfg.MaxDeliver {
		b.w.hist.Terminated = append(b.w.hist.Terminated, PublishRecord{Step: k.step, Time: k.now,
			Subject: m.subject, MsgID: m.id, JobID: m.jobID})
		k.tracef("bus", "terminated %s#%d after %d deliveries", m.subject, m.seq, count-1)
		return
	}
	members := b.members[:0] // scratch: nothing below delivers before sub is picked
	for _, s := range b.subs {
		if s.queue == queue && s.matches(m.subject) && !k.group(s.group).crashed {
			members = append(members, s)
		}
	}
	b.members = members
	if len(members) == 0 {
		k.addTimer(k.now+b.cfg.AckWait, nil, func() { b.deliver(m, queue, count) })
		return
	}
	sub := members[0]
	if len(members) > 1 {
		sub = members[b.rng.IntN(len(members))]
	}
	clear(members)
	if b.w.faultsArmed() {
		p := &Point{Kind: PointDeliver, Actor: "bus", Group: sub.group, Subject: m.subject, MsgID: m.id,
			JobID: m.jobID, Delivery: count}
		if f, fired := b.w.fault(p); fired {
			b.w.recordFault(nil, p, f, m.subject)
			switch f.Effect {
			case EffectDuplicate:
				k.tracef("bus", "duplicate delivery %s#%d", m.subject, m.seq)
				b.spawnDelivery(m, queue, sub, count)
			case EffectDelay:
				k.addTimer(k.now+f.Duration, nil, func() { b.spawnDelivery(m, queue, sub, count) })
				return
			}
		}
	}
	b.spawnDelivery(m, queue, sub, count)
}

// spawnDelivery runs the handler as an actor of the member's group and settles
// the delivery: ack, NAK with delay, or (no ack in time) redelivery after ack wait.
func (b *Bus) spawnDelivery(m *message, queue string, sub *subscription, count int) {
	k := b.w.k
	settled := false
	b.inflight++
	name := deliveryName(m.subject, m.seq, count)
	b.unsettled[name] = InFlight{Subject: m.subject, MsgID: m.id, JobID: m.jobID, Queue: queue, Delivery: count,
		Group: sub.group, Since: k.now}
	k.addTimer(k.now+b.cfg.AckWait, nil, func() {
		if !settled {
			settled = true
			b.inflight--
			delete(b.unsettled, name)
			k.tracef("bus", "ack wait expired %s#%d", m.subject, m.seq)
			b.deliver(m, queue, count+1)
		}
	})
	k.Spawn(sub.group, name, func(ctx context.Context) {
		a := ActorOf(ctx)
		line := append(k.traceStart(a.name), "deliver "...)
		line = append(append(line, m.subject...), " id="...)
		line = append(append(line, m.id...), " n="...)
		k.traceEnd(strconv.AppendInt(line, int64(count), 10))
		err := b.consume(ctx, sub, m)
		a.Yield() // the ack is a yield point
		if b.w.faultsArmed() {
			p := &Point{Kind: PointAck, Actor: a.name, Group: a.grp.Name, Subject: m.subject, MsgID: m.id,
				JobID: m.jobID, Delivery: count}
			if f, fired := b.w.fault(p); fired {
				b.w.recordFault(a, p, f, m.subject)
				switch f.Effect {
				case EffectCrash:
					b.w.crash(a)
					a.exitIfDead()
				case EffectAckLost:
					k.tracef(a.name, "ack lost %s#%d", m.subject, m.seq)
					return
				}
			}
		}
		if settled {
			return // ack wait already expired: the broker redelivered
		}
		settled = true
		b.inflight--
		delete(b.unsettled, name)
		if err != nil { // checked first: AsRetryAfter allocates even for nil
			if delay, nak := engine.AsRetryAfter(err); nak {
				k.tracef(a.name, "nak %s#%d delay=%s", m.subject, m.seq, delay)
				b.inflight++
				k.addTimer(k.now+delay, nil, func() { b.inflight--; b.deliver(m, queue, count+1) })
				return
			}
			k.tracef(a.name, "ack (dropped: %v) %s#%d", err, m.subject, m.seq)
			return
		}
		line = append(k.traceStart(a.name), "ack "...)
		line = append(append(line, m.subject...), '#')
		k.traceEnd(strconv.AppendUint(line, m.seq, 10))
	})
}

// deliveryName is the delivery actor's name, "subject#seq.count".
func deliveryName(subject string, seq uint64, count int) string {
	b := make([]byte, 0, len(subject)+24)
	b = append(append(b, subject...), '#')
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, '.')
	return string(strconv.AppendInt(b, int64(count), 10))
}
