package store

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
)

// The simulated store keeps one Lua VM for every script (ReuseLua in the
// patched miniredis, third_party/). Like a real redis-server 7, it must refuse
// a script that writes a global or a library table, so that no script leaves
// state behind for the next. The same cases run against a real server when
// REDIS_URL is set (under CI=true a missing server fails).
func TestScriptsCannotLeakState(t *testing.T) {
	cases := func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		for _, script := range []string{
			"string.x = 1",
			"x = 1",
			"_G.x = 1",
			"redis = nil",
			"cjson.x = 1",
			"rawset(string, 'x', 1)",
			"setmetatable(string, {})",
			"getmetatable('').__index.x = 1",
		} {
			err := rdb.Eval(ctx, script, nil).Err()
			if err == nil || !strings.Contains(err.Error(), "Attempt to modify a readonly table") {
				t.Errorf("%q: got %v, want the read-only table error", script, err)
			}
		}
		leaked, err := rdb.Eval(ctx, "return {type(string.x), type(rawget(_G, 'x')), type(redis)}", nil).StringSlice()
		if err != nil || strings.Join(leaked, ",") != "nil,nil,table" {
			t.Errorf("after the refused writes: %v, %v; want [nil nil table]", leaked, err)
		}
		// KEYS and ARGV belong to one call.
		if n, err := rdb.Eval(ctx, "KEYS[2] = 'x'; ARGV[2] = 'y'; return #KEYS + #ARGV", []string{"k"}, "a").Int(); err != nil || n != 4 {
			t.Errorf("writing KEYS and ARGV: %d, %v; want 4", n, err)
		}
		if n, err := rdb.Eval(ctx, "return #KEYS + #ARGV", []string{"k"}, "a").Int(); err != nil || n != 2 {
			t.Errorf("the next call's KEYS and ARGV: %d, %v; want 2", n, err)
		}
		err = rdb.Eval(ctx, "return undefined_global", nil).Err()
		if err == nil || !strings.Contains(err.Error(), "nonexistent global variable 'undefined_global'") {
			t.Errorf("reading an undefined global: %v", err)
		}
	}

	t.Run("simulated", func(t *testing.T) {
		_, s, _ := testStore(t, false)
		rdb := redis.NewClient(&redis.Options{Addr: "miniredis", Protocol: 2, MaxRetries: -1,
			Dialer: func(context.Context, string, string) (net.Conn, error) { return s.mr.Dial() }})
		defer rdb.Close()
		cases(t, rdb)
	})

	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but REDIS_URL is not set: the store's differential cases need a real redis-server")
		}
		return
	}
	t.Run("redis", func(t *testing.T) {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("REDIS_URL %q: %v", url, err)
		}
		opts.MaxRetries = -1
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("redis-server at %s: %v", url, err)
		}
		cases(t, rdb)
	})
}

// A read-only script is traced like any script: by its SHA1 (EVALSHA_RO) or
// its key alone (EVAL_RO, go-redis's resend after NOSCRIPT), never by its
// source; it counts as a script; and it may read the server's TIME, as
// redis-server 7 lets it.
func TestReadOnlyScriptsAreTracedByHash(t *testing.T) {
	k, s, trace := testStore(t, true)
	c := s.Client("replica-1")
	source := "local t = redis.call('TIME') return {t[1], redis.call('GET', KEYS[1])} -- read-only"
	script := redis.NewScript(source)
	k.Spawn("replica-1", "reader", func(ctx context.Context) {
		require.NoError(t, c.Set(ctx, "job:j-1", "x", 0).Err())
		got, err := script.RunRO(ctx, c, []string{"job:j-1"}).StringSlice()
		require.NoError(t, err)
		require.Equal(t, []string{strconv.FormatInt(kernel.Epoch.Unix(), 10), "x"}, got, "TIME is the store's virtual clock")
		require.NoError(t, script.RunRO(ctx, c, []string{"job:j-1"}).Err())
	})
	require.NoError(t, k.Run(time.Minute, nil))
	out := string(trace.Bytes())
	require.NotContains(t, out, "read-only", "a script's source is never traced")
	sha := script.Hash()[:8]
	require.Contains(t, out, "redis evalsha_ro "+sha+" job:j-1 -> err NOSCRIPT")
	require.Contains(t, out, "redis eval_ro job:j-1 -> ok")
	require.Contains(t, out, "redis evalsha_ro "+sha+" job:j-1 -> ok")
	require.Equal(t, 3, s.hist.Redis.Scripts)
}

