package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keys. The store targets one Redis (or one shard): the transition script
// computes index keys from state names, which a cluster would not route.
const (
	jobKeyPrefix       = "job:"
	jobEventsPrefix    = "job:events:"
	jobIndexPrefix     = "job:index:"
	tenantActivePrefix = "job:tenant:active:"
	dlqEntryPrefix     = "dlq:entry:"
	dlqIndexKey        = "dlq:index"
	jobLockPrefix      = "cordum:scheduler:job:"

	// maxJobEvents bounds the per-job event list.
	maxJobEvents = 200
)

func jobKey(id string) string       { return jobKeyPrefix + id }
func jobEventsKey(id string) string { return jobEventsPrefix + id }
func jobIndexKey(s JobState) string { return jobIndexPrefix + string(s) }
func jobLockKey(id string) string   { return jobLockPrefix + id }
func dlqEntryKey(id string) string  { return dlqEntryPrefix + id }

// JobLockKey is the Redis key of a job's scheduler lock.
func JobLockKey(jobID string) string { return jobLockKey(jobID) }

// Job is a job as the store holds it.
type Job struct {
	ID            string
	Topic         string
	Tenant        string
	PreferredPool string
	Requires      []string
	Payload       []byte
	State         JobState
	Version       int64 // bumped by every transition; compare-and-transition checks it
	Attempts      int
	DispatchGen   int // legitimate re-dispatches so far (one per RETRYING)
	DispatchID    string
	Worker        string
	ResultPtr     string
	LastErrorCode ReasonCode
	LastError     string
	PickFailSince time.Time // first pick failure with a permanent cause, zero if none
	// PublishMsgID and PublishFirstAt record the first publish attempt of the
	// job's current dispatch message id, written with DISPATCHED before that
	// publish: a re-publish under the same id is safe only inside the broker's
	// de-duplication window, counted from here, and only to the worker
	// of the first attempt (PublishWorker): a deployment may keep each
	// worker's subject in a stream, and so a window, of its own.
	PublishMsgID   string
	PublishWorker  string
	PublishFirstAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Request rebuilds the request that created the job (the pending replayer's input).
func (j *Job) Request() JobRequest {
	return JobRequest{JobID: j.ID, Topic: j.Topic, Tenant: j.Tenant, PreferredPool: j.PreferredPool,
		Requires: j.Requires, Payload: j.Payload}
}

// Field is one hash field a transition sets when it applies.
type Field struct {
	Name, Value string
}

// Transition is a compare-and-transition: it applies only if the job is in From
// (and at Version, when Version > 0) and, when Fence is set, only while that lock
// is still held. A refused transition changes nothing and returns *TransitionError.
type Transition struct {
	JobID   string
	From    JobState // "" for a job that does not exist yet
	Version int64    // 0: do not check
	To      JobState
	Reason  string // recorded in the event list
	Fence   *heldLock
	Fields  []Field
	// Stamped names fields set to the store's time of the write (the start
	// of a window that another replica may judge).
	Stamped []string
	DLQ     *DLQEntry // written atomically with the state, for terminal failures
}

// TransitionResult is what an applied transition left behind.
type TransitionResult struct {
	Version     int64
	Attempts    int
	DispatchGen int
	At          time.Time // the store's time of the write
}

// JobStore keeps jobs in Redis. Every state change goes through one Lua script,
// so the transition table is enforced where the data lives (seed 004's lesson):
// no code path, however it got there, can move a job out of a terminal state.
type JobStore struct {
	rdb redis.UniversalClient
}

// NewJobStore returns a store on rdb. It keeps no clock of its own: every
// time it writes is the store's (Now).
func NewJobStore(rdb redis.UniversalClient) *JobStore {
	return &JobStore{rdb: rdb}
}

var transitionScript = redis.NewScript(buildTransitionScript())

// buildTransitionScript renders the Lua script with the Go transition table, so
// the two can never disagree.
func buildTransitionScript() string {
	return fmt.Sprintf(`
-- KEYS: 1 job hash, 2 event list, 3 job lock, 4 DLQ entry
-- ARGV: 1 job id, 2 from, 3 version (0: any), 4 to, 5 fields stamped with the time (comma-separated),
--       6 lock token ("": unfenced), 7 reason, 8 DLQ entry JSON ("": none), 9.. field/value pairs
-- Times are the store's: a window one replica opens and another judges is
-- measured on one clock, whatever the replicas' clocks say.
local cv = redis.call('HMGET', KEYS[1], 'state', 'version')
local cur = cv[1]
if not cur then cur = '' end
local version = tonumber(cv[2] or '0')
-- allowed[cur][to] and terminal[cur] from the table's row for cur alone.
local allowed, terminal = {}, {}
%s
if ARGV[6] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[6] then
  return {'fenced', cur}
end
if terminal[cur] then return {'terminal', cur} end
if cur ~= ARGV[2] then return {'stale', cur} end
local want = tonumber(ARGV[3])
if want > 0 and version ~= want then return {'stale', cur} end
local to = ARGV[4]
if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end

local T = redis.call('TIME')
local now = tonumber(T[1]) * 1000 + math.floor(tonumber(T[2]) / 1000)
version = version + 1
redis.call('HSET', KEYS[1], 'state', to, 'updated_at', now, 'version', version)
if cur == '' then
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'created_at', now, 'attempts', 0, 'dispatch_gen', 0)
end
for i = 9, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1])
end
for f in string.gmatch(ARGV[5], '[^,]+') do redis.call('HSET', KEYS[1], f, now) end
-- Every scheduling pass counts an attempt, the publish rollback included.
if to == 'SCHEDULED' then redis.call('HINCRBY', KEYS[1], 'attempts', 1) end
-- A retryable failure earns one legitimate re-dispatch under a new message id.
if to == 'RETRYING' then redis.call('HINCRBY', KEYS[1], 'dispatch_gen', 1) end

if cur ~= '' then redis.call('ZREM', '%s' .. cur, ARGV[1]) end
redis.call('ZADD', '%s' .. to, now, ARGV[1])
local tenant = redis.call('HGET', KEYS[1], 'tenant')
if tenant and tenant ~= '' then
  if to == 'DISPATCHED' or to == 'RUNNING' then
    redis.call('SADD', '%s' .. tenant, ARGV[1])
  else
    redis.call('SREM', '%s' .. tenant, ARGV[1])
  end
end
redis.call('RPUSH', KEYS[2], now .. '|' .. cur .. '|' .. to .. '|' .. ARGV[7])
redis.call('LTRIM', KEYS[2], -%d, -1)
if ARGV[8] ~= '' then
  redis.call('SET', KEYS[4], ARGV[8])
  redis.call('ZADD', '%s', now, ARGV[1])
end
local ag = redis.call('HMGET', KEYS[1], 'attempts', 'dispatch_gen')
return {'ok', cur, version, ag[1], ag[2], now}
`, transitionRows(), jobIndexPrefix, jobIndexPrefix, tenantActivePrefix, tenantActivePrefix,
		maxJobEvents, dlqIndexKey)
}

// Transition applies t atomically, or refuses it with *TransitionError. Any other
// error means the outcome is unknown: the script may have run with its reply lost.
func (s *JobStore) Transition(ctx context.Context, t Transition) (TransitionResult, error) {
	if err := fenceErr(ctx); err != nil {
		return TransitionResult{}, fmt.Errorf("transition job %s to %s: %w", t.JobID, t.To, err)
	}
	token, lockKey := "", jobLockKey(t.JobID)
	if t.Fence != nil {
		token, lockKey = t.Fence.token, t.Fence.key
	}
	dlq := ""
	if t.DLQ != nil {
		b, err := json.Marshal(t.DLQ)
		if err != nil {
			return TransitionResult{}, fmt.Errorf("encode dlq entry for job %s: %w", t.JobID, err)
		}
		dlq = string(b)
	}
	args := make([]any, 0, 8+2*len(t.Fields))
	args = append(args, t.JobID, string(t.From), t.Version, string(t.To),
		strings.Join(t.Stamped, ","), token, t.Reason, dlq)
	for _, f := range t.Fields {
		args = append(args, f.Name, f.Value)
	}
	keys := []string{jobKey(t.JobID), jobEventsKey(t.JobID), lockKey, dlqEntryKey(t.JobID)}
	reply, err := transitionScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return TransitionResult{}, fmt.Errorf("transition job %s %s -> %s: %w", t.JobID, stateName(t.From), t.To, err)
	}
	if len(reply) < 2 {
		return TransitionResult{}, fmt.Errorf("transition job %s: malformed reply %v", t.JobID, reply)
	}
	status, _ := reply[0].(string)
	actual, _ := reply[1].(string)
	if status != "ok" {
		return TransitionResult{}, &TransitionError{JobID: t.JobID, Expected: t.From, Actual: JobState(actual),
			To: t.To, Reason: TransitionRefusal(status)}
	}
	if len(reply) < 6 {
		return TransitionResult{}, fmt.Errorf("transition job %s: malformed reply %v", t.JobID, reply)
	}
	version, _ := reply[2].(int64)
	attempts, _ := strconv.Atoi(fmt.Sprint(reply[3]))
	gen, _ := strconv.Atoi(fmt.Sprint(reply[4]))
	at, _ := reply[5].(int64)
	return TransitionResult{Version: version, Attempts: attempts, DispatchGen: gen, At: time.UnixMilli(at).UTC()}, nil
}

// GetState reads a job's state. A job that does not exist returns an error
// wrapping redis.Nil; any other error means the state is unknown.
func (s *JobStore) GetState(ctx context.Context, jobID string) (JobState, error) {
	st, err := s.rdb.HGet(ctx, jobKey(jobID), "state").Result()
	if err != nil {
		return "", fmt.Errorf("read state of job %s: %w", jobID, err)
	}
	return JobState(st), nil
}

// Get reads a whole job. A job that does not exist returns ErrJobNotFound
// (which also matches redis.Nil); any other error means the job is unknown.
func (s *JobStore) Get(ctx context.Context, jobID string) (*Job, error) {
	h, err := s.rdb.HGetAll(ctx, jobKey(jobID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", jobID, err)
	}
	if len(h) == 0 || h["state"] == "" {
		return nil, fmt.Errorf("read job %s: %w", jobID, errNotFound)
	}
	return decodeJob(jobID, h)
}

// errNotFound matches both ErrJobNotFound and redis.Nil.
var errNotFound = notFoundError{}

type notFoundError struct{}

func (notFoundError) Error() string { return ErrJobNotFound.Error() }
func (notFoundError) Is(target error) bool {
	return target == ErrJobNotFound || errors.Is(redis.Nil, target)
}

func decodeJob(id string, h map[string]string) (*Job, error) {
	j := &Job{
		ID:            id,
		Topic:         h["topic"],
		Tenant:        h["tenant"],
		PreferredPool: h["preferred_pool"],
		Payload:       []byte(h["payload"]),
		State:         JobState(h["state"]),
		DispatchID:    h["dispatch_id"],
		Worker:        h["worker"],
		ResultPtr:     h["result_ptr"],
		LastErrorCode: ReasonCode(h["last_error_code"]),
		LastError:     h["last_error"],
		PublishMsgID:  h["publish_msg_id"],
		PublishWorker: h["publish_worker"],
	}
	if r := h["requires"]; r != "" {
		j.Requires = strings.Split(r, ",")
	}
	var err error
	ints := []struct {
		name string
		dst  *int64
	}{{"version", &j.Version}}
	for _, f := range ints {
		if *f.dst, err = parseInt(h, f.name); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", id, err)
		}
	}
	var n int64
	if n, err = parseInt(h, "attempts"); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	j.Attempts = int(n)
	if n, err = parseInt(h, "dispatch_gen"); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	j.DispatchGen = int(n)
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"created_at", &j.CreatedAt}, {"updated_at", &j.UpdatedAt}, {"pick_fail_since", &j.PickFailSince},
		{"publish_first_at", &j.PublishFirstAt}} {
		if n, err = parseInt(h, f.name); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", id, err)
		}
		if n != 0 {
			*f.dst = time.UnixMilli(n).UTC()
		}
	}
	return j, nil
}

