package dispatch

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// OutboxEntry is one message the store owes the bus.
type OutboxEntry struct {
	ID        string // the dispatch id for a dispatch, dlq-<jobID> for a DLQ announcement
	Kind      string // "dispatch" or "dlq"
	JobID     string
	Subject   string
	MessageID string // the same on every publish of this entry
	Data      []byte
	Claims    int    // how often a relay has claimed it, this claim included
	Dropped   string // set instead of a claim: why the entry will never be sent
}

// Lease says how a relay claims entries.
type Lease struct {
	RelayID   string
	Duration  time.Duration // other relays skip a claimed entry this long
	Batch     int64
	Retention time.Duration // how long a dropped entry is kept for audit
}

// ClaimEntries leases up to l.Batch due entries to one relay, oldest first,
// and drops those whose dispatch no longer matters (terminal or superseded).
// Two relays never hold a claim on one entry inside a lease.
func (s *JobStore) ClaimEntries(ctx context.Context, l Lease) ([]OutboxEntry, error) {
	reply, err := claimScript.Run(ctx, s.rdb, []string{pendingKey}, l.Duration.Milliseconds(), l.Batch, l.RelayID,
		l.Retention.Milliseconds()).Slice()
	if err != nil {
		return nil, fmt.Errorf("claim outbox entries: %w", err)
	}
	entries := make([]OutboxEntry, 0, len(reply))
	for _, raw := range reply {
		f, ok := raw.([]any)
		if !ok || len(f) < 3 {
			return nil, fmt.Errorf("claim outbox entries: malformed reply %v", raw)
		}
		e := OutboxEntry{ID: str(f[0])}
		if str(f[1]) == "drop" {
			e.Dropped = str(f[2])
			entries = append(entries, e)
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("claim outbox entries: malformed reply %v", raw)
		}
		e.Kind, e.JobID, e.Subject, e.MessageID, e.Data = str(f[2]), str(f[3]), str(f[4]), str(f[5]), []byte(str(f[6]))
		e.Claims, _ = strconv.Atoi(str(f[7]))
		entries = append(entries, e)
	}
	return entries, nil
}

// Enqueue writes a standalone outbox entry, not tied to a state change.
func (s *JobStore) Enqueue(ctx context.Context, e OutboxEntry) error {
	err := enqueueScript.Run(ctx, s.rdb, []string{entryKey(e.ID), pendingKey}, e.ID, e.Kind, e.JobID, e.Subject,
		e.MessageID, e.Data).Err()
	if err != nil {
		return fmt.Errorf("enqueue outbox entry %s: %w", e.ID, err)
	}
	return nil
}

// HasDueEntries reports whether any entry is claimable now: two plain reads,
// so an idle relay tick costs no script. Now is the store's, as the claim's:
// on a replica's clock ahead, a leased entry would look due to it alone.
func (s *JobStore) HasDueEntries(ctx context.Context) (bool, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return false, fmt.Errorf("count due outbox entries: %w", err)
	}
	n, err := s.rdb.ZCount(ctx, pendingKey, "-inf", strconv.FormatInt(now.UnixMilli(), 10)).Result()
	if err != nil {
		return false, fmt.Errorf("count due outbox entries: %w", err)
	}
	return n > 0, nil
}

// MarkSent records that entryID was published and, for the job's current
// dispatch, moves the job DISPATCHED -> RUNNING in the same step. It returns
// "ok", "already" (another relay marked it) or "missing".
func (s *JobStore) MarkSent(ctx context.Context, entryID string, retention time.Duration) (string, error) {
	reply, err := markSentScript.Run(ctx, s.rdb, []string{entryKey(entryID), pendingKey}, entryID,
		retention.Milliseconds()).Slice()
	if err != nil {
		return "", fmt.Errorf("mark outbox entry %s sent: %w", entryID, err)
	}
	if len(reply) == 0 {
		return "", fmt.Errorf("mark outbox entry %s sent: empty reply", entryID)
	}
	return str(reply[0]), nil
}

// Entry reads one outbox entry's hash (for audits and tests).
func (s *JobStore) Entry(ctx context.Context, entryID string) (map[string]string, error) {
	h, err := s.rdb.HGetAll(ctx, entryKey(entryID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read outbox entry %s: %w", entryID, err)
	}
	return h, nil
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
