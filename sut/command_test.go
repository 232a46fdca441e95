package sut

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseStoreCommand(t *testing.T) {
	body := "return redis.call('GET', KEYS[1])"
	sum := sha1.Sum([]byte(body))
	bySHA := map[string]string{"abc": "claim", hex.EncodeToString(sum[:]): "read"}

	c := ParseStoreCommand([]any{"evalsha", "abc", 2, "job:1", "ready", "1", int64(7), "DISPATCHED"}, bySHA)
	require.Equal(t, StoreCommand{Name: "evalsha", Script: "claim", Keys: []string{"job:1", "ready"},
		Args: []string{"1", "7", "DISPATCHED"}}, c)
	require.True(t, c.IsScript("claim"))
	require.Equal(t, "ready", c.Key(1))
	require.Equal(t, "", c.Key(2), "past the end")
	require.Equal(t, "DISPATCHED", c.Arg(2))

	// go-redis resends a script the server lacks as EVAL with its source.
	c = ParseStoreCommand([]any{"EVAL", body, 1, "k"}, bySHA)
	require.Equal(t, StoreCommand{Name: "eval", Script: "read", Keys: []string{"k"}, Args: []string{}}, c)

	// The read-only forms are taken apart and named alike.
	c = ParseStoreCommand([]any{"evalsha_ro", "abc", 1, "job:1", "x"}, bySHA)
	require.Equal(t, StoreCommand{Name: "evalsha_ro", Script: "claim", Keys: []string{"job:1"}, Args: []string{"x"}}, c)
	c = ParseStoreCommand([]any{"EVAL_RO", body, 1, "k"}, bySHA)
	require.Equal(t, StoreCommand{Name: "eval_ro", Script: "read", Keys: []string{"k"}, Args: []string{}}, c)

	c = ParseStoreCommand([]any{"evalsha", "fff", 1, "k", "a"}, bySHA)
	require.Equal(t, "", c.Script, "a script the system did not name")
	require.False(t, c.IsScript(""))

	c = ParseStoreCommand([]any{"set", "lock:1", "tok", "px", 5000, "nx"}, bySHA)
	require.Equal(t, StoreCommand{Name: "set", Keys: []string{"lock:1"}, Args: []string{"tok", "px", "5000", "nx"}}, c)

	// A key count past the arguments: every argument is ARGV, no key is made up.
	c = ParseStoreCommand([]any{"evalsha", "abc", 5, "k"}, bySHA)
	require.Empty(t, c.Keys)
	require.Equal(t, []string{"k"}, c.Args)
	require.Equal(t, StoreCommand{}, ParseStoreCommand(nil, bySHA))
}
