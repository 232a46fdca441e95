package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// storeOp is one operation of the differential test, its arguments drawn:
// run applies it to a world and renders the reply.
type storeOp struct {
	desc string
	run  func(ctx context.Context, w *storeWorld) string
}

func (o storeOp) String() string { return o.desc }

// opGen draws operations over a few jobs, workers, orgs and keys, so that
// they meet: the same job locked, transitioned and timed out, the same
// idempotency key reserved, taken over and swept.
type opGen struct {
	rng *rand.Rand
	n   int // operations drawn so far
}

// job draws from four job ids that move on every 25 operations, so that new
// jobs keep arriving while older ones end.
func (g *opGen) job() string { return "j" + strconv.Itoa(g.n/25+g.rng.IntN(4)) }

var (
	diffTopics  = []string{"t1", "t2", "t3"} // t3 has no pool
	diffTenants = []string{"", "acme", "beta"}
	diffWorkers = []string{"w1", "w2"}
	diffOrgs    = []string{"o1", "o2"}
	diffFlows   = []string{"wf1", "wf2"}
	diffKeys    = []string{"", "k1", "k2", "k3"}
	diffResults = []string{ResultSucceeded, ResultCompleted, ResultFailed, ResultFailedFatal, ResultFailedRetryable, "WEIRD"}
	// lock TTLs short enough to run out during a sequence
	diffLockTTLs = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 600 * time.Millisecond}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *opGen) next() storeOp {
	g.n++
	r := g.rng
	kinds := []struct {
		weight int
		make   func() storeOp
	}{
		{10, g.submit}, {6, g.result}, {1, g.cancel}, {4, g.heartbeat}, {2, g.reconcile}, {2, g.replay},
		{6, g.transition}, {2, g.setFields}, {4, g.read},
		{2, g.lockAcquire}, {2, g.lockRenew}, {3, g.lockRelease},
		{3, g.register}, {1, g.runLimit}, {5, g.startRun}, {2, g.completeRun}, {1, g.sweep},
		{2, g.sleep}, {2, g.advance},
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	n := r.IntN(total)
	for _, k := range kinds {
		if n < k.weight {
			return k.make()
		}
		n -= k.weight
	}
	panic("unreachable")
}

func replyOf(err error) string {
	if err == nil {
		return "ok"
	}
	return "error: " + err.Error()
}

func (g *opGen) submit() storeOp {
	req := JobRequest{JobID: g.job(), Topic: pick(g.rng, diffTopics), Tenant: pick(g.rng, diffTenants)}
	switch g.rng.IntN(10) {
	case 0:
		req.Requires = []string{"GPU"}
	case 1:
		req.PreferredPool = "p2"
	case 2:
		req.Topic = "" // invalid: failed with a DLQ entry
	}
	failPublish := g.rng.IntN(4) == 0
	return storeOp{fmt.Sprintf("HandleJobRequest %+v (publish fails: %v)", req, failPublish),
		func(ctx context.Context, w *storeWorld) string {
			w.bus.failNext = failPublish
			before := len(w.bus.published)
			err := w.eng.HandleJobRequest(ctx, req)
			w.bus.failNext = false
			return fmt.Sprintf("%s; published %v", replyOf(err), w.bus.published[before:])
		}}
}

func (g *opGen) result() storeOp {
	res := JobResult{JobID: g.job(), WorkerID: pick(g.rng, diffWorkers), Status: pick(g.rng, diffResults),
		ResultPtr: "mem://" + strconv.Itoa(g.rng.IntN(3)), DispatchGen: g.rng.IntN(2)}
	return storeOp{fmt.Sprintf("HandleJobResult %+v", res), func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.eng.HandleJobResult(ctx, res))
	}}
}

func (g *opGen) cancel() storeOp {
	req := CancelRequest{JobID: g.job(), Reason: "client"}
	return storeOp{fmt.Sprintf("HandleCancel %+v", req), func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.eng.HandleCancel(ctx, req))
	}}
}

func (g *opGen) heartbeat() storeOp {
	hb := Heartbeat{WorkerID: pick(g.rng, diffWorkers), Pool: pick(g.rng, []string{"p1", "p2"}), Active: g.rng.IntN(3),
		MaxParallel: 4, CPU: pick(g.rng, []float64{10, 50, 50, 95})}
	return storeOp{fmt.Sprintf("HandleHeartbeat %+v", hb), func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.eng.HandleHeartbeat(ctx, hb))
	}}
}

func (g *opGen) reconcile() storeOp {
	return storeOp{"ReconcileOnce", func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.eng.ReconcileOnce(ctx))
	}}
}

