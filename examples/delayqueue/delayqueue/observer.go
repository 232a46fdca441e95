package delayqueue

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/examples/delayqueue/queue"
	"github.com/dispatchsim/dispatchsim/sut"
)

type observer struct{}

func (observer) JobKey(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, queue.JobPrefix)
	return id, ok && id != ""
}

// script splits a script call into its keys and arguments (ARGV[1], the
// script's name, first); ok is false for any other command.
func script(cmd string, a []any) (keys, argv []string, ok bool) {
	if cmd != "evalsha" && cmd != "eval" || len(a) < 3 {
		return nil, nil, false
	}
	n, err := strconv.Atoi(fmt.Sprint(a[2]))
	if err != nil || len(a) < 4+n {
		return nil, nil, false
	}
	for i, v := range a[3:] {
		if i < n {
			keys = append(keys, fmt.Sprint(v))
		} else {
			argv = append(argv, fmt.Sprint(v))
		}
	}
	return keys, argv, true
}

// Touched: the job keys a write names; the claim reaches its jobs through
// the ready set and leaves each one it took in the dispatched set.
func (o observer) Touched(v sut.View, cmd string, args []any) []string {
	var out []string
	for _, a := range args[1:] {
		if key, ok := a.(string); ok {
			if _, job := o.JobKey(key); job {
				out = append(out, key)
			}
		}
	}
	if _, argv, ok := script(cmd, args); ok && argv[0] == "claim" {
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

// Command says which transition each script makes, by its name.
func (observer) Command(cmd string, a []any) sut.CommandFact {
	_, argv, ok := script(cmd, a)
	if !ok || len(argv) < 2 {
		return sut.CommandFact{}
	}
	t := func(from, to string) sut.CommandFact {
		return sut.CommandFact{JobID: argv[1], Transition: true, From: from, To: to}
	}
	switch argv[0] {
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
		if len(argv) > 3 {
			return t(queue.Dispatched, resultState[argv[3]])
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
