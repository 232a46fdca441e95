package bus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Handler consumes one raw message and settles it.
type Handler func(ctx context.Context, data []byte) sut.Settle

// Bus is the simulated broker: subjects, queue groups (each message goes to one
// member of each queue), acks, NAK delays, ack-wait redelivery, max deliver and
// optional de-duplication by message id. It records what it stored.
type Bus struct {
	k       *kernel.Kernel
	host    kernel.Host
	hist    *history.History
	obs     sut.Observer
	cfg     history.BusConfig
	rng     *rand.Rand
	subs    []*subscription
	seen    map[string]time.Duration // message id -> when stored
	members []*subscription          // deliver's scratch list
	// decoded payloads of plain types, by handler type and bytes (see decode)
	decoded map[reflect.Type]map[string]any
	seq     uint64
	// inflight counts deliveries not yet settled (acked, dropped or terminated).
	inflight int
	// unsettled are the deliveries a handler holds, by actor name, for inspection.
	unsettled map[string]InFlight
	// draining are groups handed no more deliveries (StopDeliveries).
	draining map[string]bool
}

type subscription struct {
	subject string // exact, or a prefix ending in '>'
	queue   string // consumer name: one delivery per queue per message
	group   string // the actor group that runs the handler
	handler Handler
	decoder sut.Handler // instead of handler: takes the decoded message
	// decoderType keys the decoded values: handlers of one Go type decode alike.
	decoderType reflect.Type
	// gone: the group unsubscribed (its process restarted or went away)
	// since; the handler belongs to a process that no longer runs.
	gone bool
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
	if err != nil || !plainType(reflect.TypeOf(v)) {
		return v, err
	}
	if seen == nil || len(seen) >= maxDecoded {
		seen = map[string]any{}
		b.decoded[s.decoderType] = seen
	}
	seen[string(data)] = v
	return v, nil
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
	return &Bus{k: env.Kernel, host: env.Host, hist: env.History, obs: env.Observer, cfg: cfg.WithDefaults(),
		rng: env.Seeds.Child("bus"), seen: map[string]time.Duration{}, unsettled: map[string]InFlight{},
		decoded: map[reflect.Type]map[string]any{}}
}

// Subscribe adds a consumer. Subscriptions of a crashed group receive nothing
// until the group resubscribes.
func (b *Bus) Subscribe(subject, queue, group string, h Handler) {
	b.subs = append(b.subs, &subscription{subject: subject, queue: queue, group: group, handler: h})
}

