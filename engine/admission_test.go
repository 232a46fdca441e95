package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

const (
	admOrg = "acme"
	admWF  = "wf-1"
)

var errAdmInjected = errors.New("injected admission fault")

// admHook runs a callback before matching Redis commands; a callback error fails
// the command before it is sent (not applied).
type admHook struct {
	mu    sync.Mutex
	rules []*admRule
}

type admRule struct {
	match func(args []any) bool
	left  int
	fn    func(ctx context.Context) error
}

func (h *admHook) on(match func(args []any) bool, times int, fn func(ctx context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = append(h.rules, &admRule{match: match, left: times, fn: fn})
}

func (h *admHook) fail(match func(args []any) bool, times int) {
	h.on(match, times, func(context.Context) error { return errAdmInjected })
}

func (h *admHook) take(args []any) *admRule {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.rules {
		if r.left > 0 && r.match(args) {
			r.left--
			return r
		}
	}
	return nil
}

func (h *admHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *admHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// The callback may issue commands itself, so the lock is not held across it.
		if r := h.take(cmd.Args()); r != nil {
			if err := r.fn(ctx); err != nil {
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}

func (h *admHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// admScript matches EVALSHA of s (go-redis tries EVALSHA first; a non-NOSCRIPT
// error there is final).
func admScript(s *redis.Script) func([]any) bool {
	return func(args []any) bool {
		return len(args) > 1 && strings.EqualFold(fmt.Sprint(args[0]), "evalsha") && fmt.Sprint(args[1]) == s.Hash()
	}
}

func admCommand(name string) func([]any) bool {
	return func(args []any) bool {
		return len(args) > 0 && strings.EqualFold(fmt.Sprint(args[0]), name)
	}
}

type testAdmission struct {
	*Admission
	env  *testEnv
	hook *admHook
	reg  *prometheus.Registry
}

func newTestAdmission(t *testing.T, env *testEnv, mutate ...func(*AdmissionConfig)) *testAdmission {
	t.Helper()
	hook := &admHook{}
	env.rdb.AddHook(hook)
	reg := prometheus.NewRegistry()
	cfg := AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand, Registerer: reg}
	for _, m := range mutate {
		m(&cfg)
	}
	a, err := NewAdmission(cfg)
	require.NoError(t, err)
	require.NoError(t, a.RegisterWorkflow(context.Background(), admOrg, admWF))
	return &testAdmission{Admission: a, env: env, hook: hook, reg: reg}
}

func (ta *testAdmission) start(key, payload string) AdmissionResult {
	return ta.StartRun(context.Background(), admOrg, admWF, key, []byte(payload))
}

// mustStart admits a run and returns its id.
func (ta *testAdmission) mustStart(t *testing.T, key, payload string) string {
	t.Helper()
	res := ta.start(key, payload)
	require.Equal(t, http.StatusOK, res.Status, "admission: %v", res.Err)
	return res.RunID
}

// reservation returns the value of wf:run:idempotency:<key>, "" when absent.
func (ta *testAdmission) reservation(t *testing.T, key string) string {
	t.Helper()
	v, err := ta.env.rdb.Get(context.Background(), wfIdempotencyKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return v
}

// reservedRunID is the run id the key maps to.
func (ta *testAdmission) reservedRunID(t *testing.T, key string) string {
	t.Helper()
	id, _, ok := parseReservation(ta.reservation(t, key))
	require.True(t, ok, "key %s holds no parseable reservation", key)
	return id
}

func (ta *testAdmission) indexed(t *testing.T, key string) bool {
	t.Helper()
	_, err := ta.env.rdb.ZScore(context.Background(), wfReservationsKey, key).Result()
	if errors.Is(err, redis.Nil) {
		return false
	}
	require.NoError(t, err)
	return true
}

func (ta *testAdmission) run(t *testing.T, runID string) map[string]string {
	t.Helper()
	m, err := ta.env.rdb.HGetAll(context.Background(), wfRunKey(runID)).Result()
	require.NoError(t, err)
	return m
}

func (ta *testAdmission) active(t *testing.T) []string {
	t.Helper()
	ids, err := ta.env.rdb.SMembers(context.Background(), wfActiveRunsKey(admOrg)).Result()
	require.NoError(t, err)
	return ids
}

// runCount counts run hashes, whatever the active set says.
func (ta *testAdmission) runCount(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	keys, err := ta.env.rdb.Keys(ctx, "wf:run:*").Result()
	require.NoError(t, err)
	n := 0
	for _, k := range keys {
		typ, err := ta.env.rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		if typ == "hash" {
			n++
		}
	}
	return n
}

func (ta *testAdmission) setLimit(t *testing.T, n int) {
	t.Helper()
	require.NoError(t, ta.SetOrgRunLimit(context.Background(), admOrg, n))
}

// crashAfterReserve leaves what a request that died right after its reservation
// leaves: the reservation, and no run.
func (ta *testAdmission) crashAfterReserve(t *testing.T, key, payload string) *runReservation {
	t.Helper()
	r := &runReservation{key: key, value: reservationValue(newRunID(ta.rand), payloadFingerprint([]byte(payload)))}
	_, reserved, err := ta.reserve(context.Background(), r)
	require.NoError(t, err)
	require.True(t, reserved)
	return r
}

func (ta *testAdmission) admissions(code int) float64 {
	return testutil.ToFloat64(ta.metrics.admission.WithLabelValues(fmt.Sprint(code)))
}

func (ta *testAdmission) cleanupFailures(c cleanupContext) float64 {
	return testutil.ToFloat64(ta.metrics.cleanupFailure.WithLabelValues(string(c)))
}

func TestAdmissionStatusCodes(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		setup      func(t *testing.T, ta *testAdmission)
		org, wf    string
		key        string
		payload    string
		wantStatus int
		wantErr    error
		// keyFree: the key must be left unreserved (a rejection cleaned up).
		keyFree bool
	}{
		{name: "admitted", key: "k", wantStatus: http.StatusOK},
		{name: "admitted without key", wantStatus: http.StatusOK},
		{name: "255-byte key", key: strings.Repeat("k", 255), wantStatus: http.StatusOK},
		{name: "empty org", org: "-", wantStatus: http.StatusBadRequest, wantErr: ErrInvalidRunRequest},
		{name: "empty workflow", wf: "-", wantStatus: http.StatusBadRequest, wantErr: ErrInvalidRunRequest},
		{name: "256-byte key", key: strings.Repeat("k", 256), wantStatus: http.StatusBadRequest,
			wantErr: ErrInvalidRunRequest, keyFree: true},
		{name: "unknown workflow", wf: "nope", key: "k", wantStatus: http.StatusNotFound,
			wantErr: ErrWorkflowNotFound, keyFree: true},
		{name: "workflow of another org", key: "k", wantStatus: http.StatusNotFound, wantErr: ErrWorkflowNotFound,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				require.NoError(t, ta.RegisterWorkflow(ctx, "other", "wf-other"))
			}, wf: "wf-other"},
		{name: "key taken by another payload", key: "k", payload: `{"b":2}`, wantStatus: http.StatusConflict,
			wantErr: ErrIdempotencyKeyMismatch, setup: func(t *testing.T, ta *testAdmission) {
				ta.mustStart(t, "k", `{"a":1}`)
			}},
		{name: "key holds an unparseable value", key: "k", wantStatus: http.StatusConflict,
			wantErr: ErrIdempotencyKeyUsed, setup: func(t *testing.T, ta *testAdmission) {
				require.NoError(t, ta.env.rdb.Set(ctx, wfIdempotencyKey("k"), "legacy-run-id", 0).Err())
			}},
		{name: "key holds an empty value", key: "k", wantStatus: http.StatusConflict,
			wantErr: ErrIdempotencyKeyUsed, setup: func(t *testing.T, ta *testAdmission) {
				require.NoError(t, ta.env.rdb.Set(ctx, wfIdempotencyKey("k"), "", 0).Err())
			}},
		{name: "limit reached", key: "k", wantStatus: http.StatusTooManyRequests, wantErr: ErrRunLimitReached,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				ta.setLimit(t, 1)
				ta.mustStart(t, "", "{}")
			}},
		{name: "create script fails", key: "k", wantStatus: http.StatusInternalServerError, wantErr: errAdmInjected,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				ta.hook.fail(admScript(createRunScript), 1)
			}},
		{name: "create fails on a broken active set without a limit", key: "k",
			wantStatus: http.StatusInternalServerError, keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				ta.setLimit(t, 0)
				require.NoError(t, ta.env.rdb.Set(ctx, wfActiveRunsKey(admOrg), "not a set", 0).Err())
			}},
		{name: "count fails", key: "k", wantStatus: http.StatusServiceUnavailable, wantErr: errAdmInjected,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				ta.hook.fail(admCommand("scard"), 1)
			}},
		{name: "admission lock busy", key: "k", wantStatus: http.StatusServiceUnavailable, wantErr: ErrLockBusy,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				require.NoError(t, ta.env.rdb.Set(ctx, wfAdmissionLockKey(admOrg), "someone-else", 0).Err())
			}},
		{name: "workflow lookup fails", key: "k", wantStatus: http.StatusServiceUnavailable, wantErr: errAdmInjected,
			keyFree: true, setup: func(t *testing.T, ta *testAdmission) {
				ta.hook.fail(admCommand("hget"), 1)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, env *testEnv) {
				ta := newTestAdmission(t, env)
				if tc.setup != nil {
					tc.setup(t, ta)
				}
				org, wf, payload := admOrg, admWF, tc.payload
				if tc.org == "-" {
					org = ""
				}
				switch tc.wf {
				case "":
				case "-":
					wf = ""
				default:
					wf = tc.wf
				}
				if payload == "" {
					payload = "{}"
				}
				runsBefore := ta.runCount(t)

				res := ta.StartRun(ctx, org, wf, tc.key, []byte(payload))

				require.Equal(t, tc.wantStatus, res.Status, "err: %v", res.Err)
				require.Equal(t, 1.0, ta.admissions(tc.wantStatus))
				if tc.wantStatus == http.StatusOK {
					require.NoError(t, res.Err)
					require.True(t, isRunID(res.RunID), res.RunID)
					require.Equal(t, string(RunRunning), ta.run(t, res.RunID)["status"])
					require.Contains(t, ta.active(t), res.RunID)
					if tc.key != "" {
						require.Equal(t, res.RunID, ta.reservedRunID(t, tc.key))
						require.False(t, ta.indexed(t, tc.key), "a created run leaves the reservation index")
					}
				} else {
					require.Error(t, res.Err)
					require.NotEmpty(t, res.Message)
					require.Empty(t, res.RunID)
					require.Equal(t, runsBefore, ta.runCount(t), "a rejection creates no run")
					if tc.wantErr != nil {
						require.ErrorIs(t, res.Err, tc.wantErr)
					}
				}
				if tc.keyFree {
					require.Empty(t, ta.reservation(t, tc.key), "rejection must release the reservation")
					require.False(t, ta.indexed(t, tc.key))
				}
				// The admission lock never outlives the request.
				if tc.name != "admission lock busy" {
					n, err := env.rdb.Exists(ctx, wfAdmissionLockKey(admOrg)).Result()
					require.NoError(t, err)
					require.Zero(t, n)
				}
			})
		})
	}
}

