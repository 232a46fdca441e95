package miniredis

import (
	"strings"
	"testing"

	"github.com/dispatchsim/dispatchsim/third_party/miniredis/proto"
)

// With ReuseLua, scripts share one VM but cannot change it for each other.
func TestLuaReuse(t *testing.T) {
	m, c := runWithClient(t)
	m.ReuseLua(true)

	mustDo(t, c,
		"EVAL", "return {KEYS[1], ARGV[1]}", "1", "key1", "arg1",
		proto.Strings("key1", "arg1"),
	)
	// KEYS and ARGV are new per call, and writable like in Redis.
	mustDo(t, c,
		"EVAL", "KEYS[2] = 'x'; return #KEYS + #ARGV", "1", "key1",
		proto.Int(2),
	)
	mustDo(t, c,
		"EVAL", "return #KEYS + #ARGV", "0",
		proto.Int(0),
	)

	readonly := func(script string) {
		t.Helper()
		res, err := c.Do("EVAL", script, "0")
		ok(t, err)
		assert(t, strings.Contains(res, "Attempt to modify a readonly table"), "%q: got %q", script, res)
	}
	for _, script := range []string{
		"string.x = 1",
		"x = 1",
		"_G.x = 1",
		"redis = nil",
		"redis.call = nil",
		"cjson.x = 1",
		"math.random = nil",
		"rawset(string, 'x', 1)",
		"rawset(_G, 'x', 1)",
		"setmetatable(string, {})",
		"table.insert(string, 1)",
		"getmetatable('').__index.x = 1",
	} {
		readonly(script)
	}
	mustContain(t, c, "EVAL", "return x", "0", "Script attempted to access nonexistent global variable 'x'")
	mustContain(t, c, "EVAL", "return getfenv", "0", "nonexistent global variable 'getfenv'")

	// Library tables still read as before.
	mustDo(t, c,
		"EVAL", "local n = 0; for _ in pairs(string) do n = n + 1 end; return {n > 10 and 1 or 0, rawget(string, 'upper') == string.upper and 1 or 0, getmetatable(string) == nil and 1 or 0}", "0",
		proto.Ints(1, 1, 1),
	)
	mustDo(t, c,
		"EVAL", "return ('abc'):upper() .. string.format('%d', 7) .. cjson.encode({1})", "0",
		proto.String("ABC7[1]"),
	)

	// A script that fails half way leaves nothing for the next.
	mustContain(t, c, "EVAL", "local t = {}; redis.call('SET', 'k', 'v'); error('boom')", "0", "boom")
	mustDo(t, c, "EVAL", "return redis.call('GET', 'k')", "0", proto.String("v"))

	// math.random starts from the same seed in every new VM.
	first, err := c.Do("EVAL", "return math.random(1000000)", "0")
	ok(t, err)
	mustContain(t, c, "EVAL", "error('reset')", "0", "reset")
	again, err := c.Do("EVAL", "return math.random(1000000)", "0")
	ok(t, err)
	equals(t, first, again)
}

// Without ReuseLua, globals stay writable as before.
func TestLuaNoReuse(t *testing.T) {
	_, c := runWithClient(t)
	mustDo(t, c, "EVAL", "string.x = 1; return 1", "0", proto.Int(1))
}
