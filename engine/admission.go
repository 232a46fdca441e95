package engine

// Workflow run admission (POST /workflows/{id}/runs, Cordum's handleStartRun, seed 002).
// Beyond Cordum it fingerprints the payload behind an idempotency key, fences run
// creation on the reservation, and lets a retry or the sweeper reclaim a reservation
// left behind by a crash between reservation and run creation, so no key stays
// poisoned for ever.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// MaxIdempotencyKeyBytes is the longest Idempotency-Key accepted.
const MaxIdempotencyKeyBytes = 255

// Defaults of AdmissionConfig (Cordum's gateway values where it has them).
const (
	defaultOrgRunLimit        = 10
	defaultAdmissionLockTTL   = 10 * time.Second
	defaultAdmissionLockRetry = 10 * time.Millisecond
	defaultAdmissionLockWait  = 2 * time.Second
	defaultMaxRequestBytes    = 1 << 20
	// sweepBatch bounds one sweep's work; the next tick continues.
	sweepBatch = 256
)

// RunStatus is a workflow run's status as stored in wf:run:<id>.
type RunStatus string

// The run statuses. Every status but RUNNING is final.
const (
	RunRunning   RunStatus = "RUNNING"
	RunSucceeded RunStatus = "SUCCEEDED"
	RunFailed    RunStatus = "FAILED"
	RunCancelled RunStatus = "CANCELLED"
)

// Admission errors. AdmissionResult.Err wraps one of them (or a store error), so
// callers can tell the reasons apart with errors.Is.
var (
	ErrInvalidRunRequest      = errors.New("invalid run request")
	ErrWorkflowNotFound       = errors.New("workflow not found")
	ErrWorkflowOrgConflict    = errors.New("workflow registered to another org")
	ErrIdempotencyKeyMismatch = errors.New("idempotency key reused with a different payload")
	ErrIdempotencyKeyInFlight = errors.New("idempotency key in flight")
	ErrIdempotencyKeyUsed     = errors.New("idempotency key already used")
	ErrRunLimitReached        = errors.New("max concurrent runs reached")
	ErrRunNotFound            = errors.New("run not found")
	ErrRunFinished            = errors.New("run already finished with another status")
)

// AdmissionConfig configures an Admission. Zero values mean the documented defaults.
type AdmissionConfig struct {
	Redis  redis.UniversalClient // required
	Clock  Clock                 // required
	Random Random                // required: run ids and lock tokens
	// Registerer receives gateway_run_admission_total and
	// gateway_idempotency_cleanup_failure_total; nil means a private registry.
	Registerer prometheus.Registerer
	Logger     *slog.Logger // nil discards
	// DefaultOrgRunLimit applies to orgs without wf:org:limit:<org>. 0 means 10,
	// negative means no limit.
	DefaultOrgRunLimit int
	AdmissionLockTTL   time.Duration // per-org admission lock expiry; default 10s
	AdmissionLockRetry time.Duration // poll interval while the lock is busy; default 10ms
	AdmissionLockWait  time.Duration // give up (503) after this long; default 2s
	// StaleReservationAfter is how old a reservation without a run must be before a
	// retry or the sweeper may reclaim it; default 2 x AdmissionLockTTL.
	StaleReservationAfter time.Duration
	// MaxRequestBytes bounds the HTTP request body; default 1 MiB.
	MaxRequestBytes int64
}

func (c AdmissionConfig) withDefaults() AdmissionConfig {
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.DefaultOrgRunLimit == 0 {
		c.DefaultOrgRunLimit = defaultOrgRunLimit
	}
	if c.AdmissionLockTTL == 0 {
		c.AdmissionLockTTL = defaultAdmissionLockTTL
	}
	if c.AdmissionLockRetry == 0 {
		c.AdmissionLockRetry = defaultAdmissionLockRetry
	}
	if c.AdmissionLockWait == 0 {
		c.AdmissionLockWait = defaultAdmissionLockWait
	}
	if c.StaleReservationAfter == 0 {
		c.StaleReservationAfter = 2 * c.AdmissionLockTTL
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = defaultMaxRequestBytes
	}
	return c
}

// Admission admits workflow runs against per-org concurrency limits, with
// idempotency keys that survive rejections and crashes.
type Admission struct {
	cfg     AdmissionConfig
	rdb     redis.UniversalClient
	clock   Clock
	rand    Random
	locks   *locker
	log     *slog.Logger
	metrics *admissionMetrics
}