func TestAdmissionLockBusyWaitsTheConfiguredTime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env, func(c *AdmissionConfig) { c.AdmissionLockWait = 500 * time.Millisecond })
		ctx := context.Background()
		require.NoError(t, env.rdb.Set(ctx, wfAdmissionLockKey(admOrg), "someone-else", 0).Err())
		polls := 0
		ta.hook.on(func(args []any) bool {
			return admCommand("set")(args) && fmt.Sprint(args[1]) == wfAdmissionLockKey(admOrg)
		}, 1000, func(context.Context) error { polls++; return nil })
		began := env.clock.Now()

		res := ta.start("k", "{}")

		require.Equal(t, http.StatusServiceUnavailable, res.Status)
		require.Equal(t, 500*time.Millisecond, env.clock.Now().Sub(began), "gives up after AdmissionLockWait")
		require.Equal(t, 51, polls, "one attempt, then one per 10ms poll")
		v, err := env.rdb.Get(ctx, wfAdmissionLockKey(admOrg)).Result()
		require.NoError(t, err)
		require.Equal(t, "someone-else", v, "the holder's lock is untouched")
	})
}

func TestAdmissionRunLimits(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		t.Run("default limit is 10", func(t *testing.T) {
			ta := newTestAdmission(t, env)
			for i := range 10 {
				ta.mustStart(t, fmt.Sprintf("k%d", i), "{}")
			}
			require.Equal(t, http.StatusTooManyRequests, ta.start("k10", "{}").Status)
			require.Len(t, ta.active(t), 10)
			require.NoError(t, env.rdb.FlushDB(ctx).Err())
		})
		t.Run("configured default", func(t *testing.T) {
			ta := newTestAdmission(t, env, func(c *AdmissionConfig) { c.DefaultOrgRunLimit = 2 })
			ta.mustStart(t, "", "{}")
			ta.mustStart(t, "", "{}")
			require.Equal(t, http.StatusTooManyRequests, ta.start("", "{}").Status)
			require.NoError(t, env.rdb.FlushDB(ctx).Err())
		})
		for _, unlimited := range []struct {
			name string
			cfg  func(*AdmissionConfig)
			set  func(t *testing.T, ta *testAdmission)
		}{
			{name: "stored 0", set: func(t *testing.T, ta *testAdmission) { ta.setLimit(t, 0) }},
			{name: "stored negative", set: func(t *testing.T, ta *testAdmission) { ta.setLimit(t, -1) }},
			{name: "negative default", cfg: func(c *AdmissionConfig) { c.DefaultOrgRunLimit = -1 }},
		} {
			t.Run("no limit: "+unlimited.name, func(t *testing.T) {
				var mutate []func(*AdmissionConfig)
				if unlimited.cfg != nil {
					mutate = append(mutate, unlimited.cfg)
				}
				ta := newTestAdmission(t, env, mutate...)
				if unlimited.set != nil {
					unlimited.set(t, ta)
				}
				// Without a limit there is no admission lock: a held one blocks nothing.
				require.NoError(t, env.rdb.Set(ctx, wfAdmissionLockKey(admOrg), "someone-else", 0).Err())
				began := env.clock.Now()
				for range 12 {
					ta.mustStart(t, "", "{}")
				}
				require.Equal(t, began, env.clock.Now(), "no lock polling")
				require.Len(t, ta.active(t), 12)
				require.NoError(t, env.rdb.FlushDB(ctx).Err())
			})
		}
		t.Run("unparseable stored limit", func(t *testing.T) {
			ta := newTestAdmission(t, env)
			require.NoError(t, env.rdb.Set(ctx, wfOrgLimitKey(admOrg), "ten", 0).Err())
			require.Equal(t, http.StatusServiceUnavailable, ta.start("k", "{}").Status)
			require.Empty(t, ta.reservation(t, "k"))
			require.NoError(t, env.rdb.FlushDB(ctx).Err())
		})
	})
}

