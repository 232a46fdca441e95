package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Job is a job as the store holds it.
type Job struct {
	ID            string
	Topic         string
	Tenant        string
	Payload       []byte
	State         JobState
	Version       int64 // bumped by every transition; compare-and-transition checks it
	Attempts      int
	DispatchGen   int
	DispatchID    string // the current dispatch's id, also its outbox entry id
	Worker        string
	ResultPtr     string
	LastErrorCode ReasonCode
	LastError     string
	// PickFailSince is when, in store time, picks began failing for a
	// permanent cause (a topic with no pool); zero while none is recorded.
	PickFailSince time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Request rebuilds the request that created the job (the replayer's input).
func (j *Job) Request() JobRequest {
	return JobRequest{JobID: j.ID, Topic: j.Topic, Tenant: j.Tenant, Payload: j.Payload}
}

// Field is one hash field a transition sets when it applies.
type Field struct{ Name, Value string }

// Transition is a compare-and-transition: it applies only if the job is in
// From (and at Version, when Version > 0). A refused transition writes
// nothing and returns *TransitionError.
type Transition struct {
	JobID   string
	From    JobState // "" for a job that does not exist yet
	Version int64    // 0: do not check
	To      JobState
	Reason  string // recorded in the event list
	Fields  []Field
	DLQ     *DLQEntry // stored, and queued for announcement, in the same step
}

// TransitionResult is what an applied transition left behind.
type TransitionResult struct {
	Version     int64
	Attempts    int
	DispatchGen int
}

// Dispatch is the request handler's atomic write: a scheduling pass from
// From at Version, DISPATCHED under DispatchID to Worker, and the outbox entry
// holding Packet for Subject under MessageID.
type Dispatch struct {
	JobID      string
	From       JobState
	Version    int64
	DispatchID string
	Worker     string
	Subject    string
	MessageID  string
	Packet     []byte
}

// JobStore keeps jobs and their outbox in Redis. Every write goes through a
// script, so the transition table is enforced where the data lives.
type JobStore struct {
	rdb redis.UniversalClient
}

// NewJobStore returns a store on rdb. It keeps no clock of its own: every
// time it writes or compares is the store's (Now).
func NewJobStore(rdb redis.UniversalClient) *JobStore {
	return &JobStore{rdb: rdb}
}

// Now is the store's time. What one replica stamps and another judges (a
// state's age, an entry's due time, a claim's lease) is measured on it: the
// replicas' own clocks may disagree by minutes.
func (s *JobStore) Now(ctx context.Context) (time.Time, error) {
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's time: %w", err)
	}
	return t.Truncate(time.Millisecond).UTC(), nil
}

// Transition applies t atomically, or refuses it with *TransitionError. Any
// other error means the outcome is unknown.
func (s *JobStore) Transition(ctx context.Context, t Transition) (TransitionResult, error) {
	dlq := ""
	if t.DLQ != nil {
		b, err := json.Marshal(t.DLQ)
		if err != nil {
			return TransitionResult{}, fmt.Errorf("encode dlq entry for job %s: %w", t.JobID, err)
		}
		dlq = string(b)
	}
	args := make([]any, 0, 8+2*len(t.Fields))
	args = append(args, t.JobID, string(t.From), t.Version, string(t.To), t.Reason,
		dlq, dlqEntryID(t.JobID), DLQMessageID(t.JobID))
	for _, f := range t.Fields {
		args = append(args, f.Name, f.Value)
	}
	keys := []string{jobKey(t.JobID), jobEventsKey(t.JobID), dlqEntryKey(t.JobID), entryKey(dlqEntryID(t.JobID)), pendingKey}
	reply, err := transitionScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return TransitionResult{}, fmt.Errorf("transition job %s %s -> %s: %w", t.JobID, stateName(t.From), t.To, err)
	}
	return parseTransitionReply(t.JobID, t.From, t.To, reply)
}

// Dispatch applies d atomically: all of it, or (refused) none of it.
func (s *JobStore) Dispatch(ctx context.Context, d Dispatch) (TransitionResult, error) {
	keys := []string{jobKey(d.JobID), jobEventsKey(d.JobID), entryKey(d.DispatchID), pendingKey}
	reply, err := dispatchScript.Run(ctx, s.rdb, keys, d.JobID, string(d.From), d.Version, d.DispatchID, d.Worker, d.Subject, d.MessageID, d.Packet).Slice()
	if err != nil {
		return TransitionResult{}, fmt.Errorf("dispatch job %s: %w", d.JobID, err)
	}
	return parseTransitionReply(d.JobID, d.From, StateDispatched, reply)
}

