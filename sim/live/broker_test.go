package live

import (
	"testing"
	"time"

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