func (g *opGen) replay() storeOp {
	return storeOp{"ReplayPendingOnce", func(ctx context.Context, w *storeWorld) string {
		before := len(w.bus.published)
		err := w.eng.ReplayPendingOnce(ctx)
		return fmt.Sprintf("%s; published %v", replyOf(err), w.bus.published[before:])
	}}
}

// transition drives the transition script directly, allowed or not, fenced
// by a held lock or not, with or without a DLQ entry. Half of them go from
// the state and version the store holds to a state the table allows, so that
// most of those apply.
func (g *opGen) transition() storeOp {
	states := append([]JobState{""}, AllStates...)
	t := Transition{JobID: g.job(), From: pick(g.rng, states), To: pick(g.rng, AllStates),
		Version: int64(g.rng.IntN(4)), Reason: "diff"}
	current, nthAllowed := g.rng.IntN(2) == 0, g.rng.IntN(len(AllStates))
	if g.rng.IntN(2) == 0 {
		t.Fields = []Field{{"worker", pick(g.rng, diffWorkers)}, {"last_error", "e" + strconv.Itoa(g.rng.IntN(3))}}
	}
	if g.rng.IntN(4) == 0 {
		t.DLQ = &DLQEntry{JobID: t.JobID, Status: t.To, Reason: "diff", ReasonCode: ReasonJobFailed}
	}
	slot := g.rng.IntN(len(storeWorld{}.held) + 1) // the last: no fence
	from := fmt.Sprintf("%q version %d", t.From, t.Version)
	if current {
		from = fmt.Sprintf("the current state and version to allowed state #%d, else", nthAllowed)
	}
	return storeOp{fmt.Sprintf("Transition %s from %s to %s fence slot %d fields %v dlq %v", t.JobID, from, t.To,
		slot, t.Fields, t.DLQ != nil), func(ctx context.Context, w *storeWorld) string {
		t := t
		if slot < len(w.held) {
			t.Fence = w.held[slot]
		}
		if current {
			if j, err := w.jobs.Get(ctx, t.JobID); err == nil {
				t.From, t.Version = j.State, j.Version
			} else {
				t.From, t.Version = "", 0
			}
			if allowed := allowedTransitions[t.From]; len(allowed) > 0 {
				t.To = allowed[nthAllowed%len(allowed)]
			}
		}
		res, err := w.jobs.Transition(ctx, t)
		return fmt.Sprintf("%+v %s", res, replyOf(err))
	}}
}

func (g *opGen) setFields() storeOp {
	job, from := g.job(), pick(g.rng, AllStates)
	slot := g.rng.IntN(len(storeWorld{}.held) + 1)
	fields := []Field{{"last_error_code", "store_error"}, {"pick_fail_since", strconv.Itoa(g.rng.IntN(1000))}}
	return storeOp{fmt.Sprintf("SetFields %s from %s fence slot %d %v", job, from, slot, fields),
		func(ctx context.Context, w *storeWorld) string {
			var fence *heldLock
			if slot < len(w.held) {
				fence = w.held[slot]
			}
			return replyOf(w.jobs.SetFields(ctx, job, from, fence, fields))
		}}
}

// read is one of the engine's reads: a job, its state, events and DLQ entry,
// an index scan, a tenant count, a worker's dispatch check.
func (g *opGen) read() storeOp {
	job := g.job()
	switch g.rng.IntN(7) {
	case 0:
		return readOp("Get "+job, func(ctx context.Context, w *storeWorld) (*Job, error) { return w.jobs.Get(ctx, job) })
	case 1:
		return readOp("GetState "+job, func(ctx context.Context, w *storeWorld) (JobState, error) {
			return w.jobs.GetState(ctx, job)
		})
	case 2:
		return readOp("Events "+job, func(ctx context.Context, w *storeWorld) ([]string, error) { return w.jobs.Events(ctx, job) })
	case 3:
		return readOp("DLQEntry "+job, func(ctx context.Context, w *storeWorld) (*DLQEntry, error) {
			return w.jobs.DLQEntry(ctx, job)
		})
	case 4:
		st, back, limit := pick(g.rng, AllStates), time.Duration(g.rng.IntN(120))*time.Second, int64(1+g.rng.IntN(3))
		return readOp(fmt.Sprintf("StaleJobs %s older than %s limit %d", st, back, limit),
			func(ctx context.Context, w *storeWorld) ([]string, error) {
				return w.jobs.StaleJobs(ctx, st, w.clock.Now().Add(-back), limit)
			})
	case 5:
		tenant := pick(g.rng, diffTenants)
		return readOp("TenantActive "+tenant, func(ctx context.Context, w *storeWorld) (int64, error) {
			return w.jobs.TenantActive(ctx, tenant)
		})
	}
	p := JobPacket{JobID: job, DispatchGen: g.rng.IntN(2)}
	return readOp(fmt.Sprintf("DispatchCurrent %s gen %d", job, p.DispatchGen),
		func(ctx context.Context, w *storeWorld) (bool, error) { return DispatchCurrent(ctx, w.rdb, p) })
}