func parseTransitionReply(jobID string, from, to JobState, reply []any) (TransitionResult, error) {
	if len(reply) < 2 {
		return TransitionResult{}, fmt.Errorf("transition job %s: malformed reply %v", jobID, reply)
	}
	status, _ := reply[0].(string)
	actual, _ := reply[1].(string)
	if status != "ok" {
		return TransitionResult{}, &TransitionError{JobID: jobID, Expected: from, Actual: JobState(actual), To: to,
			Reason: TransitionRefusal(status)}
	}
	if len(reply) < 5 {
		return TransitionResult{}, fmt.Errorf("transition job %s: malformed reply %v", jobID, reply)
	}
	version, _ := reply[2].(int64)
	attempts, _ := strconv.Atoi(fmt.Sprint(reply[3]))
	gen, _ := strconv.Atoi(fmt.Sprint(reply[4]))
	return TransitionResult{Version: version, Attempts: attempts, DispatchGen: gen}, nil
}

// Get reads a whole job. A job that does not exist returns ErrJobNotFound;
// any other error means the job is unknown.
func (s *JobStore) Get(ctx context.Context, jobID string) (*Job, error) {
	h, err := s.rdb.HGetAll(ctx, jobKey(jobID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", jobID, err)
	}
	if h["state"] == "" {
		return nil, fmt.Errorf("read job %s: %w", jobID, ErrJobNotFound)
	}
	return decodeJob(jobID, h)
}

func decodeJob(id string, h map[string]string) (*Job, error) {
	j := &Job{ID: id, Topic: h["topic"], Tenant: h["tenant"], Payload: []byte(h["payload"]),
		State: JobState(h["state"]), DispatchID: h["dispatch_id"], Worker: h["worker"], ResultPtr: h["result_ptr"],
		LastErrorCode: ReasonCode(h["last_error_code"]), LastError: h["last_error"]}
	var version, attempts, gen, created, updated, pickFailSince int64
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"version", &version}, {"attempts", &attempts}, {"dispatch_gen", &gen},
		{"created_at", &created}, {"updated_at", &updated}, {"pick_fail_since", &pickFailSince}} {
		v := h[f.name]
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("decode job %s: field %s=%q: %w", id, f.name, v, err)
		}
		*f.dst = n
	}
	j.Version, j.Attempts, j.DispatchGen = version, int(attempts), int(gen)
	j.CreatedAt, j.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if pickFailSince > 0 {
		j.PickFailSince = time.UnixMilli(pickFailSince).UTC()
	}
	return j, nil
}

// StaleJobs lists up to limit ids of jobs in state whose last transition is
// at or before cutoff, oldest first.
func (s *JobStore) StaleJobs(ctx context.Context, state JobState, cutoff time.Time, limit int64) ([]string, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, jobIndexKey(state), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(cutoff.UnixMilli(), 10), Count: limit,
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("list stale %s jobs: %w", state, err)
	}
	return ids, nil
}

// Events returns the job's recorded transitions, oldest first ("ms|from|to|reason").
func (s *JobStore) Events(ctx context.Context, jobID string) ([]string, error) {
	ev, err := s.rdb.LRange(ctx, jobEventsKey(jobID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("read events of job %s: %w", jobID, err)
	}
	return ev, nil
}

// DLQEntry returns the job's dead-letter entry, or ErrJobNotFound if it has none.
func (s *JobStore) DLQEntry(ctx context.Context, jobID string) (*DLQEntry, error) {
	b, err := s.rdb.Get(ctx, dlqEntryKey(jobID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("dlq entry of job %s: %w", jobID, ErrJobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("dlq entry of job %s: %w", jobID, err)
	}
	var e DLQEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode dlq entry of job %s: %w", jobID, err)
	}
	return &e, nil
}

// PendingEntries counts outbox entries not yet marked sent (claimed or not).
func (s *JobStore) PendingEntries(ctx context.Context) (int64, error) {
	n, err := s.rdb.ZCard(ctx, pendingKey).Result()
	if err != nil {
		return 0, fmt.Errorf("count pending outbox entries: %w", err)
	}
	return n, nil
}

// JobIDFromKey returns the job id of a job hash key, and false for any other key.
func JobIDFromKey(key string) (string, bool) {
	if len(key) <= len(jobKeyPrefix) || key[:len(jobKeyPrefix)] != jobKeyPrefix {
		return "", false
	}
	return key[len(jobKeyPrefix):], true
}
