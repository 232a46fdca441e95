package streamqueue

import (
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/examples/streamqueue/streams"
	"github.com/dispatchsim/dispatchsim/sut"
)

// observer reads the dispatcher's store; defect is the planted one, whose
// scripts it names.
type observer struct{ defect Defect }

func (observer) JobKey(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, streams.JobPrefix)
	return id, ok && id != ""
}

func (o observer) isJobKey(key string) bool { _, ok := o.JobKey(key); return ok }

// Scripts names the dispatcher's scripts, those of the system's planted defect.
func (o observer) Scripts() map[string]string { return streams.ScriptHashes(o.defect) }

// Touched: the job keys a write names. The reap names its jobs only
// through the work entries it read (KEYS[1] the pool's stream), which stay
// in the stream until the reaper deletes them after it: the observer reads
// every entry's job, a lease's worth of them.
func (o observer) Touched(v sut.View, c sut.StoreCommand) []string {
	out := c.Named(o.isJobKey)
	if c.IsScript("reap") {
		if sv, ok := v.(sut.StreamView); ok {
			for _, e := range sv.Stream(c.Key(0)) {
				if id := e.Field("job"); id != "" {
					out = append(out, streams.JobPrefix+id)
				}
			}
		}
	}
	return out
}

var jobHash = sut.HashJob{State: "state", Version: "version", Attempts: "attempts", Gen: "gen",
	DispatchID: "dispatch_id", ResultPtr: "result_ptr", Cause: "error_code"}

func (observer) Job(v sut.View, key string) sut.JobFact { return jobHash.Read(v, key) }

// Message: nothing dispatches over the bus; results and heartbeats do go.
func (observer) Message(subject string, data []byte) sut.MessageFact {
	if subject == streams.SubjectHeartbeat {
		return sut.MessageFact{Heartbeat: true}
	}
	fact, _ := sut.JobMessage(data)
	return fact
}

// resultState is where a result of that outcome takes its job.
var resultState = map[string]string{"succeeded": streams.Succeeded, "failed": streams.Failed,
	"failed_retryable": streams.Queued}

// Command says which transition each script makes, by its name. Every
// script's ARGV is its own name, then the job's id, except the reap's,
// whose jobs only their work entries name.
func (observer) Command(c sut.StoreCommand) sut.CommandFact {
	t := func(from, to string) sut.CommandFact {
		return sut.CommandFact{JobID: c.Arg(1), Transition: true, From: from, To: to}
	}
	switch c.Script {
	case "submit":
		return t("", streams.Queued)
	case "cancel":
		return t("", streams.Cancelled)
	case "route":
		return t(streams.Queued, streams.Dispatched)
	case "reap":
		return sut.CommandFact{Transition: true, From: streams.Dispatched, To: streams.TimedOut}
	case "result":
		if to, ok := resultState[c.Arg(3)]; ok && to == streams.Succeeded {
			return t("", to) // from DISPATCHED, or QUEUED after its lease
		} else if ok {
			return t(streams.Dispatched, to)
		}
	}
	return sut.CommandFact{}
}

func (observer) DLQ(v sut.View) map[string]sut.DLQEntry {
	out := map[string]sut.DLQEntry{}
	for _, key := range v.Keys() {
		id, ok := strings.CutPrefix(key, streams.DLQPrefix)
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

// Locks: the dispatcher takes none; a work entry's pending state is its lease.
func (observer) Locks(sut.View) []sut.Lock { return nil }

// Admission: there is no run admission.
func (observer) Admission(sut.View, time.Time) sut.AdmissionState {
	return sut.AdmissionState{Keys: map[string]string{}, Reserved: map[string]time.Duration{},
		Runs: map[string]map[string]string{}}
}

func (observer) DueRuns(sut.View, string, time.Time, time.Duration) []string { return nil }