// readOp is a read whose reply is the value read and the error.
func readOp[T any](desc string, read func(context.Context, *storeWorld) (T, error)) storeOp {
	return storeOp{desc, func(ctx context.Context, w *storeWorld) string {
		v, err := read(ctx, w)
		return fmt.Sprintf("%+v %s", v, replyOf(err))
	}}
}

// lockKeys are the keys the lock operations take: jobs' locks, which the
// handlers meet, and an org's admission lock.
func (g *opGen) lockKey() string {
	if g.rng.IntN(4) == 0 {
		return wfAdmissionLockKey(pick(g.rng, diffOrgs))
	}
	return jobLockKey(g.job())
}

func (g *opGen) lockAcquire() storeOp {
	slot, key, ttl := g.rng.IntN(len(storeWorld{}.held)), g.lockKey(), pick(g.rng, diffLockTTLs)
	return storeOp{fmt.Sprintf("lock acquire %s ttl %s into slot %d", key, ttl, slot),
		func(ctx context.Context, w *storeWorld) string {
			h, err := w.locks.acquire(ctx, key, lockSpec{TTL: ttl, Poll: 25 * time.Millisecond, Wait: 100 * time.Millisecond})
			if err == nil {
				w.held[slot] = h
			}
			return replyOf(err)
		}}
}

func (g *opGen) lockRenew() storeOp {
	slot, ttl := g.rng.IntN(len(storeWorld{}.held)), pick(g.rng, diffLockTTLs)
	return storeOp{fmt.Sprintf("lock renew slot %d ttl %s", slot, ttl), func(ctx context.Context, w *storeWorld) string {
		if w.held[slot] == nil {
			return "empty slot"
		}
		held, err := w.locks.renew(ctx, w.held[slot], ttl)
		return fmt.Sprintf("%v %s", held, replyOf(err))
	}}
}

func (g *opGen) lockRelease() storeOp {
	slot := g.rng.IntN(len(storeWorld{}.held))
	return storeOp{fmt.Sprintf("lock release slot %d", slot), func(ctx context.Context, w *storeWorld) string {
		if w.held[slot] == nil {
			return "empty slot"
		}
		err := w.locks.release(ctx, w.held[slot])
		w.held[slot] = nil
		return replyOf(err)
	}}
}

func (g *opGen) register() storeOp {
	org, flow := pick(g.rng, diffOrgs), pick(g.rng, diffFlows)
	return storeOp{fmt.Sprintf("RegisterWorkflow %s %s", org, flow), func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.admit.RegisterWorkflow(ctx, org, flow))
	}}
}

func (g *opGen) runLimit() storeOp {
	org, n := pick(g.rng, diffOrgs), g.rng.IntN(4)-1
	return storeOp{fmt.Sprintf("SetOrgRunLimit %s %d", org, n), func(ctx context.Context, w *storeWorld) string {
		return replyOf(w.admit.SetOrgRunLimit(ctx, org, n))
	}}
}

func (g *opGen) startRun() storeOp {
	org, flow, key := pick(g.rng, diffOrgs), pick(g.rng, diffFlows), pick(g.rng, diffKeys)
	payload := []byte(pick(g.rng, []string{`{}`, `{"a":1}`}))
	return storeOp{fmt.Sprintf("StartRun %s %s key %q payload %s", org, flow, key, payload),
		func(ctx context.Context, w *storeWorld) string {
			res := w.admit.StartRun(ctx, org, flow, key, payload)
			if res.RunID != "" && !slices.Contains(w.runs, res.RunID) {
				w.runs = append(w.runs, res.RunID)
			}
			return fmt.Sprintf("%d %s %q %s", res.Status, res.RunID, res.Message, replyOf(res.Err))
		}}
}