func TestAdmissionReplaySameKeyAndPayload(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)

		first := ta.start("retry-1", `{"prompt":"hi"}`)
		second := ta.start("retry-1", `{"prompt":"hi"}`)

		require.Equal(t, http.StatusOK, first.Status)
		require.False(t, first.Replayed)
		require.Equal(t, http.StatusOK, second.Status)
		require.True(t, second.Replayed)
		require.Equal(t, first.RunID, second.RunID)
		require.Equal(t, []string{first.RunID}, ta.active(t), "exactly one run")
		run := ta.run(t, first.RunID)
		require.Equal(t, map[string]string{
			"org": admOrg, "workflow": admWF, "status": "RUNNING",
			"fingerprint":     payloadFingerprint([]byte(`{"prompt":"hi"}`)),
			"created_at":      fmt.Sprint(env.clock.Now().UnixMilli()),
			"payload":         `{"prompt":"hi"}`,
			"idempotency_key": "retry-1",
		}, run)
		require.Equal(t, 2.0, ta.admissions(http.StatusOK))
	})
}

// A retry writes the same body another way (spacing, field order, an
// escaped character, a final newline): it is the same request and replays
// the run. Before, the fingerprint was of the bytes, and such a retry was
// refused as a reuse for another payload (run-admission-contract 2700 with
// clients' encodings varied).
func TestAdmissionRetryInAnotherEncodingReplays(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		first := ta.start("retry-1", `{"input":"key-1","priority":2}`)
		require.Equal(t, http.StatusOK, first.Status)
		for _, body := range []string{`{ "input": "key-1", "priority": 2 }`, `{"priority":2,"input":"key-1"}`,
			`{"input":"key\u002d1","priority":2}`, "{\n  \"input\": \"key-1\",\n  \"priority\": 2\n}\n"} {
			again := ta.start("retry-1", body)
			require.Equal(t, http.StatusOK, again.Status, body)
			require.True(t, again.Replayed, body)
			require.Equal(t, first.RunID, again.RunID, body)
		}
		other := ta.start("retry-1", `{"input":"key-1","priority":3}`)
		require.Equal(t, http.StatusConflict, other.Status, "another payload is still another intent")
	})
}