// NewAdmission checks cfg, fills in its defaults and registers the metrics.
func NewAdmission(cfg AdmissionConfig) (*Admission, error) {
	switch {
	case cfg.Redis == nil:
		return nil, errors.New("new admission: Redis client required")
	case cfg.Clock == nil:
		return nil, errors.New("new admission: Clock required")
	case cfg.Random == nil:
		return nil, errors.New("new admission: Random required")
	case cfg.AdmissionLockTTL < 0 || cfg.AdmissionLockRetry < 0 || cfg.AdmissionLockWait < 0 ||
		cfg.StaleReservationAfter < 0 || cfg.MaxRequestBytes < 0:
		return nil, errors.New("new admission: durations and sizes must not be negative")
	}
	cfg = cfg.withDefaults()
	m, err := newAdmissionMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("new admission: %w", err)
	}
	return &Admission{
		cfg:     cfg,
		rdb:     cfg.Redis,
		clock:   cfg.Clock,
		rand:    cfg.Random,
		locks:   &locker{rdb: cfg.Redis, clock: cfg.Clock, rand: cfg.Random},
		log:     cfg.Logger,
		metrics: m,
	}, nil
}

// AdmissionResult is the outcome of a run start, shaped like the HTTP reply.
type AdmissionResult struct {
	Status   int    // HTTP status code
	RunID    string // set with 200
	Replayed bool   // 200 for an idempotency key that already had its run
	Message  string // safe to show the client; empty with 200
	Err      error  // nil with 200; wraps one of the Err* reasons or a store error
}

func admitted(runID string, replayed bool) AdmissionResult {
	return AdmissionResult{Status: http.StatusOK, RunID: runID, Replayed: replayed}
}

func rejected(status int, message string, err error) AdmissionResult {
	return AdmissionResult{Status: status, Message: message, Err: err}
}

// cleanupContext labels gateway_idempotency_cleanup_failure_total.
type cleanupContext string

const (
	cleanupCountFailed      cleanupContext = "count_failed"
	cleanupConcurrencyLimit cleanupContext = "concurrency_limit"
	cleanupCreateFailed     cleanupContext = "create_failed"
	// The reservation write itself failed: it may have applied with its reply lost.
	cleanupReserveFailed cleanupContext = "reserve_failed"
)

// Redis keys. They carry no hash tags: the scripts need a single-node (or
// sentinel) Redis, as Cordum's gateway does.
const wfReservationsKey = "wf:run:reservations"

func wfDefKey(workflowID string) string    { return "wf:def:" + workflowID }
func wfOrgLimitKey(org string) string      { return "wf:org:limit:" + org }
func wfAdmissionLockKey(org string) string { return "cordum:wf:run:admission:" + org }
func wfIdempotencyKey(key string) string   { return "wf:run:idempotency:" + key }
func wfActiveRunsKey(org string) string    { return "wf:runs:active:" + org }
func wfRunKey(runID string) string         { return "wf:run:" + runID }

// Admission scripts. Each check-then-write is one script so no other request can
// slip in between the check and the write.
var (
	// reserveRunKeyScript: SET NX plus the reservation's timestamp in the index.
	// Returns 1, or the value that already holds the key.
	reserveRunKeyScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  return 1
end
return redis.call('GET', KEYS[1])`)

	// takeOverRunKeyScript moves a stale reservation to a new owner, only while it
	// still holds the old value and its run still does not exist.
	takeOverRunKeyScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
return 1`)

	// releaseRunKeyScript is compare-and-delete: a request whose reservation was
	// taken over must not delete the new owner's.
	releaseRunKeyScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0`)

	// createRunScript creates the run if the reservation (KEYS[3], when given) is
	// still ours and the org is under its limit. Checks come first and the writes
	// are ordered so a failing write leaves no half-made run (scripts do not roll back).
	createRunScript = redis.NewScript(`
if #KEYS > 2 and redis.call('GET', KEYS[3]) ~= ARGV[8] then return 'fenced' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local active = redis.call('SCARD', KEYS[2])
local limit = tonumber(ARGV[6])
if limit > 0 and active >= limit then return 'limit' end
if #KEYS > 2 then redis.call('ZREM', KEYS[4], ARGV[9]) end
redis.call('SADD', KEYS[2], ARGV[7])
redis.call('HSET', KEYS[1], 'org', ARGV[1], 'workflow', ARGV[2], 'status', 'RUNNING',
  'fingerprint', ARGV[3], 'created_at', ARGV[4], 'payload', ARGV[5], 'idempotency_key', ARGV[9])
