package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Case is one scenario over a range of seeds.
type Case struct {
	Scenario Scenario
	Seeds    []uint64
	// Finding names what a pinned regression seed once found.
	Finding string
	// Sometimes are risky branches (labels of the system's branch counters,
	// or dlq_<reason code>) some seed of the case must reach: declared
	// expectations, so a branch never reached fails the case as a false green.
	Sometimes []string
	// NotApplicable says why the case cannot apply to its system (Case.For):
	// it runs no seed and is neither a pass nor a fail, but is listed.
	NotApplicable string
	// Dropped lists, each with why, the declared fault kinds and
	// sometimes-expectations its system cannot reach (Case.For).
	Dropped []string
	// Partial marks seeds chosen by hand from a range (one seed, --count):
	// declared kinds that never fired and sometimes-expectations never
	// reached hold over the range, so on a part of it they are advisory.
	Partial bool
}

// swarmSometimes are the branches a swarm over hundreds of seeds must reach.
var swarmSometimes = []string{"publish_rollback", "rollback_failure", "fail_closed_read", "lock_fenced",
	"redelivery_of_terminal", "reconciler_timeout", "unknown_dispatched_write", "dlq_no_pool_mapping_topic"}

// worldSometimes adds what only a drawn world reaches: a job no pool can
// take, a pool with no live worker, a re-publish withheld past the window, a
// publish withheld because the lock was lost before it.
var worldSometimes = append(append([]string(nil), swarmSometimes...),
	"dlq_no_pool_mapping_requires", "dlq_no_workers", "republish_withheld", "publish_withheld")

// Suite is a named list of cases.
type Suite struct {
	Name        string
	Description string
	Cases       []Case
}

// Release is the CI gate: every scenario over its fixed seed range, the
// regression seeds first.
func Release() Suite {
	s := Suite{Name: "release", Description: "every scenario over fixed seed ranges; the CI gate"}
	s.Cases = append(s.Cases, Regression().Cases...)
	for _, sc := range All() {
		s.Cases = append(s.Cases, Case{Scenario: sc, Seeds: sc.Seeds.Seeds(), Sometimes: sc.Sometimes})
	}
	return s
}

// Exploratory is the swarm over a wide seed range, for nightly runs.
func Exploratory() Suite {
	sc, _ := Lookup("swarm")
	world, _ := Lookup("world-swarm")
	return Suite{Name: "exploratory", Description: "swarm testing over 500 seeds of the fault mix and 500 of whole worlds",
		Cases: []Case{{Scenario: sc, Seeds: SeedRange{First: 100_000, Count: 500}.Seeds(), Sometimes: swarmSometimes},
			{Scenario: world, Seeds: SeedRange{First: 300_000, Count: 500}.Seeds(), Sometimes: worldSometimes}}}
}

// pinned is a regression seed: a scenario, a seed, and what it found.
type pinned struct {
	scenario string
	seed     uint64
	finding  string
}