func TestAdmissionKeyReuseWithAnotherIntentIsRefused(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		require.NoError(t, ta.RegisterWorkflow(ctx, admOrg, "wf-2"))
		require.NoError(t, ta.RegisterWorkflow(ctx, "globex", "wf-g"))
		id := ta.mustStart(t, "k", `{"a":1}`)
		before := ta.reservation(t, "k")

		for _, tc := range []struct {
			name, org, wf, payload string
		}{
			{"other payload", admOrg, admWF, `{"a":2}`},
			{"other workflow", admOrg, "wf-2", `{"a":1}`},
			{"other org", "globex", "wf-g", `{"a":1}`},
		} {
			res := ta.StartRun(ctx, tc.org, tc.wf, "k", []byte(tc.payload))
			require.Equal(t, http.StatusConflict, res.Status, tc.name)
			require.ErrorIs(t, res.Err, ErrIdempotencyKeyMismatch, tc.name)
			require.Equal(t, "idempotency key reused with a different payload", res.Message)
		}
		require.Equal(t, before, ta.reservation(t, "k"), "the key is unchanged")
		require.Equal(t, []string{id}, ta.active(t))
		n, err := env.rdb.SCard(ctx, wfActiveRunsKey("globex")).Result()
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// The seed's regression: a 429 must not poison the key.
func TestAdmissionRejectedRunReleasesIdempotencyReservation(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		ta.setLimit(t, 1)
		blocker := ta.mustStart(t, "", "{}")
		creates := 0
		ta.hook.on(admScript(createRunScript), 100, func(context.Context) error { creates++; return nil })

		rejected := ta.start("retry-after-limit", `{"x":1}`)
		require.Equal(t, http.StatusTooManyRequests, rejected.Status)
		require.Zero(t, creates, "the count step rejects it, before any create")
		require.Empty(t, ta.reservation(t, "retry-after-limit"))
		require.False(t, ta.indexed(t, "retry-after-limit"))

		require.NoError(t, ta.CompleteRun(ctx, admOrg, blocker, RunSucceeded))
		retry := ta.start("retry-after-limit", `{"x":1}`)

		require.Equal(t, http.StatusOK, retry.Status, "err: %v", retry.Err)
		require.False(t, retry.Replayed)
		require.Equal(t, retry.RunID, ta.reservedRunID(t, "retry-after-limit"))
		require.Equal(t, "RUNNING", ta.run(t, retry.RunID)["status"])
		require.Equal(t, []string{retry.RunID}, ta.active(t))
		require.Zero(t, ta.cleanupFailures(cleanupConcurrencyLimit))
	})
}

