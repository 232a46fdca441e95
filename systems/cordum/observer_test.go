package cordum

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyspace is a store's keys as plain maps: job hashes and state indexes.
type keyspace struct {
	hashes map[string]map[string]string
	zsets  map[string]map[string]float64
}

func (k keyspace) Keys() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for key := range k.hashes {
			if !yield(key) {
				return
			}
		}
		for key := range k.zsets {
			if !yield(key) {
				return
			}
		}
	})
}
func (k keyspace) Get(string) (string, bool)                 { return "", false }
func (k keyspace) Hash(key string) (map[string]string, bool) { h, ok := k.hashes[key]; return h, ok }
func (k keyspace) Field(key, field string) string            { return k.hashes[key][field] }
func (k keyspace) Members(string) []string                   { return nil }
func (k keyspace) ZScores(key string) map[string]float64     { return maps.Clone(k.zsets[key]) }
func (k keyspace) TTL(string) time.Duration                  { return 0 }

// The engine writes a job's state and its index in one script: a restored
// keyspace where they disagree is named job by job.
func TestObserverFindsJobsOutOfTheirStateIndex(t *testing.T) {
	consistent := keyspace{
		hashes: map[string]map[string]string{"job:j-1": {"state": "RUNNING"}, "job:j-2": {"state": "SUCCEEDED"}},
		zsets:  map[string]map[string]float64{"job:index:RUNNING": {"j-1": 1}, "job:index:SUCCEEDED": {"j-2": 2}},
	}
	require.Empty(t, observer{}.Inconsistencies(consistent))

	broken := keyspace{
		hashes: map[string]map[string]string{"job:j-1": {"state": "RUNNING"}, "job:j-2": {"state": "SUCCEEDED"},
			"job:j-3": {"state": "PENDING"}},
		zsets: map[string]map[string]float64{"job:index:RUNNING": {"j-1": 1, "j-2": 2}, "job:index:SUCCEEDED": {"j-2": 2}},
	}
	require.Equal(t, []string{
		"job j-2 is in job:index:RUNNING but its record says \"SUCCEEDED\"",
		"job j-2 is in the index of RUNNING and of SUCCEEDED",
		"job j-3 is PENDING but in no state index",
	}, observer{}.Inconsistencies(broken))
}
