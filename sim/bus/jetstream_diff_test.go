package bus

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/engine/natsbus"
	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The simulated bus against NATS JetStream (an embedded nats-server, through
// the engine's own JetStream bus, engine/natsbus): one script per case, run
// on both, what each did written as the same lines and compared. A case
// either agrees or names the looseness it shows; a looseness no longer shown
// fails the test until it is taken off the list (and the README's table).

// looseness is a known way the simulated bus differs from JetStream.
type looseness struct{ name, why string }

// The known differences, each shown by exactly one case; the README's table
// "Where the simulated bus differs from JetStream" lists the same names.
var (
	defaultAckWait = looseness{"default_ack_wait",
		"default ack wait 10m (the reference deployment's); JetStream's 30s"}
	defaultMaxDeliver = looseness{"default_max_deliver",
		"default max deliver 100 (the reference deployment's); JetStream's unlimited"}
)

// unit is the script's time step; both sides' times are reported to the
// nearest unit, which absorbs JetStream's real-time jitter.
const unit = time.Second

// settleKind is what a handler does with a delivery.
type settleKind int

const (
	settleAck settleKind = iota
	settleNak
	settleTerm
	settleNever // hold it past the end of the case
)

// reply is a handler's answer to one delivery: hold it that long, then settle.
type reply struct {
	hold  time.Duration
	kind  settleKind
	delay time.Duration // NAK delay
}

func ackAfter(hold time.Duration) reply { return reply{hold: hold} }
func nakAfter(hold, delay time.Duration) reply {
	return reply{hold: hold, kind: settleNak, delay: delay}
}

// delivery is one handler call: which member got which message, the how
// manyth arrival of it in the member's queue (counted by the handlers), when.
type delivery struct {
	member, msg string
	n           int
	at          time.Duration
}

// member is a subscriber; one without a queue gets every message (fan-out).
type member struct{ name, subject, queue string }

// ownQueue is the queue a member's deliveries are counted in; a fan-out
// subscriber has one of its own, as a replica does in the simulated world
// (sim/replicas.go).
func (m member) ownQueue() string {
	if m.queue == "" {
		return m.name
	}
	return m.queue
}

// step is a scripted action at a time: a publish, or a member leaving or
// joining its queue.
type step struct {
	at                   time.Duration
	publish, subject, id string // publish: the message's name
	leave, join          string // a member's name
}

// script is a case run on both buses.
type script struct {
	streams []natsbus.Stream // the topology, on both
	// The duplicate window and the consumers' settings; zero means the
	// simulated bus's defaults, and on JetStream a 2m window, an ack wait
	// and a max deliver no case reaches; max ack pending 1000 on both.
	window, ackWait time.Duration
	maxDeliver      int
	maxAckPending   int
	members         []member
	steps           []step
	answer          func(d delivery) reply
	horizon         time.Duration
	// duplicateFirst arms the simulated bus's DeliveryDuplicated fault on
	// the first delivery.
	duplicateFirst bool
	// view renders a run; nil: every delivery and failed publish, timed.
	view func(deliveries []delivery, failed []string) []string
}

// busCase is one row of the table.
type busCase struct {
	name   string
	script *script
	// for cases that are not scripts
	sim   func() []string
	real  func(nc *nats.Conn) ([]string, error)
	loose *looseness
}

var abStreams = []natsbus.Stream{{Name: "A", Subjects: []string{"a.>"}}, {Name: "B", Subjects: []string{"b"}}}

func always(r reply) func(delivery) reply { return func(delivery) reply { return r } }

func busCases() []busCase {
	ack := ackAfter(0)
	one := []member{{"m1", "a.>", "q"}}
	return []busCase{
		{name: "duplicate inside the window dropped", script: &script{streams: abStreams, window: 4 * unit,
			members: one, answer: always(ack), horizon: 4 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1", id: "id"}, {at: 2 * unit, publish: "y", subject: "a.1", id: "id"}}}},
		{name: "window counted from the stored copy", script: &script{streams: abStreams, window: 4 * unit,
			members: one, answer: always(ack), horizon: 7 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1", id: "id"}, {at: 3 * unit, publish: "y", subject: "a.1", id: "id"},
				{at: 5 * unit, publish: "z", subject: "a.1", id: "id"}}}},
		{name: "duplicate on another subject of one stream dropped", script: &script{streams: abStreams,
			window: 4 * unit, members: one, answer: always(ack), horizon: 3 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1", id: "id"}, {at: unit, publish: "y", subject: "a.2", id: "id"}}}},
		{name: "same id on two streams", script: &script{streams: abStreams,
			window: 4 * unit, members: []member{{"m1", "a.>", "q"}, {"m2", "b", "q"}}, answer: always(ack), horizon: 3 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1", id: "id"}, {at: unit, publish: "y", subject: "b", id: "id"}}}},
		{name: "ack settles", script: &script{streams: abStreams, ackWait: 2 * unit, members: one, answer: always(ack),
			horizon: 6 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "NAK redelivers after its delay", script: &script{streams: abStreams, ackWait: 8 * unit, members: one,
			answer: func(d delivery) reply {
				if d.n == 1 {
					return nakAfter(0, 2*unit)
				}
				return ack
			}, horizon: 5 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "handler error terminates", script: &script{streams: abStreams, ackWait: 2 * unit, members: one,
			answer: always(reply{kind: settleTerm}), horizon: 6 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "unsettled redelivered after ack wait up to max deliver", script: &script{streams: abStreams,
			ackWait: 2 * unit, maxDeliver: 3, members: one, answer: always(reply{kind: settleNever}), horizon: 9 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "NAKs count toward max deliver", script: &script{streams: abStreams, ackWait: 2 * unit, maxDeliver: 3,
			members: one, answer: func(d delivery) reply {
				if d.n == 1 {
					return nakAfter(0, unit)
				}
				return reply{kind: settleNever}
			}, horizon: 9 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "max deliver ends NAKed redeliveries", script: &script{streams: abStreams, ackWait: 8 * unit, maxDeliver: 4,
			members: one, answer: always(nakAfter(0, unit)), horizon: 7 * unit,
			steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "queue members share, each message once", script: &script{streams: abStreams,
			members: []member{{"m1", "a.>", "q"}, {"m2", "a.>", "q"}}, answer: always(ack), horizon: 2 * unit,
			steps: publishes(0, "a.1", "x1", "x2", "x3", "x4", "x5", "x6"), view: timesDelivered}},
		{name: "each queue gets every message", script: &script{streams: abStreams,
			members: []member{{"m1", "a.>", "q1"}, {"m2", "a.>", "q2"}}, answer: always(ack), horizon: 2 * unit,
			steps: publishes(0, "a.1", "x1", "x2", "x3")}},
		{name: "fan-out: every subscriber gets every message", script: &script{streams: abStreams,
			members: []member{{"m1", "a.>", ""}, {"m2", "a.>", ""}}, answer: always(ack), horizon: 2 * unit,
			steps: publishes(unit, "a.1", "x1", "x2")}},
		{name: "fan-out subscriber away while published", script: &script{
			streams: abStreams, ackWait: 2 * unit, members: []member{{"m1", "a.>", ""}, {"m2", "a.>", ""}},
			answer: always(ack), horizon: 6 * unit,
			steps: []step{{at: 0, leave: "m1"}, {at: unit, publish: "x", subject: "a.1"}, {at: 2 * unit, join: "m1"}}}},
		{name: "a leaving member's share goes to the other", script: &script{streams: abStreams,
			members: []member{{"m1", "a.>", "q"}, {"m2", "a.>", "q"}}, answer: always(ack), horizon: 3 * unit,
			steps: append([]step{{at: 0, leave: "m1"}}, publishes(unit, "a.1", "x1", "x2", "x3")...)}},
		{name: "queue without a live member until it returns", script: &script{
			streams: abStreams, ackWait: 6 * unit, members: one, answer: always(ack), horizon: 10 * unit,
			steps: []step{{at: 0, leave: "m1"}, {at: unit, publish: "x", subject: "a.1"}, {at: 2 * unit, join: "m1"}}}},
		// The second delivery settles inside its own ack wait, after the
		// first one's late settle.
		{name: "late ack settles", script: &script{streams: abStreams, ackWait: 4 * unit,
			maxDeliver: 5, members: one, answer: func(d delivery) reply {
				switch d.n {
				case 1:
					return ackAfter(5 * unit)
				case 2:
					return nakAfter(2*unit, 2*unit)
				}
				return ack
			}, horizon: 10 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "late NAK redelivers", script: &script{streams: abStreams, ackWait: 4 * unit,
			maxDeliver: 5, members: one, answer: func(d delivery) reply {
				switch d.n {
				case 1:
					return nakAfter(5*unit, unit)
				case 2:
					return ackAfter(3 * unit)
				}
				return ack
			}, horizon: 10 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}}},
		{name: "max ack pending holds new deliveries back", script: &script{streams: abStreams,
			ackWait: 8 * unit, maxAckPending: 2, members: one, answer: always(ackAfter(2 * unit)), horizon: 6 * unit,
			steps: publishes(0, "a.1", "x1", "x2", "x3", "x4"), view: deliveryTimes}},
		{name: "redelivery goes ahead of a new message", script: &script{streams: abStreams,
			ackWait: 2 * unit, maxAckPending: 1, members: one, answer: func(d delivery) reply {
				if d.msg == "x" && d.n == 1 {
					return reply{kind: settleNever}
				}
				return ack
			}, horizon: 6 * unit, view: arrivalOrder,
			steps: []step{{at: 0, publish: "x", subject: "a.1"}, {at: unit, publish: "y", subject: "a.1"}}}},
		{name: "publish to a subject no stream holds", script: &script{
			streams: abStreams, members: one, answer: always(ack), horizon: 2 * unit,
			steps: []step{{at: 0, publish: "x", subject: "nowhere"}}}},
		{name: "two copies in flight, both NAKed", script: &script{streams: abStreams,
			ackWait: 2 * unit, maxDeliver: 3, duplicateFirst: true, members: one, answer: func(d delivery) reply {
				if d.at < unit {
					// The first copy: the simulated bus's fault makes two of
					// it; JetStream makes its second by the ack wait.
					return nakAfter(5*unit/2, unit)
				}
				return nakAfter(0, unit)
			}, horizon: 10 * unit, steps: []step{{at: 0, publish: "x", subject: "a.1"}}, view: timesDelivered}},
		{name: "default duplicate window", sim: simDefault(func(c history.BusConfig) string { return c.DedupWindow.String() }),
			real: jetStreamDefault(func(s jetstream.StreamConfig, _ jetstream.ConsumerConfig) string { return s.Duplicates.String() })},
		{name: "default ack wait", loose: &defaultAckWait,
			sim:  simDefault(func(c history.BusConfig) string { return c.AckWait.String() }),
			real: jetStreamDefault(func(_ jetstream.StreamConfig, c jetstream.ConsumerConfig) string { return c.AckWait.String() })},
		{name: "default max deliver", loose: &defaultMaxDeliver,
			sim:  simDefault(func(c history.BusConfig) string { return limit(c.MaxDeliver) }),
			real: jetStreamDefault(func(_ jetstream.StreamConfig, c jetstream.ConsumerConfig) string { return limit(c.MaxDeliver) })},
		{name: "default max ack pending",
			sim:  simDefault(func(c history.BusConfig) string { return limit(c.MaxAckPending) }),
			real: jetStreamDefault(func(_ jetstream.StreamConfig, c jetstream.ConsumerConfig) string { return limit(c.MaxAckPending) })},
	}
}

func limit(n int) string {
	if n <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

// publishes publishes each named message on subject at one time, in order.
func publishes(at time.Duration, subject string, names ...string) []step {
	out := make([]step, len(names))
	for i, n := range names {
		out[i] = step{at: at, publish: n, subject: subject}
	}
	return out
}

// timesDelivered is how often each message arrived, whoever took it.
func timesDelivered(ds []delivery, failed []string) []string {
	return counted(ds, failed, func(d delivery) string { return d.msg + " delivered ×" })
}

// deliveryTimes is when deliveries arrived, whichever message each was
// (JetStream hands a batch out in no set order).
func deliveryTimes(ds []delivery, failed []string) []string {
	return counted(ds, failed, func(d delivery) string { return stamp(d.at) + " deliveries ×" })
}

// counted counts the deliveries by label, after the failed publishes.
func counted(ds []delivery, failed []string, label func(delivery) string) []string {
	n := map[string]int{}
	for _, d := range ds {
		n[label(d)]++
	}
	out := slices.Clone(failed)
	for l, c := range n {
		out = append(out, fmt.Sprintf("%s%d", l, c))
	}
	sort.Strings(out)
	return out
}

// arrivalOrder is the order deliveries arrived in, untimed.
func arrivalOrder(ds []delivery, failed []string) []string {
	out := slices.Clone(failed)
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s#%d", d.msg, d.n))
	}
	return out
}

// everyDelivery is the default view: each delivery, timed to the unit.
func everyDelivery(ds []delivery, failed []string) []string {
	out := slices.Clone(failed)
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s %s<-%s#%d", stamp(d.at), d.member, d.msg, d.n))
	}
	sort.Strings(out)
	return out
}

// stamp is a time to the nearest unit, in seconds.
func stamp(d time.Duration) string {
	units := math.Round(float64(d) / float64(unit))
	return fmt.Sprintf("t=%04.1fs", units*unit.Seconds())
}

func (s *script) render(ds []delivery, failed []string) []string {
	view := everyDelivery
	if s.view != nil {
		view = s.view
	}
	if out := view(ds, failed); len(out) > 0 {
		return out
	}
	return []string{"nothing"}
}

// runSimulated runs the script on the simulated bus, in virtual time.
func (s *script) runSimulated(t *testing.T) []string {
	var streams []sut.Stream
	for _, st := range s.streams {
		streams = append(streams, sut.Stream{Name: st.Name, Subjects: st.Subjects})
	}
	w := busWorld(t, history.BusConfig{Dedup: true, DedupWindow: s.window, AckWait: s.ackWait, MaxDeliver: s.maxDeliver,
		MaxAckPending: s.maxAckPending, Streams: streams})
	if s.duplicateFirst {
		fired := false
		w.host.Injector = injectorFunc(func(p *kernel.Point) (kernel.Fault, bool) {
			if p.Kind != history.PointDeliver || fired {
				return kernel.Fault{}, false
			}
			fired = true
			return kernel.Fault{Kind: "DeliveryDuplicated", Effect: history.EffectDuplicate}, true
		})
	}
	var ds []delivery
	var failed []string
	arrivals := map[string]int{}
	subscribe := func(m member) {
		w.bus.Subscribe(m.subject, m.queue, m.name, func(ctx context.Context, data []byte) sut.Settle {
			msg := string(data)
			arrivals[m.ownQueue()+"/"+msg]++
			d := delivery{member: m.name, msg: msg, n: arrivals[m.ownQueue()+"/"+msg], at: w.k.Now()}
			ds = append(ds, d)
			r := s.answer(d)
			a := kernel.ActorOf(ctx)
			if r.kind == settleNever {
				a.SleepUntil(s.horizon + time.Hour)
			} else if r.hold > 0 {
				a.SleepUntil(w.k.Now() + r.hold)
			}
			switch r.kind {
			case settleNak:
				return sut.NakAfter(r.delay)
			case settleTerm:
				return sut.Drop(errors.New("permanent"))
			}
			return sut.Ack()
		})
	}
	for _, m := range s.members {
		subscribe(m)
	}
	for _, st := range s.steps {
		w.k.At(st.at, func() {
			switch {
			case st.leave != "":
				w.bus.StopDeliveries(st.leave)
			case st.join != "":
				w.bus.Unsubscribe(st.join)
				subscribe(s.member(st.join))
			default:
				w.k.Spawn("clients", "publish-"+st.publish, func(ctx context.Context) {
					err := w.bus.Publisher("clients").Publish(ctx, st.subject, sut.Message{ID: st.id, Data: []byte(st.publish)})
					if err != nil {
						failed = append(failed, "publish "+st.publish+" failed")
					}
				})
			}
		})
	}
	if err := w.k.Run(s.horizon, nil); err != nil {
		t.Fatalf("simulated run: %v", err)
	}
	return s.render(ds, failed)
}

func (s *script) member(name string) member {
	for _, m := range s.members {
		if m.name == name {
			return m
		}
	}
	panic("busdiff: no member " + name)
}

// runJetStream runs the script on an embedded JetStream server, in real
// time, each member a bus of its own (a replica). It runs beside the other
// cases, off the test's goroutine, so it reports failures as an error.
func (s *script) runJetStream(nc *nats.Conn) ([]string, error) {
	window := s.window
	if window == 0 {
		window = natsbus.DefaultDuplicateWindow
	}
	cfg := natsbus.Config{Conn: nc, Streams: s.streams, DuplicateWindow: window, EngineDedupWindow: window / 2,
		AckWait: s.ackWait, MaxDeliver: s.maxDeliver, MaxAckPending: s.maxAckPending}
	if cfg.AckWait == 0 {
		cfg.AckWait = time.Hour // the simulated bus's 10m default, past the end of any case
	}
	if cfg.MaxDeliver == 0 {
		cfg.MaxDeliver = -1 // the simulated bus's 100, never reached here
	}
	ctx := context.Background()
	publisher, err := natsbus.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var ds []delivery
	var failed []string
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	arrivals := map[string]int{}
	var start time.Time // once the first members are subscribed
	caseOver := make(chan struct{})
	members := map[string]*natsbus.Bus{}
	subscribe := func(m member) {
		b, err := natsbus.New(ctx, cfg)
		if err != nil {
			fail(fmt.Errorf("member %s: %w", m.name, err))
			return
		}
		mu.Lock()
		members[m.name] = b
		mu.Unlock()
		err = b.Subscribe(ctx, natsbus.Subscription{Subject: m.subject, Queue: m.queue, Handler: func(ctx context.Context, data []byte) error {
			msg := string(data)
			mu.Lock()
			arrivals[m.ownQueue()+"/"+msg]++
			d := delivery{member: m.name, msg: msg, n: arrivals[m.ownQueue()+"/"+msg], at: time.Since(start)}
			ds = append(ds, d)
			mu.Unlock()
			r := s.answer(d)
			hold := r.hold
			if r.kind == settleNever {
				hold = time.Hour
			}
			select {
			case <-time.After(hold):
			case <-caseOver:
				return errors.New("the case is over")
			}
			switch r.kind {
			case settleNak:
				return &engine.RetryAfterError{Err: errors.New("nak"), Delay: r.delay}
			case settleTerm:
				return errors.New("permanent")
			}
			return nil
		}})
		if err != nil {
			fail(fmt.Errorf("member %s: %w", m.name, err))
		}
	}
	for _, m := range s.members {
		subscribe(m)
	}
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	// The steps of one time run in order; a slow step (a drain under load)
	// does not hold back the steps of a later time.
	var steps sync.WaitGroup
	for i := 0; i < len(s.steps); {
		j := i
		for j < len(s.steps) && s.steps[j].at == s.steps[i].at {
			j++
		}
		group := s.steps[i:j]
		i = j
		steps.Go(func() {
			time.Sleep(time.Until(start.Add(group[0].at)))
			for _, st := range group {
				switch {
				case st.leave != "":
					mu.Lock()
					b := members[st.leave]
					mu.Unlock()
					if err := b.Drain(ctx); err != nil {
						fail(fmt.Errorf("member %s leaving: %w", st.leave, err))
					}
				case st.join != "":
					subscribe(s.member(st.join))
				default:
					err := publisher.Publish(ctx, st.subject, engine.Message{ID: st.id, Data: []byte(st.publish)})
					if err != nil {
						mu.Lock()
						failed = append(failed, "publish "+st.publish+" failed")
						mu.Unlock()
					}
				}
			}
		})
	}
	time.Sleep(time.Until(start.Add(s.horizon)))
	steps.Wait()
	mu.Lock()
	out := s.render(slices.Clone(ds), slices.Clone(failed))
	buses := slices.Collect(maps.Values(members))
	mu.Unlock()
	close(caseOver)
	for _, b := range buses {
		drain, cancel := context.WithTimeout(ctx, time.Second)
		_ = b.Drain(drain)
		cancel()
	}
	_ = publisher.Drain(ctx)
	mu.Lock()
	defer mu.Unlock()
	return out, errors.Join(errs...)
}

// simDefault reports a default of the simulated bus's configuration.
func simDefault(f func(history.BusConfig) string) func() []string {
	return func() []string { return []string{f(history.BusConfig{}.WithDefaults())} }
}

// jetStreamDefault reports a default of a stream and a consumer created with
// nothing set.
func jetStreamDefault(f func(jetstream.StreamConfig, jetstream.ConsumerConfig) string) func(*nats.Conn) ([]string, error) {
	return func(nc *nats.Conn) ([]string, error) {
		ctx := context.Background()
		js, err := jetstream.New(nc)
		if err != nil {
			return nil, err
		}
		stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}})
		if err != nil {
			return nil, err
		}
		cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			return nil, err
		}
		return []string{f(stream.CachedInfo().Config, cons.CachedInfo().Config)}, nil
	}
}

type diffRow struct {
	name, simulated, real, status string
	failure                       string
}

// TestSimulatedBusAgainstJetStream runs every case on both buses: the
// JetStream sides all at once, each on a server of its own, in real time
// (about five seconds); then the simulated sides, in virtual time.
func TestSimulatedBusAgainstJetStream(t *testing.T) {
	cases := busCases()
	real := make([][]string, len(cases))
	realErr := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		run := c.real
		if c.script != nil {
			run = c.script.runJetStream
		}
		nc := natsbustest.Connect(t)
		wg.Go(func() { real[i], realErr[i] = run(nc) })
	}
	wg.Wait()
	rows := make([]diffRow, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if realErr[i] != nil {
				t.Fatalf("on JetStream: %v", realErr[i])
			}
			var simulated []string
			if c.script != nil {
				simulated = c.script.runSimulated(t)
			} else {
				simulated = c.sim()
			}
			rows[i] = judge(c, simulated, real[i])
			if rows[i].failure != "" {
				t.Error(rows[i].failure)
			}
		})
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| case | simulated | JetStream | status |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", r.name, r.simulated, r.real, r.status)
	}
	t.Log(table.String())
}

// judge compares one case's two runs against what the case claims.
func judge(c busCase, simulated, real []string) diffRow {
	row := diffRow{name: c.name, simulated: strings.Join(simulated, "; "), real: strings.Join(real, "; ")}
	same := slices.Equal(simulated, real)
	switch {
	case same && c.loose == nil:
		row.status = "same"
	case !same && c.loose != nil:
		row.status = "looseness " + c.loose.name
	case same:
		row.status = "FAIL: looseness " + c.loose.name + " no longer shown"
		row.failure = fmt.Sprintf("%s: the buses agree now; remove looseness %s from the case, the list and the README",
			c.name, c.loose.name)
	default:
		row.status = "FAIL: differs"
		row.failure = fmt.Sprintf("%s: the simulated bus differs from JetStream and no looseness excuses it\nsimulated: %s\nJetStream: %s",
			c.name, row.simulated, row.real)
	}
	return row
}

// Each looseness is shown by exactly one case, and the README's table lists
// exactly the loosenesses the cases name.
func TestBusLoosenessesAreListed(t *testing.T) {
	uses := map[string]int{}
	for _, c := range busCases() {
		if c.loose != nil {
			uses[c.loose.name]++
			if c.loose.why == "" {
				t.Errorf("looseness %s has no explanation", c.loose.name)
			}
		}
	}
	for name, n := range uses {
		if n != 1 {
			t.Errorf("looseness %s is shown by %d cases; want one, so that closing it is seen", name, n)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Where the simulated bus differs from JetStream")
	if !ok {
		t.Fatal("README.md has no section \"Where the simulated bus differs from JetStream\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	for name := range uses {
		if !listed[name] {
			t.Errorf("README's table does not list looseness %s", name)
		}
	}
	for name := range listed {
		if uses[name] == 0 {
			t.Errorf("README's table lists %s, which no case shows", name)
		}
	}
}