func TestAdmissionCleanupSparesAnotherOwnersReservation(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		other := reservationValue(newRunID(ta.rand), payloadFingerprint([]byte("{}")))
		// While this request counts, another takes its reservation over; then the
		// count fails and this request cleans up.
		ta.hook.on(admCommand("scard"), 1, func(ctx context.Context) error {
			require.NoError(t, env.rdb.Set(ctx, wfIdempotencyKey("k"), other, 0).Err())
			return errAdmInjected
		})

		res := ta.start("k", "{}")

		require.Equal(t, http.StatusServiceUnavailable, res.Status)
		require.Equal(t, other, ta.reservation(t, "k"), "compare-and-delete left the new owner's value")
		require.True(t, ta.indexed(t, "k"), "and its index entry")
		require.Zero(t, ta.cleanupFailures(cleanupCountFailed), "a refused delete is not a failure")

		// And directly: a stale value deletes nothing; the owner's value deletes.
		deleted, err := ta.deleteReservation(ctx, &runReservation{key: "k", value: "not-the-value"})
		require.NoError(t, err)
		require.False(t, deleted)
		deleted, err = ta.deleteReservation(ctx, &runReservation{key: "k", value: other})
		require.NoError(t, err)
		require.True(t, deleted)
		require.Empty(t, ta.reservation(t, "k"))
		require.False(t, ta.indexed(t, "k"))
	})
}

func TestAdmissionCleanupFailureIsCounted(t *testing.T) {
	cases := []struct {
		context    cleanupContext
		wantStatus int
		setup      func(t *testing.T, ta *testAdmission)
	}{
		{cleanupCountFailed, http.StatusServiceUnavailable, func(t *testing.T, ta *testAdmission) {
			ta.hook.fail(admCommand("scard"), 1)
		}},
		{cleanupConcurrencyLimit, http.StatusTooManyRequests, func(t *testing.T, ta *testAdmission) {
			ta.setLimit(t, 1)
			ta.mustStart(t, "", "{}")
		}},
		{cleanupCreateFailed, http.StatusInternalServerError, func(t *testing.T, ta *testAdmission) {
			ta.hook.fail(admScript(createRunScript), 1)
		}},
		{cleanupReserveFailed, http.StatusInternalServerError, func(t *testing.T, ta *testAdmission) {
			ta.hook.fail(admScript(reserveRunKeyScript), 1)
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.context), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, env *testEnv) {
				ta := newTestAdmission(t, env)
				tc.setup(t, ta)
				ta.hook.fail(admScript(releaseRunKeyScript), 1)

				res := ta.start("k", "{}")

				require.Equal(t, tc.wantStatus, res.Status, "err: %v", res.Err)
				for _, c := range []cleanupContext{cleanupCountFailed, cleanupConcurrencyLimit, cleanupCreateFailed, cleanupReserveFailed} {
					want := 0.0
					if c == tc.context {
						want = 1
					}
					require.Equal(t, want, ta.cleanupFailures(c), "context %s", c)
				}
				if tc.context == cleanupReserveFailed {
					return // the reservation was never written
				}
				require.NotEmpty(t, ta.reservation(t, "k"), "the failed cleanup leaked the reservation")

				// The leak heals: once stale, the sweeper reclaims it and the key works.
				env.clock.Advance(ta.cfg.StaleReservationAfter)
				removed, err := ta.SweepStaleReservations(context.Background())
				require.NoError(t, err)
				require.Equal(t, 1, removed)
				require.Empty(t, ta.reservation(t, "k"))
			})
		})
	}
}

