package cordum

import (
	"encoding/json"
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
	jobKeyPrefix      = "job:"       // a job's record, a hash
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

func (observer) Scripts() map[string]string { return engine.ScriptHashes() }

// Touched: the engine's scripts name every job key they write.
func (o observer) Touched(_ sut.View, c sut.StoreCommand) []string {
	return c.Named(o.isJobKey)
}

func (o observer) isJobKey(key string) bool { _, ok := o.JobKey(key); return ok }

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
// (take), and the renew and release scripts (KEYS key, ARGV token [ms]).
func lockCommand(c sut.StoreCommand) (sut.CommandFact, bool) {
	var op sut.LockOp
	switch {
	case c.Name == "set" && len(c.Args) >= 1:
		op = sut.LockTake
	case c.IsScript(engine.ScriptLockRenew):
		op = sut.LockRenew
	case c.IsScript(engine.ScriptLockRelease):
		op = sut.LockRelease
	default:
		return sut.CommandFact{}, false
	}
	key := c.Key(0)
	id, ok := strings.CutPrefix(key, jobLockPrefix)
	if !ok || id == "" {
		return sut.CommandFact{}, false
	}
	return sut.CommandFact{JobID: id, LockKey: key, Token: c.Arg(0), LockOp: op}, true
}

// Command recognises the engine's writes by their scripts' names. The
// transition script: KEYS job:<id> and three more, ARGV <id> <from> <version>
// <to> <now> <token> ... The admission scripts on an idempotency key name it
// first; those that create or finish a run name the run, then the org's
// active runs.
func (observer) Command(c sut.StoreCommand) sut.CommandFact {
	if f, ok := lockCommand(c); ok {
		return f
	}
	first := c.Key(0)
	if c.Name == "zrangebyscore" {
		// The reconciler's and the replayer's scans of a state's index.
		if state, ok := strings.CutPrefix(first, jobIndexPrefix); ok {
			return sut.CommandFact{Scan: state}
		}
	}
	if strings.HasPrefix(first, admissionPrefix) {
		return admissionCommand(c)
	}
	if !c.IsScript(engine.ScriptTransition) {
		return sut.CommandFact{}
	}
	id, ok := strings.CutPrefix(first, "job:")
	if !ok || id == "" || c.Arg(0) != id {
		return sut.CommandFact{}
	}
	return sut.CommandFact{JobID: id, Transition: true, From: c.Arg(1), To: c.Arg(3), Token: c.Arg(5)}
}

// admissionCommand is a command on run admission's state: which idempotency
// key it may change and how, and whose runs it creates or finishes.
func admissionCommand(c sut.StoreCommand) sut.CommandFact {
	f := sut.CommandFact{Admission: true}
	runKey, onKey := strings.CutPrefix(c.Key(0), idempotencyPrefix)
	switch {
	case c.Script == "":
		if onKey && (c.Name == "set" || c.Name == "del") {
			f.RunKey = runKey
		}
	case c.Script == engine.ScriptRunCreate || c.Script == engine.ScriptRunComplete:
		if org, ok := strings.CutPrefix(c.Key(1), activeRunsPrefix); ok && strings.HasPrefix(c.Key(0), runPrefix) {
			f.RunsOf = org
		}
	case !onKey:
	case c.Script == engine.ScriptRunKeyReserve || c.Script == engine.ScriptRunKeyTakeOver:
		f.RunKey, f.Reserve = runKey, true
	case c.Script == engine.ScriptRunKeyRelease:
		f.RunKey, f.Release = runKey, true
	case c.Script == engine.ScriptRunKeySweep:
		f.RunKey, f.Sweep = runKey, true
	}
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

var _ sut.KeyspaceInvariants = observer{}

// Inconsistencies holds the engine's keys to what its transition script
// writes in one step: a job in state S is in job:index:S and in no other
// state's index, and every index member is a job in that state.
func (o observer) Inconsistencies(v sut.View) []string {
	var out []string
	indexed := map[string]string{} // job -> the index it is in
	for _, key := range v.Keys() {
		st, ok := strings.CutPrefix(key, jobIndexPrefix)
		if !ok {
			continue
		}
		for id := range v.ZScores(key) {
			if other, dup := indexed[id]; dup {
				out = append(out, "job "+id+" is in the index of "+other+" and of "+st)
			}
			indexed[id] = st
			if got := v.Field(jobKeyPrefix+id, "state"); got != st {
				out = append(out, "job "+id+" is in "+key+" but its record says "+strconv.Quote(got))
			}
		}
	}
	for _, key := range v.Keys() {
		id, ok := o.JobKey(key)
		if !ok {
			continue
		}
		if st := v.Field(key, "state"); st != "" && indexed[id] == "" {
			out = append(out, "job "+id+" is "+st+" but in no state index")
		}
	}
	sort.Strings(out)
	return out
}
