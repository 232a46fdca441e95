package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// finishScript completes the job a stream entry carries: it names the job
// only through the entry's ID, as a Redis Streams dispatcher's ack does.
var finishScript = redis.NewScript(`
local e = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
local job = e[1][2][2]
redis.call('HSET', 'job:' .. job, 'state', 'SUCCEEDED', 'version', 2)
return redis.call('XACK', KEYS[1], 'workers', ARGV[1])`)

// streamObserver is cordum's observer taught one script more: "finish",
// whose job it finds through the stream entry the script names, read
// through the store's StreamView. Without streams it sees nothing.
type streamObserver struct {
	sut.Observer
	streams bool
}

func (o streamObserver) Scripts() map[string]string {
	out := map[string]string{"finish": finishScript.Hash()}
	for name, sha := range o.Observer.Scripts() {
		out[name] = sha
	}
	return out
}

func (o streamObserver) Touched(v sut.View, c sut.StoreCommand) []string {
	sv, ok := v.(sut.StreamView)
	if !c.IsScript("finish") || !o.streams || !ok {
		return o.Observer.Touched(v, c)
	}
	e, ok := sv.StreamEntry(c.Key(0), c.Arg(0))
	if !ok {
		return nil
	}
	return []string{"job:" + e.Field("job")}
}

// An adapter attributes a script that reaches a job only through a stream
// entry to that job: the store's view reads the entry, and the job's
// transition is recorded. The same adapter without the stream read records
// nothing: the script would be invisible to the history.
func TestObserverReachesJobsThroughStreamEntries(t *testing.T) {
	for _, streams := range []bool{true, false} {
		sys := cordum.System{}
		env, _, _ := kerneltest.NewEnv(t, 3, false, streamObserver{Observer: sys.Observer(), streams: streams})
		s := New(env, sys.Spec(sut.Options{}))
		t.Cleanup(s.Close)
		c := s.Client("replica-1")
		k := env.Kernel
		var view []sut.StreamGroup
		k.Spawn("replica-1", "dispatcher", func(ctx context.Context) {
			a := kernel.ActorOf(ctx)
			require.NoError(t, c.HSet(ctx, "job:j-7", "state", "RUNNING", "version", 1).Err())
			require.NoError(t, c.XGroupCreateMkStream(ctx, "jobs", "workers", "$").Err())
			id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"job", "j-7", "try", "1"}}).Result()
			require.NoError(t, err)
			require.NoError(t, c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w-1", Streams: []string{"jobs", ">"}}).Err())
			a.SleepUntil(k.Now() + 3*time.Second)

			e, ok := s.StreamEntry("jobs", id)
			require.True(t, ok)
			require.Equal(t, sut.StreamEntry{ID: id, Values: []string{"job", "j-7", "try", "1"}}, e)
			require.Equal(t, []sut.StreamEntry{e}, s.Stream("jobs"))
			_, ok = s.StreamEntry("jobs", "1-1")
			require.False(t, ok)
			view = s.StreamGroups("jobs")

			require.NoError(t, finishScript.Run(ctx, c, []string{"jobs"}, id).Err())
			require.Empty(t, s.StreamGroups("jobs")[0].Pending, "acknowledged")
		})
		require.NoError(t, k.Run(time.Minute, nil))

		require.Len(t, view, 1)
		require.Equal(t, "workers", view[0].Name)
		require.Equal(t, []string{"w-1"}, view[0].Consumers)
		require.Len(t, view[0].Pending, 1)
		p := view[0].Pending[0]
		require.Equal(t, sut.PendingEntry{ID: view[0].LastDeliveredID, Consumer: "w-1", Deliveries: 1, Idle: 3 * time.Second}, p)

		var states []string
		for _, ch := range env.History.States {
			states = append(states, ch.JobID+":"+ch.From+">"+ch.To)
		}
		if streams {
			require.Equal(t, []string{"j-7:>RUNNING", "j-7:RUNNING>SUCCEEDED"}, states)
		} else {
			require.Equal(t, []string{"j-7:>RUNNING"}, states, "without the stream read the finish is invisible")
		}
	}
}

// pointRecorder notes each fault point's command and whether it writes.
type pointRecorder struct{ seen []string }

func (r *pointRecorder) At(p *kernel.Point) (kernel.Fault, bool) {
	r.seen = append(r.seen, fmt.Sprintf("%s write=%v", p.Cmd, p.Write))
	return kernel.Fault{}, false
}

// A stream's reads are fault points for reads (a fault aimed at reads
// reaches them, one aimed at writes does not); XREADGROUP, which moves the
// group, is a write.
func TestStreamReadsAreReads(t *testing.T) {
	sys := cordum.System{}
	env, host, _ := kerneltest.NewEnv(t, 3, false, sys.Observer())
	rec := &pointRecorder{}
	host.Injector = rec
	s := New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	c := s.Client("replica-1")
	env.Kernel.Spawn("replica-1", "reader", func(ctx context.Context) {
		require.NoError(t, c.XGroupCreateMkStream(ctx, "jobs", "workers", "$").Err())
		require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", ID: "1-1", Values: []string{"job", "j-1"}}).Err())
		require.NoError(t, c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w", Streams: []string{"jobs", ">"}}).Err())
		require.NoError(t, c.XRange(ctx, "jobs", "-", "+").Err())
		require.NoError(t, c.XLen(ctx, "jobs").Err())
		require.NoError(t, c.XPending(ctx, "jobs", "workers").Err())
		require.NoError(t, c.XInfoGroups(ctx, "jobs").Err())
	})
	require.NoError(t, env.Kernel.Run(time.Minute, nil))
	require.Equal(t, []string{"xgroup write=true", "xadd write=true", "xreadgroup write=true", "xrange write=false",
		"xlen write=false", "xpending write=false", "xinfo write=false"}, rec.seen)
}
