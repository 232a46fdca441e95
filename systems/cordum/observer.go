package cordum

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The engine's store layout, as the observer reads it.
const (
	dlqPrefix         = "dlq:entry:"
	lockPrefix        = "cordum:" // job locks and per-org admission locks
	jobLockPrefix     = "cordum:scheduler:job:"
	jobIndexPrefix    = "job:index:" // a sorted set per state, scored by update time
	idempotencyPrefix = "wf:run:idempotency:"
	reservationsKey   = "wf:run:reservations"
	runPrefix         = "wf:run:"
	activeRunsPrefix  = "wf:runs:active:"
	admissionPrefix   = "wf:"
	workflowPrefix    = "wf:def:"
)

type observer struct{}

func (observer) JobKey(key string) (string, bool) { return engine.JobIDFromKey(key) }

// Touched: the engine's scripts name every job key they write.
func (o observer) Touched(_ sut.View, _ string, args []any) []string {
	var keys []string
	for _, arg := range args[1:] {
		if key, ok := arg.(string); ok {
			if _, job := o.JobKey(key); job {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

// jobHash is the job record's layout.
var jobHash = sut.HashJob{State: "state", Version: "version", Attempts: "attempts", Gen: "dispatch_gen",
	DispatchID: "dispatch_id", ResultPtr: "result_ptr", Cause: "last_error_code"}

func (observer) Job(v sut.View, key string) sut.JobFact { return jobHash.Read(v, key) }

func (observer) Message(subject string, data []byte) sut.MessageFact {
	if subject == engine.SubjectHeartbeat {
		return sut.MessageFact{Heartbeat: true}
	}
	fact, ok := sut.JobMessage(data)
	if !ok {
		return sut.MessageFact{}
	}
	fact.Dispatch = strings.HasPrefix(subject, "worker.")
	fact.Cancel = subject == engine.SubjectCancel
	return fact
}

// lockCommand recognises a command on a job's lock: SET key token PX ttl NX
// (take), and the renew and release scripts, EVALSHA sha 1 key token [ms].
func lockCommand(cmd string, a []any) (sut.CommandFact, bool) {
	keyAt := 1
	if cmd == "evalsha" || cmd == "eval" {
		if len(a) < 5 || fmt.Sprint(a[2]) != "1" {
			return sut.CommandFact{}, false
		}
		keyAt = 3
	} else if cmd != "set" || len(a) < 3 {
		return sut.CommandFact{}, false
	}
	key := fmt.Sprint(a[keyAt])
	id, ok := strings.CutPrefix(key, jobLockPrefix)
	if !ok || id == "" {
		return sut.CommandFact{}, false
	}
	op := sut.LockTake
	if keyAt == 3 {
		// The renewal script's ARGV is token and TTL, the release's the token.
		op = sut.LockRelease
		if len(a) > keyAt+2 {
			op = sut.LockRenew
		}
	}
	return sut.CommandFact{JobID: id, LockKey: key, Token: fmt.Sprint(a[keyAt+1]), LockOp: op}, true
}

// Command recognises the engine's scripts from their arguments. The
// transition script: EVALSHA sha 4 job:<id> k2 k3 k4 <id> <from> <version>
// <to> <now> <token> ... The admission scripts on an idempotency key name it
// first, then the reservations index: a reservation has ARGV value, key,
// now; its stale takeover a third key and ARGV old, new, key, now; the
// cleanup's compare-and-delete ARGV value, key; the sweeper's ARGV key,
// value (and the run's key third when the value names one).
func (observer) Command(cmd string, a []any) sut.CommandFact {
	if f, ok := lockCommand(cmd, a); ok {
		return f
	}
	if cmd == "zrangebyscore" && len(a) > 1 {
		// The reconciler's and the replayer's scans of a state's index.
		if state, ok := strings.CutPrefix(fmt.Sprint(a[1]), jobIndexPrefix); ok {
			return sut.CommandFact{Scan: state}
		}
	}
	if cmd != "evalsha" && cmd != "eval" || len(a) < 4 {
		if len(a) > 1 {
			if key, ok := a[1].(string); ok && strings.HasPrefix(key, admissionPrefix) {
				f := sut.CommandFact{Admission: true}
				if runKey, ok := strings.CutPrefix(key, idempotencyPrefix); ok && (cmd == "set" || cmd == "del") {
					f.RunKey = runKey
				}
				return f
			}
		}
		return sut.CommandFact{}
	}
	key := fmt.Sprint(a[3])
	if strings.HasPrefix(key, admissionPrefix) {
		f := admissionScript(key, a)
		// The run creation and completion scripts: KEYS wf:run:<id>,
		// wf:runs:active:<org>, ...
		if org, ok := strings.CutPrefix(fmt.Sprint(a[4]), activeRunsPrefix); ok && strings.HasPrefix(key, runPrefix) {
			f.RunsOf = org
		}
		return f
	}
	if len(a) < 11 || fmt.Sprint(a[2]) != "4" {
		return sut.CommandFact{}
	}
	id, ok := strings.CutPrefix(key, "job:")
	if !ok || id == "" || fmt.Sprint(a[7]) != id {
		return sut.CommandFact{}
	}
	f := sut.CommandFact{JobID: id, Transition: true, From: fmt.Sprint(a[8]), To: fmt.Sprint(a[10])}
	if len(a) > 12 {
		f.Token = fmt.Sprint(a[12])
	}
	return f
}

// admissionScript tells the admission scripts on an idempotency key apart
// by their key and argument counts and where the key's name sits in ARGV.
func admissionScript(first string, a []any) sut.CommandFact {
	f := sut.CommandFact{Admission: true}
	runKey, ok := strings.CutPrefix(first, idempotencyPrefix)
	if !ok || len(a) < 5 || fmt.Sprint(a[4]) != reservationsKey {
		return f
	}
	nkeys, err := strconv.Atoi(fmt.Sprint(a[2]))
	if err != nil || nkeys < 2 || len(a) < 3+nkeys {
		return f
	}
	argv := a[3+nkeys:]
	arg := func(i int) string { return fmt.Sprint(argv[i]) }
	switch {
	case nkeys == 2 && len(argv) == 3 && arg(1) == runKey, nkeys == 3 && len(argv) == 4 && arg(2) == runKey:
		f.Reserve = true
	case nkeys == 2 && len(argv) == 2 && arg(1) == runKey:
		f.Release = true
	case len(argv) == 2 && arg(0) == runKey:
		f.Sweep = true
	default:
		return f
	}
	f.RunKey = runKey
	return f
}

func (observer) DLQ(v sut.View) map[string]sut.DLQEntry {
	out := map[string]sut.DLQEntry{}
	for _, key := range v.Keys() {
		id, ok := strings.CutPrefix(key, dlqPrefix)
		if !ok {
			continue
		}
		s, _ := v.Get(key)
		var e engine.DLQEntry
		if json.Unmarshal([]byte(s), &e) == nil {
			out[id] = sut.DLQEntry{JobID: e.JobID, Reason: e.Reason, ReasonCode: string(e.ReasonCode),
				Status: string(e.Status), LastState: string(e.LastState), Attempts: e.Attempts,
				RetriesExhausted: e.RetriesExhausted}
		}
	}
	return out
}

func (o observer) Locks(v sut.View) []sut.Lock {
	var out []sut.Lock
	for _, key := range v.Keys() {
		if _, job := o.JobKey(key); job || !strings.HasPrefix(key, lockPrefix) {
			continue
		}
		if tok, ok := v.Get(key); ok {
			out = append(out, sut.Lock{Key: key, Token: tok, TTL: v.TTL(key)})
		}
	}
	return out
}

func (observer) Admission(v sut.View, epoch time.Time) sut.AdmissionState {
	st := sut.AdmissionState{Keys: map[string]string{}, Reserved: map[string]time.Duration{},
		Runs: map[string]map[string]string{}, Workflows: map[string]string{}}
	for _, key := range v.Keys() {
		switch {
		case strings.HasPrefix(key, workflowPrefix):
			if org := v.Field(key, "org"); org != "" {
				st.Workflows[strings.TrimPrefix(key, workflowPrefix)] = org
			}
		case strings.HasPrefix(key, idempotencyPrefix):
			if s, ok := v.Get(key); ok {
				st.Keys[strings.TrimPrefix(key, idempotencyPrefix)] = s
			}
		case key == reservationsKey:
			for m, score := range v.ZScores(key) {
				st.Reserved[m] = time.UnixMilli(int64(score)).Sub(epoch)
			}
		case strings.HasPrefix(key, runPrefix):
			if h, ok := v.Hash(key); ok {
				st.Runs[strings.TrimPrefix(key, runPrefix)] = h
			}
		}
	}
	return st
}

func (observer) DueRuns(v sut.View, org string, now time.Time, d time.Duration) []string {
	members := v.Members(activeRunsPrefix + org)
	sort.Strings(members)
	var due []string
	for _, runID := range members {
		h, _ := v.Hash(runPrefix + runID)
		ms, err := strconv.ParseInt(h["created_at"], 10, 64)
		if err == nil && now.Sub(time.UnixMilli(ms)) >= d {
			due = append(due, runID)
		}
	}
	return due
}
