package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"

	"github.com/dispatchsim/dispatchsim/sut"
)

// A value of any length is dumped whole: a difference past the tool's
// default 60 bytes would otherwise go unseen.
func init() { miniredis.DumpMaxLineLen = 1 << 30 }

// keyspaceDump is the keyspace rendered by miniredis's own Dump, a second
// path to the data besides the typed reads a snapshot copies, split by key,
// each key's time to live (as it was elapsed ago) appended.
func (s *Store) keyspaceDump(elapsed time.Duration) map[string]string {
	out := map[string]string{}
	key := ""
	var b strings.Builder
	flush := func() {
		if key == "" {
			return
		}
		if ttl := s.mr.TTL(key); ttl > 0 {
			fmt.Fprintf(&b, "   ttl %s\n", ttl+elapsed)
		}
		out[key] = b.String()
		b.Reset()
	}
	for _, line := range strings.SplitAfter(s.mr.Dump(), "\n") {
		if k, ok := strings.CutPrefix(line, "- "); ok {
			flush()
			key = strings.TrimSuffix(k, "\n")
		}
		b.WriteString(line)
	}
	flush()
	return out
}

// checkRestore holds the keyspace a loss restored to the copy it restored:
// every key the copy held (but those whose time to live ran out since) as
// it held it, and no other; then to the system's own invariants. What it
// lists is the simulator's defect.
func (s *Store) checkRestore(snap Snapshot, elapsed time.Duration) []string {
	var out []string
	got := s.keyspaceDump(elapsed)
	for _, key := range slices.Sorted(maps.Keys(snap.dump)) {
		if old := snap.keys[key]; old.ttl > 0 && old.ttl <= elapsed {
			continue // expired since: gone either way
		}
		switch g, ok := got[key]; {
		case !ok:
			out = append(out, fmt.Sprintf("key %s: the copy held it, the restored store does not", key))
		case g != snap.dump[key]:
			out = append(out, fmt.Sprintf("key %s: restored as %q, the copy held %q", key, g, snap.dump[key]))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		if _, ok := snap.dump[key]; !ok {
			out = append(out, fmt.Sprintf("key %s: restored, but the copy did not hold it", key))
		}
	}
	if inv, ok := s.obs.(sut.KeyspaceInvariants); ok {
		out = append(out, inv.Inconsistencies(s)...)
	}
	return out
}
