package dispatch

// Redis keys, all under outbox: so this design and engine/ can share a store.
// The scripts compute some keys from ids (index keys from state names, entry
// keys from ids), which a Redis Cluster would not route: the store targets one
// Redis or one shard, as engine/'s does.
const (
	jobKeyPrefix      = "outbox:job:"
	jobEventsPrefix   = "outbox:events:"
	jobIndexPrefix    = "outbox:index:"
	dlqEntryPrefix    = "outbox:dlq:entry:"
	dlqIndexKey       = "outbox:dlq:index"
	entryKeyPrefix    = "outbox:entry:"
	pendingKey        = "outbox:pending"
	consumedKeyPrefix = "outbox:consumed:"

	maxJobEvents = 200 // bounds the per-job event list
)

func jobKey(id string) string       { return jobKeyPrefix + id }
func jobEventsKey(id string) string { return jobEventsPrefix + id }
func jobIndexKey(s JobState) string { return jobIndexPrefix + string(s) }
func dlqEntryKey(id string) string  { return dlqEntryPrefix + id }
func entryKey(id string) string     { return entryKeyPrefix + id }

// dlqEntryID is the outbox entry id of a job's DLQ announcement; a job has at
// most one, because FAILED and TIMEOUT are terminal.
func dlqEntryID(jobID string) string { return "dlq-" + jobID }

// JobKey is the Redis key of a job's hash (for observers and tests).
func JobKey(jobID string) string { return jobKey(jobID) }

// EntryKey is the Redis key of an outbox entry's hash.
func EntryKey(entryID string) string { return entryKey(entryID) }

// PendingKey is the sorted set of unsent outbox entries, scored by the time
// (ms) at which a relay may next claim them.
const PendingKey = pendingKey