func parseInt(h map[string]string, name string) (int64, error) {
	v := h[name]
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s=%q: %w", name, v, err)
	}
	return n, nil
}

// SetFields writes non-state bookkeeping fields of a job that exists and is in
// state from (pick failure cause, last error), guarded like a transition.
func (s *JobStore) SetFields(ctx context.Context, jobID string, from JobState, fence *heldLock, fields []Field) error {
	if err := fenceErr(ctx); err != nil {
		return fmt.Errorf("update job %s: %w", jobID, err)
	}
	token, lockKey := "", jobLockKey(jobID)
	if fence != nil {
		token, lockKey = fence.token, fence.key
	}
	args := []any{string(from), token}
	for _, f := range fields {
		args = append(args, f.Name, f.Value)
	}
	n, err := setFieldsScript.Run(ctx, s.rdb, []string{jobKey(jobID), lockKey}, args...).Int64()
	if err != nil {
		return fmt.Errorf("update job %s: %w", jobID, err)
	}
	if n == 0 {
		return fmt.Errorf("update job %s: %w", jobID, &TransitionError{JobID: jobID, Expected: from, To: from, Reason: RefusedStale})
	}
	return nil
}

var setFieldsScript = redis.NewScript(`
if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
return 1`)

// Now is the store's time. Durations that one replica starts and another
// judges (a state's age, a grace window, a de-duplication window) are
// measured on it: the replicas' own clocks may disagree by minutes.
func (s *JobStore) Now(ctx context.Context) (time.Time, error) {
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's time: %w", err)
	}
	return t.Truncate(time.Millisecond).UTC(), nil
}

// StaleJobs lists up to limit ids of jobs in state whose last transition is at or
// before cutoff, oldest first.
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
		return nil, fmt.Errorf("dlq entry of job %s: %w", jobID, errNotFound)
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

// TenantActive counts the tenant's DISPATCHED and RUNNING jobs.
func (s *JobStore) TenantActive(ctx context.Context, tenant string) (int64, error) {
	n, err := s.rdb.SCard(ctx, tenantActivePrefix+tenant).Result()
	if err != nil {
		return 0, fmt.Errorf("count active jobs of tenant %s: %w", tenant, err)
	}
	return n, nil
}

// JobIDFromKey returns the job id of a job hash key ("job:<id>"), and false for
// any other key (events, indexes, tenant sets, locks).
func JobIDFromKey(key string) (string, bool) {
	if !strings.HasPrefix(key, jobKeyPrefix) {
		return "", false
	}
	for _, p := range []string{jobEventsPrefix, jobIndexPrefix, tenantActivePrefix} {
		if strings.HasPrefix(key, p) {
			return "", false
		}
	}
	return key[len(jobKeyPrefix):], true
}