func TestAdmissionCrashedReservationIsTakenOverWhenStale(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		crashed := ta.crashAfterReserve(t, "k", `{"a":1}`)
		crashedRunID, _, _ := parseReservation(crashed.value)

		// Just before the bound, the reservation may still belong to a live request.
		env.clock.Advance(ta.cfg.StaleReservationAfter - time.Millisecond)
		early := ta.start("k", `{"a":1}`)
		require.Equal(t, http.StatusConflict, early.Status)
		require.ErrorIs(t, early.Err, ErrIdempotencyKeyInFlight)
		require.Equal(t, crashed.value, ta.reservation(t, "k"), "an early retry does not touch it")

		// Another payload never takes the key over, stale or not.
		env.clock.Advance(time.Millisecond)
		other := ta.start("k", `{"a":2}`)
		require.Equal(t, http.StatusConflict, other.Status)
		require.ErrorIs(t, other.Err, ErrIdempotencyKeyMismatch)
		require.Equal(t, crashed.value, ta.reservation(t, "k"))

		late := ta.start("k", `{"a":1}`)
		require.Equal(t, http.StatusOK, late.Status, "err: %v", late.Err)
		require.False(t, late.Replayed)
		require.NotEqual(t, crashedRunID, late.RunID)
		require.Equal(t, "RUNNING", ta.run(t, late.RunID)["status"])
		require.Equal(t, late.RunID, ta.reservedRunID(t, "k"))
		require.False(t, ta.indexed(t, "k"))

		// The crashed request wakes up: its create is fenced off.
		outcome, err := ta.createRun(ctx, crashedRunID, admOrg, admWF, payloadFingerprint([]byte(`{"a":1}`)),
			[]byte(`{"a":1}`), crashed, 10)
		require.NoError(t, err)
		require.Equal(t, "fenced", outcome)
		require.Empty(t, ta.run(t, crashedRunID))
		require.Equal(t, []string{late.RunID}, ta.active(t))

		// A replay now returns the new run.
		replay := ta.start("k", `{"a":1}`)
		require.Equal(t, http.StatusOK, replay.Status)
		require.Equal(t, late.RunID, replay.RunID)
	})
}

// The crashed request finishes its create between the retry's look and its
// takeover: the takeover must refuse, and the retry replays that run.
func TestAdmissionTakeOverLosesToALateCreate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		payload := `{"a":1}`
		crashed := ta.crashAfterReserve(t, "k", payload)
		crashedRunID, _, _ := parseReservation(crashed.value)
		env.clock.Advance(ta.cfg.StaleReservationAfter)
		ta.hook.on(admScript(takeOverRunKeyScript), 1, func(ctx context.Context) error {
			outcome, err := ta.createRun(ctx, crashedRunID, admOrg, admWF, payloadFingerprint([]byte(payload)),
				[]byte(payload), crashed, 10)
			require.NoError(t, err)
			require.Equal(t, "created", outcome)
			return nil
		})

		res := ta.start("k", payload)

		require.Equal(t, http.StatusOK, res.Status, "err: %v", res.Err)
		require.True(t, res.Replayed)
		require.Equal(t, crashedRunID, res.RunID)
		require.Equal(t, crashed.value, ta.reservation(t, "k"))
		require.Equal(t, []string{crashedRunID}, ta.active(t), "exactly one run")
	})
}

// Without a limit there is no admission lock, so a duplicate can arrive while
// the first request is between reservation and create.
func TestAdmissionDuplicateWhileInFlight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		ta.setLimit(t, 0)
		var dup AdmissionResult
		ta.hook.on(admScript(createRunScript), 1, func(context.Context) error {
			dup = ta.start("k", "{}")
			return nil
		})

		first := ta.start("k", "{}")

		require.Equal(t, http.StatusConflict, dup.Status)
		require.ErrorIs(t, dup.Err, ErrIdempotencyKeyInFlight)
		require.Equal(t, http.StatusOK, first.Status, "the duplicate left the first request's reservation alone")
		again := ta.start("k", "{}")
		require.Equal(t, http.StatusOK, again.Status)
		require.Equal(t, first.RunID, again.RunID)
		require.Len(t, ta.active(t), 1)
	})
}

// The create script counts again, so runs admitted without the lock (the limit
// was raised from "none" meanwhile) cannot push the org over its limit.
func TestAdmissionCreateScriptHoldsTheLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		ta.setLimit(t, 1)
		ta.hook.on(admScript(createRunScript), 1, func(ctx context.Context) error {
			return env.rdb.SAdd(ctx, wfActiveRunsKey(admOrg), newRunID(rand.NewPCG(9, 9))).Err()
		})

		res := ta.start("k", "{}")

		require.Equal(t, http.StatusTooManyRequests, res.Status)
		require.Len(t, ta.active(t), 1)
		require.Empty(t, ta.reservation(t, "k"))
	})
}