// regressions are seeds that once found a defect, named after it. They run
// first in every release. Each was found by the harness against the engine
// with one guard taken out, and fails again if that guard goes.
var regressions = []pinned{
	// The 429 path returned without deleting its reservation: the retry got
	// 409 "in flight" from a key nobody held (run_key_blocked).
	{scenario: "idempotency-reservation", seed: 92500, finding: "429-leaves-key-reserved"},
	// With no stale takeover and no sweeper, a gateway crash between the
	// reservation and the run poisoned the key for good
	// (run_key_reserved_without_run, run_key_never_admitted).
	{scenario: "admission-crash", seed: 92600, finding: "crashed-reservation-never-reclaimed"},
	// An ambiguous publish was rolled back, the worker ran the stored copy, and
	// the replayer re-published the same message id 128.8s later, past the
	// broker's 120s window: the job ran twice (exactly_once_publish,
	// exactly_once_execution).
	{scenario: "swarm", seed: 103661, finding: "redispatch-outside-dedup-window"},
	// A handler wrote DISPATCHED; before its publish returned, the reconciler on
	// a replica whose clock ran two minutes ahead timed the job out (no lock);
	// the handler's publish then dispatched a TIMEOUT job, which ran
	// (terminal_job_executed_again).
	{scenario: "world-swarm", seed: 300018, finding: "reconciler-timeout-between-dispatch-and-publish"},
	// A topic's mapping was missing, then healed, and the job was dispatched;
	// a worker's retryable error sent it back, and it failed at the retry cap
	// with the DLQ reason no_pool_mapping_topic: the healed cause, never
	// cleared by the dispatch (dlq_true_cause).
	{scenario: "world-swarm", seed: 1002447, finding: "healed-cause-names-retry-cap-failure"},
	// The same stale cause where the pick after healing succeeded but the
	// DISPATCHED write failed, so no dispatch could clear it.
	{scenario: "world-swarm", seed: 1002324, finding: "healed-cause-after-failed-dispatch-write"},
	// A replica paused past its lock TTL between the DISPATCHED write and the
	// publish; the reconciler took the lock and timed the job out; the replica
	// woke, published, and a worker ran a TIMEOUT job (lock_exclusive,
	// terminal_job_executed_again). The lock is now renewed just before the
	// publish and the worker refuses a stale packet; the seed's schedule moved
	// with those reads, so the engine and checker unit tests hold the story.
	{scenario: "world-swarm", seed: 1004032, finding: "publish-after-lock-lost-in-pause"},
	// The same story on the fixed engine: a pause right after the handler's
	// last renewal, the reconciler times the job out, the handler wakes and
	// publishes, and the worker's fence refuses the copy. The checker once
	// took the renewal timer's failed renewal for the lease's end and
	// reported the refused copy (terminal_job_executed_again).
	{scenario: "world-swarm", seed: 5008099, finding: "stale-dispatch-refused-by-worker-fence"},
	// Seed 103661's story no longer unfolds on its own seed: the worker's
	// fence reads the store, and a read outage now holds the first copy back.
	// A drawn world that still stores a copy, rolls back, and re-drives the
	// job past the broker's window; with the window check removed it runs
	// twice. (World-swarm 500960 was that world until the window came to be
	// measured on the store's clock, then 501228 until the bus took up
	// JetStream's consumer semantics; 502183 is the first of 500000.. since.)
	{scenario: "world-swarm", seed: 502183, finding: "redispatch-outside-dedup-window-drawn-world"},
	// A checker defect: the replayer failed a job and stored its DLQ entry;
	// its announcement was held up by publish latency while a rolling deploy
	// stopped the replica, which drains deliveries but not its own loops. The
	// announcement never went out, as after a crash, but dlq_announced only
	// excused crashes.
	{scenario: "world-swarm", seed: 6002206, finding: "dlq-announcement-lost-in-graceful-stop"},
	// A simulator defect: a submit the bus held back (a delivery delay) fell
	// due after its replica had crashed and restarted, and the bus handed it
	// to the handler of the process that was gone: the old engine, with its
	// old worker registry, placed the job where no view of the running
	// process would (placement). A held-back delivery now goes to whoever
	// serves the queue when it is due.
	{scenario: "world-swarm", seed: 6010660, finding: "held-back-delivery-to-a-restarted-replica"},
	// Replica clocks 30-90 s apart: a job stamped RUNNING on a clock behind
	// was timed out by a reconciler on a clock ahead seconds later
	// (timeout_not_early, sweep_takes_stale). Times one replica stamps and
	// another judges are now the store's.
	{scenario: "skewed-timeouts", seed: 7200, finding: "timeout-judged-on-another-replicas-clock"},
	// The same skew shortened a pick grace window another replica opened:
	// a job failed no_pool_mapping_topic 2.5 s into its 30 s window, before
	// its mapping arrived (grace_not_early, job_succeeded).
	{scenario: "skewed-grace", seed: 3505, finding: "grace-window-shortened-by-clock-skew"},
	// Clients write one body many ways: a retry whose body had its fields in
	// another order was refused 409 as a reuse for another payload, since
	// the key's fingerprint was of the bytes (run_conflict_justified).
	{scenario: "run-admission-contract", seed: 2700, finding: "retry-in-another-encoding-refused"},
	// A simulator defect: a store loss restored miniredis's live sorted
	// sets, so reverted jobs dropped out of their state index and were never
	// timed out, and the environment layer took every finding on them. The
	// restore now checks itself (store_restored_faithfully).
	{scenario: "store-failover", seed: 8800, finding: "restore-kept-live-sorted-sets"},
	// After an ambiguous publish the engine re-published the same message
	// id to the worker its new pick named; deployed with a stream per
	// subject, the broker kept that copy beside the first, and two workers
	// ran dispatch 0. The engine now keeps the re-publish on the first
	// copy's worker, and parks the job (awaiting the first copy) when that
	// worker can take no more. (Found at
	// world-swarm 600093; the drawn world is 601274 since the broker's fault
	// kinds joined the swarm.)
	{scenario: "world-swarm", seed: 601274, finding: "republish-to-another-stream"},
	// A harness defect: a replica paused while it drained for a stop ran
	// out of drain with a handler between its FAILED write and the DLQ
	// announcement; the world took the replica down, but the history
	// recorded the stop only where it began, so dlq_announced (and, in
	// 707048, the withheld-dispatch count) blamed the engine for a writer
	// that had died. The drain's end is now recorded as the crash it is.
	{scenario: "world-swarm", seed: 708715, finding: "drain-end-kill-unrecorded"},
	// Found by hunting the mutants the release suite left alive (simrun
	// mutants --hunt): with the worker registry's liveness bound made strict,
	// a worker last heard exactly a heartbeat TTL ago counted as gone, and
	// the replayer placed three jobs on busier workers than its
	// least-loaded rule picks with it (placement).
	{scenario: "swarm", seed: 7001947, finding: "worker-heard-exactly-ttl-ago-counted-dead"},
	// The outbox retried a topic with no pool to the attempt cap, 50
	// attempts 30 s apart, each holding a submit delivery in flight; behind
	// the broker's in-flight limit (ten) fifteen such jobs queued for slots,
	// and five were still SCHEDULED when the heal phase ended (job_terminal).
	// The outbox now fails them after a grace window, as engine/ does.
	{scenario: "world-swarm", seed: 9501447, finding: "unmapped-topic-retried-to-the-cap-holding-in-flight-slots"},
}