// SubscribeHandler adds a consumer that takes decoded messages: a system's
// handler or a worker.
func (b *Bus) SubscribeHandler(subject, queue, group string, h sut.Handler) {
	b.subs = append(b.subs, &subscription{subject: subject, queue: queue, group: group, decoder: h,
		decoderType: reflect.TypeOf(h)})
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

// Unsubscribe removes a group's subscriptions (before it resubscribes).
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
	b.subs = kept
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
	p := &kernel.Point{Kind: history.PointPublish, Actor: a.Name(), Group: a.Group().Name, Subject: subject, MsgID: msg.ID, JobID: jobID,
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
	switch {
	case !stored:
		rec.Outcome = history.PublishFailedClean
	case b.duplicate(msg.ID):
		rec.Outcome = history.PublishDeduplicated
		if failed {
			rec.Outcome = history.PublishFailedClean // the broker kept nothing new
		}
	default:
		rec.Outcome = history.PublishStored
		if failed {
			rec.Outcome = history.PublishFailedStored
		}
		b.store(subject, msg, fact)
	}
	b.hist.Publishes = append(b.hist.Publishes, rec)
	line := append(k.TraceStart(a.Name()), "publish "...)
	line = append(append(line, subject...), " id="...)
	line = append(append(line, msg.ID...), " -> "...)
	k.TraceEnd(append(line, rec.Outcome...))
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
	return ok && b.k.Now()-at < b.cfg.DedupWindow
}

func (b *Bus) store(subject string, msg sut.Message, fact sut.MessageFact) {
	b.seq++
	m := &message{seq: b.seq, subject: subject, id: msg.ID, data: msg.Data, jobID: fact.JobID, heartbeat: fact.Heartbeat, cancel: fact.Cancel,
		gen: fact.Gen, resultPtr: fact.ResultPtr}
	if fact.JobID != "" && !fact.Dispatch && !fact.Cancel {
		m.digest = history.MessageDigest(msg.Data) // a worker's result, a job request
	}
	if msg.ID != "" {
		b.seen[msg.ID] = b.k.Now()
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
	k := b.k
	if count > b.cfg.MaxDeliver {
		b.hist.Terminated = append(b.hist.Terminated, history.PublishRecord{Step: k.Step(), Time: k.Now(),
			Subject: m.subject, MsgID: m.id, JobID: m.jobID})
		k.Tracef("bus", "terminated %s#%d after %d deliveries", m.subject, m.seq, count-1)
		return
	}
	members := b.members[:0] // scratch: nothing below delivers before sub is picked
	for _, s := range b.subs {
		if s.queue == queue && s.matches(m.subject) && !k.Group(s.group).Crashed() && !b.draining[s.group] {
			members = append(members, s)
		}
	}
	b.members = members
	if len(members) == 0 {
		k.At(k.Now()+b.cfg.AckWait, func() { b.deliver(m, queue, count) })
		return
	}
	sub := members[0]
	if len(members) > 1 {
		sub = members[b.rng.IntN(len(members))]
	}
	clear(members)
	if b.host.FaultsArmed() {
		p := &kernel.Point{Kind: history.PointDeliver, Actor: "bus", Group: sub.group, Subject: m.subject, MsgID: m.id,
			JobID: m.jobID, Delivery: count, Heartbeat: m.heartbeat}
		if f, fired := b.host.Fault(p); fired {
			b.host.RecordFault(nil, p, f, m.subject)
			switch f.Effect {
			case history.EffectDuplicate:
				k.Tracef("bus", "duplicate delivery %s#%d", m.subject, m.seq)
				b.spawnDelivery(m, queue, sub, count)
			case history.EffectDelay:
				k.At(k.Now()+f.Duration, func() {
					if k.Group(sub.group).Crashed() || b.draining[sub.group] || sub.gone {
						// The member went away (or restarted: its handlers
						// belong to a process that is gone) while the message
						// was held back: it goes to whoever serves the queue now.
						b.deliver(m, queue, count)
						return
					}
					b.spawnDelivery(m, queue, sub, count)
				})
				return
			}
		}
	}
	b.spawnDelivery(m, queue, sub, count)
}

// spawnDelivery runs the handler as an actor of the member's group and settles
// the delivery: ack, NAK with delay, or (no ack in time) redelivery after ack wait.
func (b *Bus) spawnDelivery(m *message, queue string, sub *subscription, count int) {
	k := b.k
	settled := false
	b.inflight++
	name := deliveryName(m.subject, m.seq, count)
	b.unsettled[name] = InFlight{Subject: m.subject, MsgID: m.id, JobID: m.jobID, Queue: queue, Delivery: count,
		Group: sub.group, Since: k.Now()}
	k.At(k.Now()+b.cfg.AckWait, func() {
		if !settled {
			settled = true
			b.inflight--
			delete(b.unsettled, name)
			k.Tracef("bus", "ack wait expired %s#%d", m.subject, m.seq)
			b.deliver(m, queue, count+1)
		}
	})
	k.Spawn(sub.group, name, func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		line := append(k.TraceStart(a.Name()), "deliver "...)
		line = append(append(line, m.subject...), " id="...)
		line = append(append(line, m.id...), " n="...)
		k.TraceEnd(strconv.AppendInt(line, int64(count), 10))
		settle := b.consume(ctx, sub, m)
		b.recordSettle(a, m, settle)
		a.Yield() // the ack is a yield point
		if b.host.FaultsArmed() {
			p := &kernel.Point{Kind: history.PointAck, Actor: a.Name(), Group: a.Group().Name, Subject: m.subject, MsgID: m.id,
				JobID: m.jobID, Delivery: count, Heartbeat: m.heartbeat}
			if f, fired := b.host.Fault(p); fired {
				b.host.RecordFault(a, p, f, m.subject)
				switch f.Effect {
				case history.EffectCrash:
					b.host.Crash(a)
					a.ExitIfDead()
				case history.EffectAckLost:
					k.Tracef(a.Name(), "ack lost %s#%d", m.subject, m.seq)
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
		if delay := settle.NakDelay; delay > 0 {
			k.Tracef(a.Name(), "nak %s#%d delay=%s", m.subject, m.seq, delay)
			b.inflight++
			k.At(k.Now()+delay, func() { b.inflight--; b.deliver(m, queue, count+1) })
			return
		}
		if settle.Dropped != nil {
			k.Tracef(a.Name(), "ack (dropped: %v) %s#%d", settle.Dropped, m.subject, m.seq)
			return
		}
		line = append(k.TraceStart(a.Name()), "ack "...)
		line = append(append(line, m.subject...), '#')
		k.TraceEnd(strconv.AppendUint(line, m.seq, 10))
	})
}

// recordSettle keeps the handler's decision on a job message: what a
// checker holds against the job's state at that moment.
func (b *Bus) recordSettle(a *kernel.Actor, m *message, settle sut.Settle) {
	if m.jobID == "" {
		return
	}
	outcome := history.SettleAck
	switch {
	case settle.NakDelay > 0:
		outcome = history.SettleNak
	case settle.Dropped != nil:
		outcome = history.SettleDrop
	}
	b.hist.Settles = append(b.hist.Settles, history.Settle{Step: b.k.Step(), Time: b.k.Now(), Actor: a.Name(),
		Subject: m.subject, MsgID: m.id, JobID: m.jobID, Cancel: m.cancel, Outcome: outcome, Delay: settle.NakDelay,
		Gen: m.gen, ResultPtr: m.resultPtr, Message: m.digest})
}

// deliveryName is the delivery actor's name, "subject#seq.count".
func deliveryName(subject string, seq uint64, count int) string {
	b := make([]byte, 0, len(subject)+24)
	b = append(append(b, subject...), '#')
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, '.')
	return string(strconv.AppendInt(b, int64(count), 10))
}