func (g *opGen) completeRun() storeOp {
	org, nth := pick(g.rng, diffOrgs), g.rng.IntN(4)
	status := pick(g.rng, []RunStatus{RunSucceeded, RunFailed, RunCancelled})
	return storeOp{fmt.Sprintf("CompleteRun %s run #%d %s", org, nth, status), func(ctx context.Context, w *storeWorld) string {
		if nth >= len(w.runs) {
			return "no such run"
		}
		return replyOf(w.admit.CompleteRun(ctx, org, w.runs[nth], status))
	}}
}

func (g *opGen) sweep() storeOp {
	return storeOp{"SweepStaleReservations", func(ctx context.Context, w *storeWorld) string {
		n, err := w.admit.SweepStaleReservations(ctx)
		return fmt.Sprintf("%d %s", n, replyOf(err))
	}}
}

// sleep lets wall time pass, for the keys' TTLs.
func (g *opGen) sleep() storeOp {
	d := pick(g.rng, []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond})
	return storeOp{fmt.Sprintf("sleep %s", d), func(_ context.Context, w *storeWorld) string {
		if w.wallClock {
			time.Sleep(d)
		}
		return "ok"
	}}
}

// advance moves the engine's clock: timeouts, stale reservations and the
// no-pool-mapping grace come due.
func (g *opGen) advance() storeOp {
	d := pick(g.rng, []time.Duration{2 * time.Second, 10 * time.Second, 40 * time.Second, 70 * time.Second, 400 * time.Second})
	return storeOp{fmt.Sprintf("advance the engine's clock %s", d), func(_ context.Context, w *storeWorld) string {
		_ = w.clock.Sleep(context.Background(), d)
		return "ok"
	}}
}

// keyState is a key as both stores are compared on: its type and value,
// and its TTL (-1: none), read at the same instant on both (timeline).
type keyState struct {
	value string
	ttl   time.Duration
}

// keyspace reads every key of a store. A key that expires while it is read
// is left out.
func keyspace(ctx context.Context, rdb *redis.Client) (map[string]keyState, error) {
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		return nil, fmt.Errorf("keyspace: %w", err)
	}
	sort.Strings(keys)
	pipe := rdb.Pipeline()
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		types[i] = pipe.Type(ctx, k)
		ttls[i] = pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && len(keys) > 0 {
		return nil, fmt.Errorf("keyspace: %w", err)
	}
	values := make([]func() (string, error), len(keys))
	for i, k := range keys {
		if values[i], err = readValue(ctx, pipe, types[i].Val(), k); err != nil {
			return nil, err
		}
	}
	_, _ = pipe.Exec(ctx) // each read's error is its own
	out := make(map[string]keyState, len(keys))
	for i, k := range keys {
		v, err := values[i]()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("keyspace: read %s: %w", k, err)
		}
		out[k] = keyState{value: types[i].Val() + " " + v, ttl: ttls[i].Val()}
	}
	return out, nil
}

// readValue queues the read of a key of type typ on pipe; the function it
// returns renders the value once the pipe ran.
func readValue(ctx context.Context, pipe redis.Pipeliner, typ, key string) (func() (string, error), error) {
	render := func(v any, err error) (string, error) { return fmt.Sprintf("%q", v), err }
	switch typ {
	case "string":
		c := pipe.Get(ctx, key)
		return func() (string, error) { return render(c.Result()) }, nil
	case "hash":
		c := pipe.HGetAll(ctx, key)
		return func() (string, error) {
			fields := make([]string, 0, len(c.Val()))
			for f, x := range c.Val() {
				fields = append(fields, f+"="+x)
			}
			sort.Strings(fields)
			return render(fields, c.Err())
		}, nil
	case "list":
		c := pipe.LRange(ctx, key, 0, -1)
		return func() (string, error) { return render(c.Result()) }, nil
	case "set":
		c := pipe.SMembers(ctx, key)
		return func() (string, error) { return render(sorted(c.Val()), c.Err()) }, nil
	case "zset":
		c := pipe.ZRangeWithScores(ctx, key, 0, -1)
		return func() (string, error) {
			// Scores written out whole: a time stamped as a score reads as
			// the number it is, not a float's shortest form.
			members := make([]string, 0, len(c.Val()))
			for _, z := range c.Val() {
				members = append(members, fmt.Sprint(z.Member)+"="+strconv.FormatFloat(z.Score, 'f', -1, 64))
			}
			return render(members, c.Err())
		}, nil
	case "none":
		// expired between the listing and the read
		return func() (string, error) { return "", redis.Nil }, nil
	}
	return nil, fmt.Errorf("keyspace: %s is a %s, which the engine never writes", key, typ)
}

func sorted(xs []string) []string {
	sort.Strings(xs)
	return xs
}