func TestAdmissionSweepStaleReservations(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		ta.crashAfterReserve(t, "stale", "{}")
		// A completed run whose index entry was left behind: its key must survive.
		withRun := ta.mustStart(t, "with-run", "{}")
		require.NoError(t, env.rdb.ZAdd(ctx, wfReservationsKey, redis.Z{
			Score: float64(env.clock.Now().UnixMilli()), Member: "with-run"}).Err())
		// An index entry whose key is gone.
		require.NoError(t, env.rdb.ZAdd(ctx, wfReservationsKey, redis.Z{
			Score: float64(env.clock.Now().UnixMilli()), Member: "gone"}).Err())
		env.clock.Advance(ta.cfg.StaleReservationAfter)
		fresh := ta.crashAfterReserve(t, "fresh", "{}")

		removed, err := ta.SweepStaleReservations(ctx)

		require.NoError(t, err)
		require.Equal(t, 1, removed)
		require.Empty(t, ta.reservation(t, "stale"))
		require.False(t, ta.indexed(t, "stale"))
		require.Equal(t, fresh.value, ta.reservation(t, "fresh"))
		require.True(t, ta.indexed(t, "fresh"))
		require.Equal(t, withRun, ta.reservedRunID(t, "with-run"))
		require.False(t, ta.indexed(t, "with-run"), "the leftover index entry is dropped")
		require.False(t, ta.indexed(t, "gone"))

		removed, err = ta.SweepStaleReservations(ctx)
		require.NoError(t, err)
		require.Zero(t, removed, "a second sweep finds nothing")

		env.clock.Advance(ta.cfg.StaleReservationAfter)
		removed, err = ta.SweepStaleReservations(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, removed, "the fresh one, once stale")
	})
}

// The sweeper must not delete a reservation that changed after it read it.
func TestAdmissionSweepSparesAReservationChangedMeanwhile(t *testing.T) {
	t.Run("taken over by a retry", func(t *testing.T) {
		forEachBackend(t, func(t *testing.T, env *testEnv) {
			ta := newTestAdmission(t, env)
			ta.crashAfterReserve(t, "k", "{}")
			env.clock.Advance(ta.cfg.StaleReservationAfter)
			var taken AdmissionResult
			ta.hook.on(admScript(sweepRunKeyScript), 1, func(context.Context) error {
				taken = ta.start("k", "{}")
				return nil
			})

			removed, err := ta.SweepStaleReservations(context.Background())

			require.NoError(t, err)
			require.Zero(t, removed)
			require.Equal(t, http.StatusOK, taken.Status)
			require.Equal(t, taken.RunID, ta.reservedRunID(t, "k"))
		})
	})
	t.Run("value replaced, index entry untouched", func(t *testing.T) {
		forEachBackend(t, func(t *testing.T, env *testEnv) {
			ta := newTestAdmission(t, env)
			ta.crashAfterReserve(t, "k", "{}")
			env.clock.Advance(ta.cfg.StaleReservationAfter)
			replaced := reservationValue(newRunID(ta.rand), payloadFingerprint([]byte("{}")))
			ta.hook.on(admScript(sweepRunKeyScript), 1, func(ctx context.Context) error {
				return env.rdb.Set(ctx, wfIdempotencyKey("k"), replaced, 0).Err()
			})

			removed, err := ta.SweepStaleReservations(context.Background())

			require.NoError(t, err)
			require.Zero(t, removed)
			require.Equal(t, replaced, ta.reservation(t, "k"))
		})
	})
}

func TestAdmissionCompleteRun(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		ta.setLimit(t, 1)
		id := ta.mustStart(t, "", "{}")

		require.ErrorIs(t, ta.CompleteRun(ctx, admOrg, id, RunRunning), ErrInvalidRunRequest)
		require.ErrorIs(t, ta.CompleteRun(ctx, "globex", id, RunSucceeded), ErrRunNotFound, "another org's run")
		require.ErrorIs(t, ta.CompleteRun(ctx, admOrg, newRunID(rand.NewPCG(7, 7)), RunSucceeded), ErrRunNotFound)
		require.ErrorIs(t, ta.CompleteRun(ctx, admOrg, "reservations", RunSucceeded), ErrRunNotFound)
		require.Equal(t, []string{id}, ta.active(t))

		env.clock.Advance(time.Second)
		require.NoError(t, ta.CompleteRun(ctx, admOrg, id, RunFailed))
		require.NoError(t, ta.CompleteRun(ctx, admOrg, id, RunFailed), "idempotent")
		require.ErrorIs(t, ta.CompleteRun(ctx, admOrg, id, RunSucceeded), ErrRunFinished)

		run := ta.run(t, id)
		require.Equal(t, "FAILED", run["status"], "a final status never changes")
		require.Equal(t, fmt.Sprint(env.clock.Now().UnixMilli()), run["completed_at"])
		require.Empty(t, ta.active(t))
		ta.mustStart(t, "", "{}")
	})
}