// Regression is the pinned seeds.
func Regression() Suite {
	s := Suite{Name: "regression", Description: "pinned seeds, named after what they found"}
	for _, p := range regressions {
		sc, ok := Lookup(p.scenario)
		if !ok {
			panic("scenarios: regression names unknown scenario " + p.scenario)
		}
		s.Cases = append(s.Cases, Case{Scenario: sc, Seeds: []uint64{p.seed}, Finding: p.finding})
	}
	return s
}

// Suites lists the suites by name.
func Suites() []Suite { return []Suite{Release(), Exploratory(), Regression()} }

// LookupSuite finds a suite by name.
func LookupSuite(name string) (Suite, bool) {
	for _, s := range Suites() {
		if s.Name == name {
			return s, true
		}
	}
	return Suite{}, false
}

// CaseReport is a case's verdict over its seeds.
type CaseReport struct {
	Scenario string
	Seeds    int
	Failed   []*Outcome // seeds that broke a property (or, for an expected violation, none did)
	Fired    map[string]int
	Branches map[string]int
	// NeverFired lists declared kinds that fired on no seed: a false green.
	NeverFired []string
	// ExpectedFound is set for a scenario with ExpectViolation when a seed found it.
	ExpectedFound bool
	// NotApplicable is the case's reason for not applying: no seed ran, and
	// the case is neither a pass nor a fail.
	NotApplicable string
	// Dropped are the kinds and expectations the system cannot reach (Case.Dropped).
	Dropped []string
	// Advisory are what NeverFired would say of a partial case: shown, not
	// judged.
	Advisory []string
	// Expected counts, per checker, the findings the system's declared
	// promise allows: shown, never a failure.
	Expected              map[string]int
	Wall, Check           time.Duration
	LinUnknown            int
	TimeoutNeverPublished int
}

// Passed reports whether the case holds; a case that does not apply never
// passes (nor fails).
func (r *CaseReport) Passed() bool {
	return r.NotApplicable == "" && len(r.Failed) == 0 && len(r.NeverFired) == 0
}

// Verdict is "pass", "fail" or "not applicable".
func (r *CaseReport) Verdict() string {
	switch {
	case r.NotApplicable != "":
		return "not applicable"
	case r.Passed():
		return "pass"
	}
	return "fail"
}

// SometimesNeverReached is how a case lists a declared branch no seed reached.
func SometimesNeverReached(branch string) string { return "sometimes " + branch + " never reached" }

