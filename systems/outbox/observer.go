package outbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox/dispatch"
)

// The dispatcher's store layout, as the observer reads it.
const (
	jobPrefix   = "outbox:job:"
	dlqPrefix   = "outbox:dlq:entry:"
	entryPrefix = "outbox:entry:"
)

type observer struct{}

func (observer) JobKey(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, jobPrefix)
	return id, ok && id != ""
}

// Touched: the job keys a write names, and for the relay's mark-sent the job
// its outbox entry belongs to (the script moves it DISPATCHED -> RUNNING).
func (o observer) Touched(v sut.View, cmd string, args []any) []string {
	var keys []string
	for _, arg := range args[1:] {
		if key, ok := arg.(string); ok {
			if _, job := o.JobKey(key); job {
				keys = append(keys, key)
			}
		}
	}
	if f := o.Command(cmd, args); f.Transition && f.JobID == "" {
		if id := v.Field(fmt.Sprint(args[3]), "job_id"); id != "" {
			keys = append(keys, jobPrefix+id)
		}
	}
	return keys
}

// jobHash is the job record's layout.
var jobHash = sut.HashJob{State: "state", Version: "version", Attempts: "attempts", Gen: "dispatch_gen",
	DispatchID: "dispatch_id", ResultPtr: "result_ptr", Cause: "last_error_code"}

func (observer) Job(v sut.View, key string) sut.JobFact { return jobHash.Read(v, key) }

func (observer) Message(subject string, data []byte) sut.MessageFact {
	if subject == dispatch.SubjectHeartbeat {
		return sut.MessageFact{Heartbeat: true}
	}
	fact, ok := sut.JobMessage(data)
	if !ok {
		return sut.MessageFact{}
	}
	fact.Dispatch = isDispatchSubject(subject)
	fact.Cancel = subject == dispatch.SubjectCancel
	return fact
}

// Command recognises the dispatcher's scripts by their key layout:
// transition (5 keys: job, events, dlq, dlq entry, pending; ARGV id, from,
// version, to), dispatch (4 keys: job, events, entry, pending; ARGV id, from:
// SCHEDULED then DISPATCHED in one write) and mark-sent (2 keys: entry,
// pending), which also moves the job DISPATCHED -> RUNNING.
func (observer) Command(cmd string, a []any) sut.CommandFact {
	if cmd != "evalsha" && cmd != "eval" || len(a) < 4 {
		return sut.CommandFact{}
	}
	keys, first := fmt.Sprint(a[2]), fmt.Sprint(a[3])
	id, isJob := strings.CutPrefix(first, jobPrefix)
	switch {
	case isJob && keys == "5" && len(a) > 11 && fmt.Sprint(a[8]) == id:
		return sut.CommandFact{JobID: id, Transition: true, From: fmt.Sprint(a[9]), To: fmt.Sprint(a[11])}
	case isJob && keys == "4" && len(a) > 9 && fmt.Sprint(a[7]) == id:
		return sut.CommandFact{JobID: id, Transition: true, From: fmt.Sprint(a[8]), To: string(dispatch.StateDispatched)}
	case strings.HasPrefix(first, entryPrefix) && keys == "2":
		return sut.CommandFact{Transition: true, From: string(dispatch.StateDispatched), To: string(dispatch.StateRunning)}
	}
	return sut.CommandFact{}
}

func (observer) DLQ(v sut.View) map[string]sut.DLQEntry {
	out := map[string]sut.DLQEntry{}
	for _, key := range v.Keys() {
		id, ok := strings.CutPrefix(key, dlqPrefix)
		if !ok {
			continue
		}
		s, _ := v.Get(key)
		var e dispatch.DLQEntry
		if json.Unmarshal([]byte(s), &e) == nil {
			out[id] = sut.DLQEntry{JobID: e.JobID, Reason: e.Reason, ReasonCode: string(e.ReasonCode),
				Status: string(e.Status), LastState: string(e.LastState), Attempts: e.Attempts,
				RetriesExhausted: e.RetriesExhausted}
		}
	}
	return out
}

// Locks: the outbox holds none; its relay leases are outbox entry scores.
func (observer) Locks(sut.View) []sut.Lock { return nil }

// Admission: the outbox has no run admission.
func (observer) Admission(sut.View, time.Time) sut.AdmissionState {
	return sut.AdmissionState{Keys: map[string]string{}, Reserved: map[string]time.Duration{},
		Runs: map[string]map[string]string{}}
}

func (observer) DueRuns(sut.View, string, time.Time, time.Duration) []string { return nil }
