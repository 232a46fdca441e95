package delayqueue

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/examples/delayqueue/queue"
	"github.com/dispatchsim/dispatchsim/sut"
)

// observer reads the queue's store; defect is the planted one, whose
// scripts it names.
type observer struct{ defect queue.Defect }

func (observer) JobKey(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, queue.JobPrefix)
	return id, ok && id != ""
}

func (o observer) isJobKey(key string) bool { _, ok := o.JobKey(key); return ok }

// Scripts names the queue's scripts, those of the system's planted defect.
func (o observer) Scripts() map[string]string { return queue.ScriptHashes(o.defect) }

// Touched: the job keys a write names; the claim reaches its jobs through
// the ready set and leaves each one it took in the dispatched set.
func (o observer) Touched(v sut.View, c sut.StoreCommand) []string {
	out := c.Named(o.isJobKey)
	if c.IsScript("claim") {
		ids := make([]string, 0, 16)
		for id := range v.ZScores(queue.DispatchedKey) {
			ids = append(ids, id)
		}
		sort.Strings(ids) // the store records the changes in this order
		for _, id := range ids {
			out = append(out, queue.JobPrefix+id)
		}
	}
	return out
}

var jobHash = sut.HashJob{State: "state", Version: "version", Attempts: "attempts", Gen: "gen",
	DispatchID: "dispatch_id", ResultPtr: "result_ptr", Cause: "error_code"}

func (observer) Job(v sut.View, key string) sut.JobFact { return jobHash.Read(v, key) }

func (observer) Message(subject string, data []byte) sut.MessageFact {
	if subject == queue.SubjectHeartbeat {
		return sut.MessageFact{Heartbeat: true}
	}
	fact, _ := sut.JobMessage(data)
	fact.Dispatch = strings.HasPrefix(subject, queue.WorkerPrefix)
	return fact
}

// resultState is where a result of that outcome takes its job.
var resultState = map[string]string{"succeeded": queue.Succeeded, "failed": queue.Failed, "failed_retryable": queue.Queued}

// Command says which transition each script makes, by its name. Every
// script's ARGV is its own name, then the job's id.
func (observer) Command(c sut.StoreCommand) sut.CommandFact {
	t := func(from, to string) sut.CommandFact {
		return sut.CommandFact{JobID: c.Arg(1), Transition: true, From: from, To: to}
	}
	switch c.Script {
	case "claim":
		return sut.CommandFact{Transition: true, From: queue.Queued, To: queue.Dispatched}
	case "submit":
		return t("", queue.Queued)
	case "cancel":
		return t("", queue.Cancelled)
	case "fail":
		return t(queue.Queued, queue.Failed)
	case "expire":
		return t(queue.Dispatched, queue.TimedOut)
	case "result":
		if to, ok := resultState[c.Arg(3)]; ok {
			return t(queue.Dispatched, to)
		}
	}
	return sut.CommandFact{}
}

func (observer) DLQ(v sut.View) map[string]sut.DLQEntry {
	out := map[string]sut.DLQEntry{}
	for _, key := range v.Keys() {
		id, ok := strings.CutPrefix(key, queue.DLQPrefix)
		if !ok {
			continue
		}
		f := func(name string) string { return v.Field(key, name) }
		attempts, _ := strconv.Atoi(f("attempts"))
		out[id] = sut.DLQEntry{JobID: f("job_id"), Reason: f("reason"), ReasonCode: f("reason_code"), Status: f("status"),
			LastState: f("last_state"), Attempts: attempts, RetriesExhausted: f("retries_exhausted") == "true"}
	}
	return out
}

// Locks: the queue takes none; its leases are scores in the dispatched set.
func (observer) Locks(sut.View) []sut.Lock { return nil }

// Admission: the queue has no run admission.
func (observer) Admission(sut.View, time.Time) sut.AdmissionState {
	return sut.AdmissionState{Keys: map[string]string{}, Reserved: map[string]time.Duration{},
		Runs: map[string]map[string]string{}}
}

func (observer) DueRuns(sut.View, string, time.Time, time.Duration) []string { return nil }
