package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sim/live"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

// liveRedis is the real server a live test runs on; under CI=true a missing
// one fails.
func liveRedis(t *testing.T) *redis.Options {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but REDIS_URL is not set: the live mode test needs a real redis-server")
		}
		t.Skip("REDIS_URL not set: no redis-server for a live run")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL %q: %v", url, err)
	}
	// A database of its own: the engine's store tests flush the one after
	// REDIS_URL's, and may run at the same time.
	opts.DB = (opts.DB + 2) % 16
	return opts
}

// TestLiveRun runs a small fault-free world for a few seconds of real time
// against redis-server and an embedded nats-server, with a replica paused
// and another killed and started, and holds it to the same checkers.
//
// The kill can land inside a handler (on a loaded machine handlers are slow,
// and it often does), and the bounds say what that costs. Killed holding a
// job's lock, the job waits for the lock to expire and the broker's ack wait;
// killed between the DISPATCHED write and the publish, the job is in the
// engine's blind window and ends TIMEOUT after the dispatch timeout and a
// reconciler tick. With the engine's 60s lock TTL and 300s dispatch timeout
// against a 15s heal bound, and every job held to SUCCEEDED, 2 of 3 runs
// failed at a load of 8 on 2 cores (a job still PENDING or DISPATCHED, or
// never stored, at the end). So the timeouts are short, the heal bound is
// the longest of those waits plus time to work, and a job the kill caught
// in the blind window may end TIMEOUT; every other job must succeed.
func TestLiveRun(t *testing.T) {
	opts := liveRedis(t)
	const (
		lockTTL, ackWait                   = 3 * time.Second, 3 * time.Second
		dispatchTimeout, reconcileInterval = 6 * time.Second, 2 * time.Second
		work                               = 10 * time.Second
	)
	sc := Scenario{
		Name: "live-small",
		World: World{
			Options:  sut.Options{LockTTL: lockTTL, DispatchTimeout: dispatchTimeout, ReconcileInterval: reconcileInterval},
			Workload: &sim.Workload{Jobs: 8, SubmitWindow: 2 * time.Second, StatusReads: 4},
			Workers:  &sim.WorkerProfile{JobDurationMin: 200 * time.Millisecond, JobDurationMax: time.Second},
			Events: []sim.Event{
				{At: 500 * time.Millisecond, Action: sim.EventPause, Replica: 1, For: time.Second},
				{At: time.Second, Action: sim.EventKill, Replica: 2},
				{At: 2 * time.Second, Action: sim.EventStart, Replica: 2},
			},
		},
	}
	nc := natsbustest.Connect(t)
	heal := max(lockTTL+ackWait, dispatchTimeout+2*reconcileInterval) + work
	o, err := sc.RunLive(7, LiveTarget{Redis: opts, NATS: nc, Flush: true, Duration: 3 * time.Second,
		Drain: time.Second, HealBound: heal, AckWait: ackWait})
	requireCleanLiveRun(t, o, err, 8)
	for id, job := range o.Run.Final {
		switch {
		case job.State == "SUCCEEDED":
		case job.State == "TIMEOUT" && caughtInBlindWindow(o.Run.History, id):
			t.Logf("job %s: the kill came between its DISPATCHED write and its publish; it ended TIMEOUT", id)
		default:
			keepLiveTrace(t, o)
			t.Fatalf("job %s ended %s; want SUCCEEDED, or TIMEOUT after the kill caught its dispatch unpublished", id, job.State)
		}
	}
	if len(o.Run.History.Publishes) == 0 || len(o.Run.History.Settles) == 0 {
		t.Fatalf("no publishes or settles recorded: %d, %d", len(o.Run.History.Publishes), len(o.Run.History.Settles))
	}
	t.Logf("live run: %d steps, %d publishes, %d settles in %s", o.Steps, len(o.Run.History.Publishes),
		len(o.Run.History.Settles), o.Wall.Round(time.Millisecond))
}

// caughtInBlindWindow reports whether a replica killed in the run wrote the
// job's last DISPATCHED before its kill, and no dispatch of the job reached
// the broker.
func caughtInBlindWindow(h *history.History, jobID string) bool {
	var dispatched *history.StateChange
	for i, s := range h.States {
		if s.JobID == jobID && s.To == "DISPATCHED" {
			dispatched = &h.States[i]
		}
	}
	if dispatched == nil {
		return false
	}
	for _, p := range h.Publishes {
		if p.JobID == jobID && p.Dispatch && p.Stored() {
			return false
		}
	}
	for _, f := range h.Faults {
		if f.Kind == "Event:kill" && strings.HasPrefix(dispatched.Actor, f.Actor+"/") && dispatched.Time <= f.Time {
			return true
		}
	}
	return false
}

