package outbox

import (
	"encoding/json"
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

func (o observer) isJobKey(key string) bool { _, ok := o.JobKey(key); return ok }

func (observer) Scripts() map[string]string { return dispatch.ScriptHashes() }

// Touched: the job keys a write names, and for the relay's mark-sent the job
// its outbox entry belongs to (the script moves it DISPATCHED -> RUNNING).
func (o observer) Touched(v sut.View, c sut.StoreCommand) []string {
	keys := c.Named(o.isJobKey)
	if c.IsScript(dispatch.ScriptMarkSent) {
		if id := v.Field(c.Key(0), "job_id"); id != "" {
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

// Command recognises the dispatcher's scripts by name: transition (KEYS
// job, ...; ARGV id, from, version, to), dispatch (KEYS job, ...; ARGV id,
// from: SCHEDULED then DISPATCHED in one write) and mark-sent (KEYS entry,
// pending), which also moves the job DISPATCHED -> RUNNING.
func (observer) Command(c sut.StoreCommand) sut.CommandFact {
	id, isJob := strings.CutPrefix(c.Key(0), jobPrefix)
	switch {
	case c.IsScript(dispatch.ScriptTransition) && isJob && c.Arg(0) == id:
		return sut.CommandFact{JobID: id, Transition: true, From: c.Arg(1), To: c.Arg(3)}
	case c.IsScript(dispatch.ScriptDispatch) && isJob && c.Arg(0) == id:
		return sut.CommandFact{JobID: id, Transition: true, From: c.Arg(1), To: string(dispatch.StateDispatched)}
	case c.IsScript(dispatch.ScriptMarkSent):
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