func TestAdmissionRunDoubleCompleteHealsALeakedSlot(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		id := ta.mustStart(t, "", "{}")
		require.NoError(t, ta.CompleteRun(ctx, admOrg, id, RunCancelled))
		// As if a replica re-added it from a stale view.
		require.NoError(t, env.rdb.SAdd(ctx, wfActiveRunsKey(admOrg), id).Err())
		require.NoError(t, ta.CompleteRun(ctx, admOrg, id, RunCancelled))
		require.Empty(t, ta.active(t))
	})
}

func TestAdmissionRegisterWorkflow(t *testing.T) {
	ctx := context.Background()
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		require.NoError(t, ta.RegisterWorkflow(ctx, admOrg, admWF), "again, same org")
		require.ErrorIs(t, ta.RegisterWorkflow(ctx, "globex", admWF), ErrWorkflowOrgConflict)
		owner, err := env.rdb.HGet(ctx, wfDefKey(admWF), "org").Result()
		require.NoError(t, err)
		require.Equal(t, admOrg, owner)
		require.ErrorIs(t, ta.RegisterWorkflow(ctx, "", "x"), ErrInvalidRunRequest)
		require.ErrorIs(t, ta.SetOrgRunLimit(ctx, "", 1), ErrInvalidRunRequest)
	})
}

func TestNewAdmissionConfig(t *testing.T) {
	env := newMiniredisEnv(t)
	for _, tc := range []struct {
		name   string
		mutate func(*AdmissionConfig)
	}{
		{"no redis", func(c *AdmissionConfig) { c.Redis = nil }},
		{"no clock", func(c *AdmissionConfig) { c.Clock = nil }},
		{"no random", func(c *AdmissionConfig) { c.Random = nil }},
		{"negative wait", func(c *AdmissionConfig) { c.AdmissionLockWait = -time.Second }},
	} {
		cfg := AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand}
		tc.mutate(&cfg)
		_, err := NewAdmission(cfg)
		require.Error(t, err, tc.name)
	}

	a, err := NewAdmission(AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand})
	require.NoError(t, err)
	require.Equal(t, 10, a.cfg.DefaultOrgRunLimit)
	require.Equal(t, 10*time.Second, a.cfg.AdmissionLockTTL)
	require.Equal(t, 10*time.Millisecond, a.cfg.AdmissionLockRetry)
	require.Equal(t, 2*time.Second, a.cfg.AdmissionLockWait)
	require.Equal(t, 20*time.Second, a.cfg.StaleReservationAfter)
	require.NotNil(t, a.cfg.Registerer)
	require.NotNil(t, a.log)

	a, err = NewAdmission(AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand, AdmissionLockTTL: 3 * time.Second})
	require.NoError(t, err)
	require.Equal(t, 6*time.Second, a.cfg.StaleReservationAfter, "twice the lock TTL")

	// Two gateways on one registry share their counters instead of failing.
	reg := prometheus.NewRegistry()
	a1, err := NewAdmission(AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand, Registerer: reg})
	require.NoError(t, err)
	a2, err := NewAdmission(AdmissionConfig{Redis: env.rdb, Clock: env.clock, Random: env.rand, Registerer: reg})
	require.NoError(t, err)
	a1.StartRun(context.Background(), "", admWF, "", nil)
	a2.StartRun(context.Background(), "", admWF, "", nil)
	require.Equal(t, 2.0, testutil.ToFloat64(a1.metrics.admission.WithLabelValues("400")))
	n, err := testutil.GatherAndCount(reg, "gateway_run_admission_total")
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestAdmissionRunIDsAndReservationEncoding(t *testing.T) {
	a := newRunID(rand.NewPCG(1, 2))
	b := newRunID(rand.NewPCG(1, 2))
	c := newRunID(rand.NewPCG(3, 4))
	require.Equal(t, a, b, "same seed, same id")
	require.NotEqual(t, a, c)
	for _, id := range []string{a, c} {
		require.True(t, isRunID(id), id)
		require.Equal(t, byte('4'), id[14], "version 4")
		require.Contains(t, "89ab", string(id[19]), "RFC 4122 variant")
	}

	fp := payloadFingerprint([]byte("{}"))
	require.Equal(t, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", fp)
	runID, gotFP, ok := parseReservation(reservationValue(a, fp))
	require.True(t, ok)
	require.Equal(t, a, runID)
	require.Equal(t, fp, gotFP)
	for _, bad := range []string{"", a, a + "|", "|" + fp, a + "|" + fp[1:], "reservations|" + fp, strings.ToUpper(a) + "|" + fp} {
		_, _, ok := parseReservation(bad)
		require.False(t, ok, "%q", bad)
	}
}