// RunCase runs every seed of a case and judges it.
func RunCase(c Case, each func(*Outcome)) *CaseReport {
	sc := c.Scenario
	rep := &CaseReport{Scenario: sc.Name, Seeds: len(c.Seeds), Fired: map[string]int{}, Branches: map[string]int{},
		Expected: map[string]int{}, Dropped: c.Dropped, NotApplicable: c.NotApplicable}
	if c.NotApplicable != "" {
		rep.Seeds = 0
		return rep
	}
	var offenders []*Outcome
	for _, seed := range c.Seeds {
		o := sc.Run(seed)
		if each != nil {
			each(o)
		}
		for k, n := range o.Fired {
			rep.Fired[k] += n
		}
		for k, n := range o.Branches {
			rep.Branches[k] += n
		}
		for _, v := range o.Expected {
			rep.Expected[v.Checker]++
		}
		rep.Wall += o.Wall
		rep.Check += o.Check
		rep.TimeoutNeverPublished += o.Result.Figures.TimeoutNeverPublished
		if o.Result.Linearizability == "unknown" {
			rep.LinUnknown++
		}
		switch {
		case sc.ExpectViolation == "":
			if o.Violated() {
				rep.Failed = append(rep.Failed, o)
			}
		case o.HasViolation(sc.ExpectViolation):
			rep.ExpectedFound = true
		case o.Violated():
			offenders = append(offenders, o) // a violation other than the expected one
		}
	}
	rep.Failed = append(rep.Failed, offenders...)
	for _, k := range sc.DeclaredFaults() {
		if rep.Fired[k.Name] == 0 {
			rep.NeverFired = append(rep.NeverFired, k.Name)
		}
	}
	if sc.ExpectViolation != "" && !rep.ExpectedFound {
		rep.NeverFired = append(rep.NeverFired, "expected violation "+sc.ExpectViolation)
	}
	for _, b := range c.Sometimes {
		if rep.Branches[b] == 0 {
			rep.NeverFired = append(rep.NeverFired, SometimesNeverReached(b))
		}
	}
	if c.Partial && c.Finding == "" {
		// What holds over a range says nothing of a part of it.
		rep.Advisory, rep.NeverFired = rep.NeverFired, nil
	}
	return rep
}

// Describe is a failing case's explanation: each failing seed with its
// violations and the line that reproduces it.
func (r *CaseReport) Describe() string {
	var b strings.Builder
	for _, o := range r.Failed {
		fmt.Fprintf(&b, "%s seed %d:\n%s  replay: %s\n", r.Scenario, o.Seed, indent(o.Result.Summary()), o.ReplayLine())
	}
	for _, k := range r.NeverFired {
		fmt.Fprintf(&b, "%s: declared %s never fired over %d seeds\n", r.Scenario, k, r.Seeds)
	}
	return b.String()
}

// Notes are the lines a case's report shows besides its failures: why it
// does not apply, what its system cannot reach, the findings its promise
// allows, and what a partial run only advises.
func (r *CaseReport) Notes() []string {
	var out []string
	if r.NotApplicable != "" {
		out = append(out, fmt.Sprintf("%s: not applicable: %s", r.Scenario, r.NotApplicable))
	}
	for _, d := range r.Dropped {
		out = append(out, fmt.Sprintf("%s: not declared for this system: %s", r.Scenario, d))
	}
	if len(r.Expected) > 0 {
		out = append(out, fmt.Sprintf("%s: expected findings (the system's delivery promise allows them): %s", r.Scenario,
			FormatCounts(r.Expected)))
	}
	for _, a := range r.Advisory {
		out = append(out, fmt.Sprintf("%s: advisory (a part of the case's seeds): %s", r.Scenario, a))
	}
	return out
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// Coverage merges case reports into one table of fault kinds and branches.
func Coverage(reps []*CaseReport) (fired, branches map[string]int) {
	fired, branches = map[string]int{}, map[string]int{}
	for _, r := range reps {
		for k, n := range r.Fired {
			fired[k] += n
		}
		for k, n := range r.Branches {
			branches[k] += n
		}
	}
	return fired, branches
}

// FormatCounts renders a count map as sorted "name=n" pairs.
func FormatCounts(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
