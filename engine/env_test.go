package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
	"github.com/redis/go-redis/v9"
)

// testEnv is one store backend for a test: miniredis always, and a real
// redis-server when REDIS_URL is set (under CI=true a missing server fails).
type testEnv struct {
	name  string
	rdb   *redis.Client
	mr    *miniredis.Miniredis // nil on a real server
	clock *manualClock
	rand  *rand.PCG
}

// forEachBackend runs fn once per available store backend, each on an empty store.
func forEachBackend(t *testing.T, fn func(t *testing.T, env *testEnv)) {
	t.Helper()
	t.Run("miniredis", func(t *testing.T) { fn(t, newMiniredisEnv(t)) })
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but REDIS_URL is not set: the store's integration cases need a real redis-server")
		}
		return
	}
	t.Run("redis", func(t *testing.T) { fn(t, newRealRedisEnv(t, url)) })
}

func newMiniredisEnv(t *testing.T) *testEnv {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	clock := newManualClock()
	// The store's clock is the test's: TIME (which the job store stamps and
	// judges windows by) reads it, and keys expire by it.
	mr.SetTime(clock.Now())
	clock.onAdvance = func(d time.Duration) {
		mr.FastForward(d)
		mr.SetTime(clock.Now())
	}
	return &testEnv{name: "miniredis", rdb: rdb, mr: mr, clock: clock, rand: rand.NewPCG(1, 2)}
}

func newRealRedisEnv(t *testing.T, url string) *testEnv {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("redis-server at %s: %v", url, err)
	}
	// Key expiry on a real server follows its own clock: tests that need a lock to
	// expire delete it instead (expireKey), which is what expiry does. Its TIME
	// cannot be moved either, so advancing the test's clock ages the times the
	// job store wrote instead, which is what waiting does.
	clock := newManualClock()
	clock.onAdvance = func(d time.Duration) { ageJobTimes(t, rdb, d) }
	return &testEnv{name: "redis", rdb: rdb, clock: clock, rand: rand.NewPCG(1, 2)}
}

// ageJobTimes moves every time the job store wrote (a job's stamps, the state
// and DLQ indexes' scores) d into the past.
func ageJobTimes(t *testing.T, rdb *redis.Client, d time.Duration) {
	t.Helper()
	err := ageJobTimesScript.Run(context.Background(), rdb, nil, d.Milliseconds(), jobKeyPrefix, jobIndexPrefix, dlqIndexKey).Err()
	if err != nil && err != redis.Nil {
		t.Fatalf("age the job store's times by %s: %v", d, err)
	}
}

var ageJobTimesScript = redis.NewScript(`
local d = tonumber(ARGV[1])
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'COUNT', 1000)
  cursor = page[1]
  for _, k in ipairs(page[2]) do
    local typ = redis.call('TYPE', k)['ok']
    if typ == 'hash' and string.sub(k, 1, #ARGV[2]) == ARGV[2] then
      for _, f in ipairs({'created_at', 'updated_at', 'pick_fail_since', 'publish_first_at'}) do
        local v = tonumber(redis.call('HGET', k, f))
        if v then redis.call('HSET', k, f, v - d) end
      end
    elseif typ == 'zset' and (string.sub(k, 1, #ARGV[3]) == ARGV[3] or k == ARGV[4]) then
      local entries = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
      for i = 1, #entries, 2 do redis.call('ZADD', k, tonumber(entries[i+1]) - d, entries[i]) end
    end
  end
until cursor == '0'
`)

// expireKey makes key vanish as if its TTL had run out.
func (e *testEnv) expireKey(t *testing.T, key string) {
	t.Helper()
	if err := e.rdb.Del(context.Background(), key).Err(); err != nil {
		t.Fatalf("expire %s: %v", key, err)
	}
}

// manualClock is a single-threaded test clock: Sleep advances time at once and
// runs every timer that falls due, on the sleeping goroutine.
type manualClock struct {
	mu        sync.Mutex
	now       time.Time
	timers    []*manualTimer
	seq       int
	onAdvance func(time.Duration)
}

type manualTimer struct {
	clock   *manualClock
	at      time.Time
	seq     int
	f       func(context.Context)
	stopped bool
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return ctx.Err()
}

func (c *manualClock) AfterFunc(d time.Duration, f func(context.Context)) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	tm := &manualTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, tm)
	return tm
}

func (tm *manualTimer) Stop() bool {
	tm.clock.mu.Lock()
	defer tm.clock.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

// Advance moves time forward by d, firing due timers in time order.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.Slice(c.timers, func(i, j int) bool {
			if !c.timers[i].at.Equal(c.timers[j].at) {
				return c.timers[i].at.Before(c.timers[j].at)
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *manualTimer
		for len(c.timers) > 0 {
			tm := c.timers[0]
			if tm.stopped {
				c.timers = c.timers[1:]
				continue
			}
			if tm.at.After(target) {
				break
			}
			c.timers = c.timers[1:]
			tm.stopped = true
			next = tm
			break
		}
		if next == nil {
			step := target.Sub(c.now)
			c.now = target
			c.mu.Unlock()
			if c.onAdvance != nil && step > 0 {
				c.onAdvance(step)
			}
			return
		}
		step := next.at.Sub(c.now)
		c.now = next.at
		c.mu.Unlock()
		if c.onAdvance != nil && step > 0 {
			c.onAdvance(step)
		}
		next.f(context.Background())
	}
}