// ttlTolerance is how far apart one key's TTLs may be beyond the slowest
// round trip of the operation and its read: the simulated store takes the
// middle of redis-server's round trips for the moments it set and read them,
// which a stalled server (the machine is shared) misses by up to half a
// round trip each.
const ttlTolerance = 10 * time.Millisecond

// diffKeyspace lists the keys whose presence, type, value or TTL (to within
// tolerance) differ.
// A stamp written by any earlier operation is compared again after every
// later one: stampTolerance is the widest tolerance any operation so far
// had, ttlTolerance the current one's (TTLs are realigned after each).
func diffKeyspace(sim, real map[string]keyState, tolerance, stampTolerance time.Duration) []string {
	var out []string
	for k, s := range sim {
		r, ok := real[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: only in the simulated store: %s ttl %s", k, s.value, s.ttl))
		case !sameStamps(s.value, r.value, stampTolerance):
			out = append(out, fmt.Sprintf("%s: simulated %s, redis %s", k, s.value, r.value))
		case (s.ttl < 0) != (r.ttl < 0) || (s.ttl-r.ttl).Abs() > tolerance:
			out = append(out, fmt.Sprintf("%s: ttl simulated %s, redis %s", k, s.ttl, r.ttl))
		}
	}
	for k, r := range real {
		if _, ok := sim[k]; !ok {
			out = append(out, fmt.Sprintf("%s: only in redis: %s ttl %s", k, r.value, r.ttl))
		}
	}
	sort.Strings(out)
	return out
}

// expiryTimes are when the keys with a TTL expire, from now.
func expiryTimes(keys map[string]keyState) []time.Time {
	now := time.Now()
	var out []time.Time
	for _, k := range keys {
		if k.ttl > 0 {
			out = append(out, now.Add(k.ttl))
		}
	}
	return out
}

// stampDigits is how many digits a millisecond time of this century has
// (in a value, or in a score's mantissa).
const stampDigits = 12

// sameStamps reports whether two renderings agree but for the times each
// store stamped on its own clock (its TIME, in milliseconds): those may
// differ by the tolerance, as TTLs may, since the simulated store's clock
// is redis-server's only to within a round trip. Every other character,
// and every shorter number, must be the same.
func sameStamps(a, b string, tolerance time.Duration) bool {
	if a == b {
		return true
	}
	a, b = timesAsMillis(a), timesAsMillis(b)
	for a != "" && b != "" {
		na, ra := leadingDigits(a)
		nb, rb := leadingDigits(b)
		switch {
		case na == "" && nb == "":
			if a[0] != b[0] {
				return false
			}
			a, b = a[1:], b[1:]
			continue
		case na == nb:
		case len(na) >= stampDigits && len(nb) == len(na):
			x, _ := strconv.ParseInt(na, 10, 64)
			y, _ := strconv.ParseInt(nb, 10, 64)
			if time.Duration(max(x-y, y-x))*time.Millisecond > tolerance {
				return false
			}
		default:
			return false
		}
		a, b = ra, rb
	}
	return a == b
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// renderedTime is a time.Time as a reply renders it (%v of the job).
var renderedTime = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC`)

// timesAsMillis writes every rendered time in s as its Unix milliseconds,
// so a reply's times compare as the stamps they are.
func timesAsMillis(s string) string {
	return renderedTime.ReplaceAllStringFunc(s, func(t string) string {
		at, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", t)
		if err != nil || at.Year() < 2000 {
			return t
		}
		return strconv.FormatInt(at.UnixMilli(), 10)
	})
}

// Stamps from the two stores' clocks agree within the tolerance, rendered
// as numbers or as times; nothing else may differ.
func TestSameStampsAllowsOnlyTheClocksGap(t *testing.T) {
	tol := 5 * time.Millisecond
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"updated_at=1795624998257", "updated_at=1795624998258", true},
		{"updated_at=1795624998257", "updated_at=1795624998290", false},
		{"CreatedAt:2026-11-25 16:54:00.146 +0000 UTC}", "CreatedAt:2026-11-25 16:54:00.145 +0000 UTC}", true},
		{"CreatedAt:2026-11-25 16:54:00.146 +0000 UTC}", "CreatedAt:2026-11-25 16:54:01.146 +0000 UTC}", false},
		{"attempts=1", "attempts=2", false},
		{"state=RUNNING", "state=FAILED", false},
	} {
		require.Equal(t, c.same, sameStamps(c.a, c.b, tol), "%s vs %s", c.a, c.b)
	}
}