// A read-only script may call exactly what redis-server 7 lets it: every
// command without the write flag (TIME, XINFO, XPENDING, GET, ...), and none
// with it or that may replicate (PFCOUNT, PUBLISH). Every command the
// simulated store knows (or, for a command with subcommands, each of those)
// is called from EVAL_RO on both stores, with placeholder arguments enough
// for its arity: a refusal on one and not the other is a difference. Run
// against the server at REDIS_URL; without one it is skipped (under
// CI=true, it fails).
func TestReadOnlyScriptsAllowWhatRedisAllows(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but REDIS_URL is not set")
		}
		t.Skip("REDIS_URL not set: no redis-server to compare read-only scripts with")
	}
	ctx := context.Background()
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	opts.MaxRetries, opts.Protocol = -1, 2
	opts.DB = (opts.DB + 2) % 16 // a database of its own: the calls run
	real := redis.NewClient(opts)
	defer real.Close()
	require.NoError(t, real.FlushDB(ctx).Err())

	mr := NewMiniredis(1)
	require.NoError(t, mr.Start())
	defer mr.Close()
	sim := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2, MaxRetries: -1})
	defer sim.Close()

	infos, err := real.Command(ctx).Result()
	require.NoError(t, err)
	refused := func(rdb *redis.Client, call []any) bool {
		err := rdb.EvalRO(ctx, "return redis.call(unpack(ARGV))", nil, call...).Err()
		return err != nil && strings.Contains(err.Error(), "Write commands are not allowed from read-only scripts")
	}
	var calls, differ []string
	for _, name := range slices.Sorted(maps.Keys(infos)) {
		info := infos[name]
		if !mr.Server().IsRegisteredCommand(name) || slices.Contains(info.Flags, "noscript") {
			continue
		}
		for _, call := range readOnlyProbe(name, int(info.Arity)) {
			calls = append(calls, fmt.Sprint(call))
			r, s := refused(real, call), refused(sim, call)
			if r != s {
				differ = append(differ, fmt.Sprintf("%v: redis-server refuses it %v, the simulated store %v", call, r, s))
			}
		}
	}
	require.Greater(t, len(calls), 100, "the probe reached the commands")
	require.Empty(t, differ, "%d calls probed", len(calls))
	t.Logf("%d calls, the same refusals on both stores", len(calls))
}

// readOnlyProbe is the calls that probe a command: its name and arity's worth
// of placeholders, or for a command with subcommands each of them.
func readOnlyProbe(name string, arity int) [][]any {
	subcommands := map[string][][]any{
		"xinfo":   {{"xinfo", "stream", "k"}, {"xinfo", "groups", "k"}, {"xinfo", "consumers", "k", "g"}},
		"xgroup":  {{"xgroup", "create", "k", "g", "0"}, {"xgroup", "destroy", "k", "g"}, {"xgroup", "createconsumer", "k", "g", "c"}, {"xgroup", "delconsumer", "k", "g", "c"}},
		"object":  {{"object", "encoding", "k"}, {"object", "freq", "k"}, {"object", "idletime", "k"}, {"object", "refcount", "k"}},
		"memory":  {{"memory", "usage", "k"}},
		"pubsub":  {{"pubsub", "channels"}, {"pubsub", "numsub"}, {"pubsub", "numpat"}},
		"command": {{"command", "count"}},
		"cluster": {{"cluster", "info"}},
		"client":  {{"client", "id"}},
		"config":  {{"config", "get", "k"}},
		"script":  {{"script", "exists", "k"}},
	}
	if calls, ok := subcommands[name]; ok {
		return calls
	}
	call := []any{name}
	for len(call) < max(arity, -arity) {
		call = append(call, "k")
	}
	return [][]any{call}
}