return 'created'`)

	// completeRunScript finishes a RUNNING run and frees its slot. The slot is freed
	// on every call for a run of this org, so a repeat heals a lost reply.
	completeRunScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'org', 'status')
if not cur[1] or cur[1] ~= ARGV[1] then return 'missing' end
redis.call('SREM', KEYS[2], ARGV[3])
if cur[2] == ARGV[2] then return 'same' end
if cur[2] ~= 'RUNNING' then return 'finished' end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'completed_at', ARGV[4])
return 'done'`)

	// sweepRunKeyScript deletes a reservation that still holds the value the sweeper
	// read (so it is the same, stale reservation) and has no run (KEYS[3], when the
	// value names one). Index entries whose key is gone or whose run exists are
	// dropped from the index.
	sweepRunKeyScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then redis.call('ZREM', KEYS[2], ARGV[1]) return 2 end
if v ~= ARGV[2] then return 0 end
if #KEYS > 2 and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 3
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`)
)

// Config is the configuration in force, defaults filled in.
func (a *Admission) Config() AdmissionConfig { return a.cfg }

// RegisterWorkflow records that workflowID belongs to org. Registering it again for
// the same org is a no-op; for another org it fails with ErrWorkflowOrgConflict.
func (a *Admission) RegisterWorkflow(ctx context.Context, org, workflowID string) error {
	if org == "" || workflowID == "" {
		return fmt.Errorf("register workflow: %w: org and workflow id required", ErrInvalidRunRequest)
	}
	if err := a.rdb.HSetNX(ctx, wfDefKey(workflowID), "org", org).Err(); err != nil {
		return fmt.Errorf("register workflow %s: %w", workflowID, err)
	}
	owner, err := a.rdb.HGet(ctx, wfDefKey(workflowID), "org").Result()
	if err != nil {
		return fmt.Errorf("register workflow %s: read owner: %w", workflowID, err)
	}
	if owner != org {
		return fmt.Errorf("register workflow %s: %w", workflowID, ErrWorkflowOrgConflict)
	}
	return nil
}

// SetOrgRunLimit sets the org's maximum of concurrently running runs; n <= 0
// means no limit (and no admission lock).
func (a *Admission) SetOrgRunLimit(ctx context.Context, org string, n int) error {
	if org == "" {
		return fmt.Errorf("set org run limit: %w: org required", ErrInvalidRunRequest)
	}
	if err := a.rdb.Set(ctx, wfOrgLimitKey(org), strconv.Itoa(n), 0).Err(); err != nil {
		return fmt.Errorf("set run limit of org %s: %w", org, err)
	}
	return nil
}

// StartRun admits one run of workflowID for org. With an idempotency key, a retry
// carrying the same payload gets the same run id, and a rejected attempt leaves the
// key free for the next one.
func (a *Admission) StartRun(ctx context.Context, org, workflowID, idempotencyKey string, payload []byte) AdmissionResult {
	return a.record(a.startRun(ctx, org, workflowID, idempotencyKey, payload))
}

// record counts and logs a finished admission.
func (a *Admission) record(res AdmissionResult) AdmissionResult {
	a.metrics.admission.WithLabelValues(strconv.Itoa(res.Status)).Inc()
	if res.Status >= 500 {
		a.log.Warn("run admission failed", "status", res.Status, "err", res.Err)
	}
	return res
}

func (a *Admission) startRun(ctx context.Context, org, workflowID, key string, payload []byte) AdmissionResult {
	if res, bad := validateRunRequest(org, workflowID, key); bad {
		return res
	}

	owner, err := a.rdb.HGet(ctx, wfDefKey(workflowID), "org").Result()
	switch {
	case errors.Is(err, redis.Nil) || (err == nil && owner != org):
		// Another org's workflow is reported as missing, not as forbidden, so ids do
		// not leak across tenants.
		return rejected(http.StatusNotFound, "workflow not found",
			fmt.Errorf("look up workflow %s: %w", workflowID, ErrWorkflowNotFound))
	case err != nil:
		return rejected(http.StatusServiceUnavailable, "workflow lookup failed",
			fmt.Errorf("look up workflow %s: %w", workflowID, err))
	}

	limit, err := a.orgRunLimit(ctx, org)
	if err != nil {
		return rejected(http.StatusServiceUnavailable, "run limit lookup failed", err)
	}

	if limit > 0 {
		spec := lockSpec{TTL: a.cfg.AdmissionLockTTL, Poll: a.cfg.AdmissionLockRetry, Wait: a.cfg.AdmissionLockWait}
		held, err := a.locks.acquire(ctx, wfAdmissionLockKey(org), spec)
		if err != nil {
			return rejected(http.StatusServiceUnavailable, "run admission busy, retry later",
				fmt.Errorf("admission lock of org %s: %w", org, err))
		}
		defer func() {
			// A cancelled request still releases its lock instead of leaving it to the TTL.
			if err := a.locks.release(context.WithoutCancel(ctx), held); err != nil {
				a.log.Warn("admission lock release failed", "org", org, "err", err)
			}
		}()
	}

	runID := newRunID(a.rand)
	fp := payloadFingerprint(payload)

	var resv *runReservation
	if key != "" {
		r, done, res := a.reserveOrResolve(ctx, org, workflowID, key, runID, fp)
		if done {
			return res
		}
		resv = r
	}

	if limit > 0 {
		n, err := a.rdb.SCard(ctx, wfActiveRunsKey(org)).Result()
		if err != nil {
			a.cleanupReservation(ctx, resv, cleanupCountFailed)
			return rejected(http.StatusServiceUnavailable, "active run count failed",
				fmt.Errorf("count active runs of org %s: %w", org, err))
		}
		if n >= int64(limit) {
			a.cleanupReservation(ctx, resv, cleanupConcurrencyLimit)
			return rejected(http.StatusTooManyRequests, "max concurrent runs reached",
				fmt.Errorf("org %s has %d of %d runs: %w", org, n, limit, ErrRunLimitReached))
		}
	}

	outcome, err := a.createRun(ctx, runID, org, workflowID, fp, payload, resv, limit)
	switch {
	case err != nil:
		a.cleanupReservation(ctx, resv, cleanupCreateFailed)
		return rejected(http.StatusInternalServerError, "run creation failed", err)
	case outcome == "created":
		return admitted(runID, false)
	case outcome == "fenced":
		// Our reservation was reclaimed as stale while we ran; it is not ours to delete.
		return rejected(http.StatusConflict, "idempotency key in flight",
			fmt.Errorf("create run %s: reservation of key %s taken over: %w", runID, key, ErrIdempotencyKeyInFlight))
	case outcome == "limit":
		// Runs were created without the lock (the limit was just set): the script's
		// own count is what holds the limit.
		a.cleanupReservation(ctx, resv, cleanupConcurrencyLimit)
		return rejected(http.StatusTooManyRequests, "max concurrent runs reached",
			fmt.Errorf("create run %s: org %s: %w", runID, org, ErrRunLimitReached))
	default:
		a.cleanupReservation(ctx, resv, cleanupCreateFailed)
		return rejected(http.StatusInternalServerError, "run creation failed",
			fmt.Errorf("create run %s: script refused: %s", runID, outcome))
	}
}

func validateRunRequest(org, workflowID, key string) (AdmissionResult, bool) {
	var msg string
	switch {
	case org == "":
		msg = "org id required"
	case workflowID == "":
		msg = "workflow id required"
	case len(key) > MaxIdempotencyKeyBytes:
		msg = fmt.Sprintf("idempotency key longer than %d bytes", MaxIdempotencyKeyBytes)
	default:
		return AdmissionResult{}, false
	}
	return rejected(http.StatusBadRequest, msg, fmt.Errorf("validate run request: %w: %s", ErrInvalidRunRequest, msg)), true
}

// orgRunLimit is the org's stored limit, else the default; <= 0 means none.
func (a *Admission) orgRunLimit(ctx context.Context, org string) (int, error) {
	raw, err := a.rdb.Get(ctx, wfOrgLimitKey(org)).Result()
	if errors.Is(err, redis.Nil) {
		return a.cfg.DefaultOrgRunLimit, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read run limit of org %s: %w", org, err)
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, fmt.Errorf("read run limit of org %s: %q is not an integer", org, raw)
	}
	return n, nil
}

// runReservation is an idempotency key this request holds.
type runReservation struct {
	key   string // the client's key, also the member in wf:run:reservations
	value string // reservationValue(runID, fingerprint)
}

// reservationValue encodes what wf:run:idempotency:<key> holds: "<runID>|<hex sha256>".
func reservationValue(runID, fingerprint string) string { return runID + "|" + fingerprint }

// parseReservation reverses reservationValue; ok is false for anything else,
// including Cordum's bare run ids, which carry no fingerprint.
func parseReservation(v string) (runID, fingerprint string, ok bool) {
	runID, fingerprint, found := strings.Cut(v, "|")
	if !found || !isRunID(runID) || !isFingerprint(fingerprint) {
		return "", "", false
	}
	return runID, fingerprint, true
}

// reserveOrResolve reserves key for this request or decides the reply from its
// current holder. done reports that res is the final reply.
func (a *Admission) reserveOrResolve(ctx context.Context, org, workflowID, key, runID, fp string) (r *runReservation, done bool, res AdmissionResult) {
	mine := &runReservation{key: key, value: reservationValue(runID, fp)}
	// A second round only follows a takeover that lost a race: the key changed
	// between our read and our swap, so look at it once more.
	for range 2 {
		existing, reserved, err := a.reserve(ctx, mine)
		if err != nil {
			a.cleanupReservation(ctx, mine, cleanupReserveFailed)
			return nil, true, rejected(http.StatusInternalServerError, "idempotency reservation failed", err)
		}
		if reserved {
			return mine, false, AdmissionResult{}
		}
		res, takeOver := a.resolveTakenKey(ctx, org, workflowID, key, existing, fp)
		if !takeOver {
			return nil, true, res
		}
		swapped, err := a.takeOver(ctx, key, existing, mine)
		if err != nil {
			a.cleanupReservation(ctx, mine, cleanupReserveFailed)
			return nil, true, rejected(http.StatusInternalServerError, "idempotency reservation failed", err)
		}
		if swapped {
			a.log.Info("took over stale idempotency reservation", "key", key, "old", existing, "new", mine.value)
			return mine, false, AdmissionResult{}
		}
	}
	return nil, true, rejected(http.StatusConflict, "idempotency key in flight",
		fmt.Errorf("reserve idempotency key %s: %w", key, ErrIdempotencyKeyInFlight))
}

// reserve is SETNX of the reservation, with no TTL. It returns the value already
// there when the key is taken.
func (a *Admission) reserve(ctx context.Context, r *runReservation) (existing string, reserved bool, err error) {
	now := strconv.FormatInt(a.clock.Now().UnixMilli(), 10)
	v, err := reserveRunKeyScript.Run(ctx, a.rdb, []string{wfIdempotencyKey(r.key), wfReservationsKey}, r.value, r.key, now).Result()
	if err != nil {
		return "", false, fmt.Errorf("reserve idempotency key %s: %w", r.key, err)
	}
	switch v := v.(type) {
	case int64:
		return "", v == 1, nil
	case string:
		return v, false, nil
	}
	return "", false, fmt.Errorf("reserve idempotency key %s: unexpected reply %v", r.key, v)
}

// resolveTakenKey decides the reply for a key someone already reserved. takeOver
// means the holder is a stale reservation whose run never came to exist.
func (a *Admission) resolveTakenKey(ctx context.Context, org, workflowID, key, existing, fp string) (res AdmissionResult, takeOver bool) {
	heldRunID, heldFP, ok := parseReservation(existing)
	if !ok {
		return rejected(http.StatusConflict, "idempotency key already used",
			fmt.Errorf("idempotency key %s holds %q: %w", key, existing, ErrIdempotencyKeyUsed)), false
	}
	mismatch := rejected(http.StatusConflict, "idempotency key reused with a different payload",
		fmt.Errorf("idempotency key %s: %w", key, ErrIdempotencyKeyMismatch))

	run, err := a.rdb.HMGet(ctx, wfRunKey(heldRunID), "org", "workflow").Result()
	if err != nil {
		return rejected(http.StatusServiceUnavailable, "idempotency lookup failed",
			fmt.Errorf("read run %s of idempotency key %s: %w", heldRunID, key, err)), false
	}
	if runOrg, isString := run[0].(string); isString {
		// A different org or workflow with the same key is another intent too.
		if heldFP != fp || runOrg != org || run[1] != workflowID {
			return mismatch, false
		}
		return admitted(heldRunID, true), false
	}
	if heldFP != fp {
		return mismatch, false
	}

	inFlight := rejected(http.StatusConflict, "idempotency key in flight",
		fmt.Errorf("idempotency key %s: run %s not created yet: %w", key, heldRunID, ErrIdempotencyKeyInFlight))
	score, err := a.rdb.ZScore(ctx, wfReservationsKey, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		// Every script that writes a run-less reservation indexes it in the same
		// step, so a run-less value without an index entry lost its run later
		// (deleted): nothing is in flight.
		return AdmissionResult{}, true
	case err != nil:
		return rejected(http.StatusServiceUnavailable, "idempotency lookup failed",
			fmt.Errorf("read reservation age of idempotency key %s: %w", key, err)), false
	}
	age := a.clock.Now().Sub(time.UnixMilli(int64(score)))
	if age < a.cfg.StaleReservationAfter {
		return inFlight, false
	}
	return AdmissionResult{}, true
}

// takeOver swaps a stale reservation (old) to r, atomically and only if its run
// still does not exist.
func (a *Admission) takeOver(ctx context.Context, key, old string, r *runReservation) (bool, error) {
	oldRunID, _, _ := parseReservation(old)
	now := strconv.FormatInt(a.clock.Now().UnixMilli(), 10)
	n, err := takeOverRunKeyScript.Run(ctx, a.rdb,
		[]string{wfIdempotencyKey(key), wfReservationsKey, wfRunKey(oldRunID)},
		old, r.value, key, now).Int64()
	if err != nil {
		return false, fmt.Errorf("take over idempotency key %s: %w", key, err)
	}
	return n == 1, nil
}

// deleteReservation is compare-and-delete of r; deleted is false when the key no
// longer holds r's value.
func (a *Admission) deleteReservation(ctx context.Context, r *runReservation) (deleted bool, err error) {
	n, err := releaseRunKeyScript.Run(ctx, a.rdb, []string{wfIdempotencyKey(r.key), wfReservationsKey}, r.value, r.key).Int64()
	if err != nil {
		return false, fmt.Errorf("delete idempotency reservation %s: %w", r.key, err)
	}
	return n == 1, nil
}

// cleanupReservation frees r after a rejection. A failure is counted and logged,
// not retried: the reservation becomes stale and a retry or the sweeper reclaims it.
func (a *Admission) cleanupReservation(ctx context.Context, r *runReservation, why cleanupContext) {
	if r == nil {
		return
	}
	// Cleanup must run even when the client has gone away.
	if _, err := a.deleteReservation(context.WithoutCancel(ctx), r); err != nil {
		a.metrics.cleanupFailure.WithLabelValues(string(why)).Inc()
		a.log.Warn("idempotency cleanup failed", "context", string(why), "key", r.key, "err", err)
	}
}

// createRun runs createRunScript; the outcome is one of created, fenced, exists, limit.
func (a *Admission) createRun(ctx context.Context, runID, org, workflowID, fp string, payload []byte, r *runReservation, limit int) (string, error) {
	keys := []string{wfRunKey(runID), wfActiveRunsKey(org)}
	resvValue, resvMember := "", ""
	if r != nil {
		keys = append(keys, wfIdempotencyKey(r.key), wfReservationsKey)
		resvValue, resvMember = r.value, r.key
	}
	createdAt := strconv.FormatInt(a.clock.Now().UnixMilli(), 10)
	outcome, err := createRunScript.Run(ctx, a.rdb, keys,
		org, workflowID, fp, createdAt, payload, strconv.Itoa(limit), runID, resvValue, resvMember).Text()
	if err != nil {
		return "", fmt.Errorf("create run %s: %w", runID, err)
	}
	return outcome, nil
}

// CompleteRun finishes a RUNNING run with a final status and frees its slot.
// Repeating it with the same status is a no-op; another final status fails with
// ErrRunFinished and changes nothing.
func (a *Admission) CompleteRun(ctx context.Context, org, runID string, status RunStatus) error {
	switch status {
	case RunSucceeded, RunFailed, RunCancelled:
	default:
		return fmt.Errorf("complete run %s: %w: status %q is not final", runID, ErrInvalidRunRequest, status)
	}
	if org == "" || !isRunID(runID) {
		return fmt.Errorf("complete run %s: %w", runID, ErrRunNotFound)
	}
	now := strconv.FormatInt(a.clock.Now().UnixMilli(), 10)
	outcome, err := completeRunScript.Run(ctx, a.rdb, []string{wfRunKey(runID), wfActiveRunsKey(org)},
		org, string(status), runID, now).Text()
	if err != nil {
		return fmt.Errorf("complete run %s: %w", runID, err)
	}
	switch outcome {
	case "done", "same":
		return nil
	case "missing":
		return fmt.Errorf("complete run %s: %w", runID, ErrRunNotFound)
	default:
		return fmt.Errorf("complete run %s as %s: %w", runID, status, ErrRunFinished)
	}
}

// SweepStaleReservations deletes reservations older than StaleReservationAfter
// whose run does not exist, so a crashed request cannot poison a key even if its
// client never retries. It handles at most sweepBatch index entries per call.
func (a *Admission) SweepStaleReservations(ctx context.Context) (removed int, err error) {
	cutoff := a.clock.Now().Add(-a.cfg.StaleReservationAfter).UnixMilli()
	keys, err := a.rdb.ZRangeByScore(ctx, wfReservationsKey, &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: sweepBatch,
	}).Result()
	if err != nil {
		return 0, fmt.Errorf("sweep reservations: list stale: %w", err)
	}
	for _, key := range keys {
		v, err := a.rdb.Get(ctx, wfIdempotencyKey(key)).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return removed, fmt.Errorf("sweep reservation %s: read: %w", key, err)
		}
		scriptKeys := []string{wfIdempotencyKey(key), wfReservationsKey}
		// An unparseable value names no run, so nothing can ever complete it.
		if runID, _, ok := parseReservation(v); ok {
			scriptKeys = append(scriptKeys, wfRunKey(runID))
		}
		n, err := sweepRunKeyScript.Run(ctx, a.rdb, scriptKeys, key, v).Int64()
		if err != nil {
			return removed, fmt.Errorf("sweep reservation %s: %w", key, err)
		}
		if n == 1 {
			removed++
			a.log.Info("swept stale idempotency reservation", "key", key, "value", v)
		}
	}
	return removed, nil
}

// newRunID draws a version-4 UUID from r (Cordum uses uuid.NewString).
func newRunID(r Random) string {
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^0xf000 | 0x4000
	lo = lo&^(3<<62) | 2<<62
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

// isRunID accepts the 36-character UUID form newRunID produces. Checking it keeps a
// foreign value from naming another wf:run:* key (wf:run:reservations).
func isRunID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !isLowerHex(c) {
			return false
		}
	}
	return true
}

func isFingerprint(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') }

// payloadFingerprint is the hex SHA-256 of the payload as JSON means it:
// clients write one body many ways (spacing, field order, escapes; a retry
// may go through another library), and a key's retry in another form is the
// same request, not a reuse for another payload. A body that is not JSON is
// taken byte for byte.
func payloadFingerprint(payload []byte) string {
	sum := sha256.Sum256(canonicalJSON(payload))
	return hex.EncodeToString(sum[:])
}

// canonicalJSON writes a JSON value one way: objects' fields sorted, strings
// escaped alike, no whitespace, numbers as written; anything else as it is.
func canonicalJSON(payload []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return payload
	}
	if _, err := dec.Token(); err != io.EOF { // one value, nothing after it
		return payload
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return payload
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// admissionMetrics are the gateway's admission counters.
type admissionMetrics struct {
	admission      *prometheus.CounterVec // gateway_run_admission_total{code}
	cleanupFailure *prometheus.CounterVec // gateway_idempotency_cleanup_failure_total{context}
}

func newAdmissionMetrics(reg prometheus.Registerer) (*admissionMetrics, error) {
	admission, err := registerCounterVec(reg, prometheus.CounterOpts{
		Name: "gateway_run_admission_total",
		Help: "Workflow run start requests, by HTTP status code of the reply.",
	}, "code")
	if err != nil {
		return nil, err
	}
	cleanup, err := registerCounterVec(reg, prometheus.CounterOpts{
		Name: "gateway_idempotency_cleanup_failure_total",
		Help: "Idempotency reservations that could not be deleted after a rejected run start, by where it failed.",
	}, "context")
	if err != nil {
		return nil, err
	}
	return &admissionMetrics{admission: admission, cleanupFailure: cleanup}, nil
}

// registerCounterVec registers a counter vector, reusing one already registered
// under the same name (two gateways sharing a registry share their counters).
func registerCounterVec(reg prometheus.Registerer, opts prometheus.CounterOpts, label string) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(opts, []string{label})
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("register %s: %w", opts.Name, err)
	}
	return c, nil
}
