package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
)

// A publish whose answer never came is settled by a later publish of the
// same id inside the duplicate window: stored means the first was not kept,
// a duplicate that it was; outside the window nothing is learnt.
func TestLaterPublishSettlesAnAmbiguousOne(t *testing.T) {
	newBroker := func() *Broker {
		return &Broker{k: kernel.New(kernel.SeedTree{Root: 1}.Child("scheduler"), kernel.NewTrace(false)),
			hist: &history.History{}, cfg: history.BusConfig{Dedup: true}.WithDefaults(), ambiguous: map[string]int{}}
	}
	publish := func(b *Broker, at time.Duration, outcome history.PublishOutcome) {
		rec := history.PublishRecord{Subject: "worker.w1.jobs", MsgID: "jobreq:j-1", Time: at, Outcome: outcome}
		b.settleAmbiguous(rec.Subject, rec.MsgID, rec)
		b.hist.Publishes = append(b.hist.Publishes, rec)
	}
	for _, c := range []struct {
		name  string
		later history.PublishOutcome
		at    time.Duration
		want  history.PublishOutcome
	}{
		{"a later copy stored", history.PublishStored, 20 * time.Second, history.PublishFailedClean},
		{"a later copy deduplicated", history.PublishDeduplicated, 20 * time.Second, history.PublishFailedStored},
		{"a later copy outside the window", history.PublishStored, 5 * time.Minute, history.PublishFailedStored},
	} {
		b := newBroker()
		publish(b, 6*time.Second, history.PublishFailedStored)
		publish(b, c.at, c.later)
		if got := b.hist.Publishes[0].Outcome; got != c.want {
			t.Errorf("%s: the first publish is %s, want %s", c.name, got, c.want)
		}
	}
}

// A publish whose call to a real broker timed out is recorded as the stored
// side of the ambiguous outcome, and it did land: the broker holds it. A
// later copy of the id inside the duplicate window is the broker's duplicate,
// which settles the first as kept. A publish no stream listens to is a clean
// failure.
func TestTimedOutPublishIsRecordedAmbiguousAndSettledByTheBroker(t *testing.T) {
	srv := natsbustest.Start(t)
	const latency = 200 * time.Millisecond
	proxy, err := NewProxy(strings.TrimPrefix(srv.URL(), "nats://"), latency)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	slow, err := nats.Connect("nats://" + proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	direct, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(direct)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WORKERS", Subjects: []string{"worker.>"},
		Duplicates: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	slowJS, err := jetstream.New(slow)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(js jetstream.JetStream, subject string, timeout time.Duration) history.PublishRecord {
		m := nats.NewMsg(subject)
		m.Data = []byte("{}")
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ack, err := js.PublishMsg(pctx, m, jetstream.WithMsgID("jobreq:j-1"))
		return history.PublishRecord{Subject: subject, MsgID: "jobreq:j-1", Outcome: publishOutcome(true, ack, err)}
	}

	// The answer takes two latencies each way; the call gives up after one.
	first := publish(slowJS, "worker.w1.jobs", latency)
	if first.Outcome != history.PublishFailedStored {
		t.Fatalf("a timed-out publish is recorded %s, want %s (unknown: it may have landed)", first.Outcome, history.PublishFailedStored)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timed-out publish never reached the stream (%d messages): the test shows nothing", info.State.Msgs)
		}
	}
	b := &Broker{k: kernel.New(kernel.SeedTree{Root: 1}.Child("scheduler"), kernel.NewTrace(false)),
		hist: &history.History{}, cfg: history.BusConfig{Dedup: true}.WithDefaults(), ambiguous: map[string]int{}}
	for _, rec := range []history.PublishRecord{first, publish(js, "worker.w1.jobs", 10*time.Second)} {
		b.settleAmbiguous(rec.Subject, rec.MsgID, rec)
		b.hist.Publishes = append(b.hist.Publishes, rec)
	}
	if got := b.hist.Publishes[1].Outcome; got != history.PublishDeduplicated {
		t.Fatalf("the second copy is %s, want %s", got, history.PublishDeduplicated)
	}
	if got := b.hist.Publishes[0].Outcome; got != history.PublishFailedStored {
		t.Fatalf("after the broker called the copy a duplicate the first publish is %s, want %s", got, history.PublishFailedStored)
	}

	if got := publish(js, "nowhere.jobs", 10*time.Second).Outcome; got != history.PublishFailedClean {
		t.Fatalf("a publish no stream listens to is %s, want %s", got, history.PublishFailedClean)
	}
}