// TestLiveRefusesFaults: a scenario that declares fault kinds cannot run live.
func TestLiveRefusesFaults(t *testing.T) {
	sc, ok := Lookup("dispatch-rollback")
	if !ok {
		t.Fatal("no dispatch-rollback scenario")
	}
	if sc.LiveApplicable() == nil {
		t.Fatal("dispatch-rollback declares fault kinds, yet it is live-applicable")
	}
	for _, name := range []string{"placement", "mapping-rollout"} {
		sc, _ := Lookup(name)
		if err := sc.LiveApplicable(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLiveRunThroughBrokerRestartAndLatency: the same world with the store
// and the broker behind proxies that add latency, and the broker restarted
// from outside in the middle of the workload. A graceful restart loses
// nothing, so the checkers hold it to every promise; the history shows the
// restart and that it ended.
func TestLiveRunThroughBrokerRestartAndLatency(t *testing.T) {
	opts := liveRedis(t)
	srv := natsbustest.Start(t)
	storeProxy, err := live.NewProxy(opts.Addr, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer storeProxy.Close()
	brokerProxy, err := live.NewProxy(strings.TrimPrefix(srv.URL(), "nats://"), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer brokerProxy.Close()
	nc, err := nats.Connect("nats://"+brokerProxy.Addr(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	proxied := *opts
	proxied.Addr = storeProxy.Addr()

	sc := Scenario{
		Name: "live-restart",
		World: World{
			Workload: &sim.Workload{Jobs: 8, SubmitWindow: 3 * time.Second, StatusReads: 4},
			Workers:  &sim.WorkerProfile{JobDurationMin: 200 * time.Millisecond, JobDurationMax: time.Second},
		},
		Spec: checker.Spec{AllSucceed: true},
	}
	o, err := sc.RunLive(11, LiveTarget{Redis: &proxied, NATS: nc, Flush: true, Duration: 4 * time.Second,
		Drain: time.Second, HealBound: 20 * time.Second, AckWait: 3 * time.Second,
		BrokerRestarts: []time.Duration{1500 * time.Millisecond}, RestartBroker: srv.Restart})
	requireCleanLiveRun(t, o, err, 8)
	var restarted, ended bool
	for _, f := range o.Run.History.Faults {
		restarted = restarted || f.Kind == "Event:broker-restart"
		ended = ended || f.Kind == "Event:broker-restart-end" && strings.HasSuffix(f.Target, ": done")
	}
	if !restarted || !ended {
		t.Fatalf("the history does not show the restart and its end: %+v", o.Run.History.Faults)
	}
	t.Logf("live run through a restart: %d steps, %d publishes, %d settles in %s", o.Steps,
		len(o.Run.History.Publishes), len(o.Run.History.Settles), o.Wall.Round(time.Millisecond))
}

// requireCleanLiveRun fails t unless a live run ran, broke no promise and
// left every one of its jobs in the store.
func requireCleanLiveRun(t *testing.T, o *Outcome, err error, jobs int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	// A live run does not replay: its trace is the only account of a failure
	// (kept with go test -artifacts).
	defer func() {
		if t.Failed() {
			keepLiveTrace(t, o)
		}
	}()
	if o.Run.Err != nil {
		t.Fatalf("run: %v", o.Run.Err)
	}
	if len(o.Result.Violations) > 0 {
		t.Fatalf("violations: %+v", o.Result.Violations)
	}
	if n := len(o.Run.Final); n != jobs {
		t.Fatalf("%d jobs in the store at the end, want %d", n, jobs)
	}
}

// TestWorkloadOnlyLeavesFaultKindsOut: a case with fault kinds runs live
// without them and without the goals only they reach, each listed; a
// fault-free case and a swarm are left as they are.
func TestWorkloadOnlyLeavesFaultKindsOut(t *testing.T) {
	var found, keptDropped int
	// The outbox's suite has cases with kinds its system cannot reach
	// already dropped: those stay listed, first.
	for _, c := range append(Release().Cases, Release().For(outbox.System{}).Cases...) {
		if c.NotApplicable != "" {
			continue
		}
		w := c.WorkloadOnly()
		switch {
		case c.Scenario.Swarm:
			if w.Scenario.LiveApplicable() == nil {
				t.Errorf("%s: a swarm became live-applicable", c.Scenario.Name)
			}
		case len(c.Scenario.Faults) == 0:
			if len(w.Dropped) != len(c.Dropped) || len(w.Sometimes) != len(c.Sometimes) {
				t.Errorf("%s: a fault-free case was changed: %v", c.Scenario.Name, w.Dropped)
			}
		default:
			found++
			if w.Scenario.LiveApplicable() != nil || len(w.Scenario.Faults) != 0 || len(w.Sometimes) != 0 ||
				w.Scenario.ExpectViolation != "" {
				t.Errorf("%s: workload only still has faults or their goals: %+v", c.Scenario.Name, w.Scenario)
			}
			listed := strings.Join(w.Dropped, "; ")
			for _, k := range c.Scenario.Faults {
				if !strings.Contains(listed, k.Name) {
					t.Errorf("%s: %s left out but not listed: %s", c.Scenario.Name, k.Name, listed)
				}
			}
			for _, b := range c.Sometimes {
				if !strings.Contains(listed, "sometimes "+b) {
					t.Errorf("%s: sometimes %s left out but not listed: %s", c.Scenario.Name, b, listed)
				}
			}
			if !slices.Equal(w.Dropped[:min(len(c.Dropped), len(w.Dropped))], c.Dropped) {
				t.Errorf("%s: what the system could not reach was not kept first: %v", c.Scenario.Name, w.Dropped)
			}
			if len(c.Dropped) > 0 {
				keptDropped++
			}
		}
	}
	if found == 0 || keptDropped == 0 {
		t.Fatalf("%d release cases declare fault kinds, %d had kinds dropped already: the test shows nothing", found, keptDropped)
	}
}

// TestLiveRunOnASystemWithoutStreams: a system that declares no streams
// gets one stream for every subject, which JetStream cannot hold as ">";
// the live broker holds each subject the run uses instead, and the outbox
// runs live as the simulator runs it.
func TestLiveRunOnASystemWithoutStreams(t *testing.T) {
	opts := liveRedis(t)
	sc := Scenario{
		Name: "live-outbox",
		World: World{
			Workload: &sim.Workload{Jobs: 6, SubmitWindow: 2 * time.Second},
			Workers:  &sim.WorkerProfile{JobDurationMin: 200 * time.Millisecond, JobDurationMax: time.Second},
		},
		Spec: checker.Spec{AllSucceed: true},
	}.On(outbox.System{})
	o, err := sc.RunLive(3, LiveTarget{Redis: opts, NATS: natsbustest.Connect(t), Flush: true, Duration: 3 * time.Second,
		Drain: time.Second, HealBound: 15 * time.Second, AckWait: 3 * time.Second})
	requireCleanLiveRun(t, o, err, 6)
}

// keepLiveTrace writes a failed live run's trace and history to the test's
// artifact directory.
func keepLiveTrace(t *testing.T, o *Outcome) {
	dir := t.ArtifactDir()
	hist, err := json.MarshalIndent(o.Run.History, "", " ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "history.json"), hist, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "trace.log"), o.World.Trace().Bytes(), 0o644)
	}
	if err != nil {
		t.Logf("keeping the trace: %v", err)
		return
	}
	t.Logf("trace and history in %s", dir)
}

// caughtInBlindWindow excuses a TIMEOUT only for a dispatch the killed
// replica wrote before its kill and never published.
func TestCaughtInBlindWindow(t *testing.T) {
	kill := history.FaultRecord{Time: time.Second, Actor: "replica-2", Kind: "Event:kill"}
	dispatched := func(actor string, at time.Duration) history.StateChange {
		return history.StateChange{JobID: "j-1", To: "DISPATCHED", Actor: actor, Time: at}
	}
	stored := history.PublishRecord{JobID: "j-1", Dispatch: true, Outcome: history.PublishStored}
	for _, c := range []struct {
		name      string
		states    []history.StateChange
		publishes []history.PublishRecord
		want      bool
	}{
		{"written by the killed replica, never published", []history.StateChange{dispatched("replica-2/sys.job.submit#1.1", 900*time.Millisecond)}, nil, true},
		{"published", []history.StateChange{dispatched("replica-2/sys.job.submit#1.1", 900*time.Millisecond)}, []history.PublishRecord{stored}, false},
		{"written by another replica", []history.StateChange{dispatched("replica-3/sys.job.submit#1.1", 900*time.Millisecond)}, nil, false},
		{"written after the kill, by the restarted replica", []history.StateChange{dispatched("replica-2/sys.job.submit#1.2", 2*time.Second)}, nil, false},
		{"never dispatched", nil, nil, false},
	} {
		h := &history.History{States: c.states, Publishes: c.publishes, Faults: []history.FaultRecord{kill}}
		if got := caughtInBlindWindow(h, "j-1"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
