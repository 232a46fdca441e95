package scenarios

import (
	"fmt"
	"strings"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Suites that fit the system: what a system has or lacks is data on its
// spec (sut.Spec), and every suite derives from it.
//
//   - A case whose whole point is a feature the system lacks (Scenario.Needs)
//     is not applicable: listed with why, run on no seed, neither a pass nor
//     a fail.
//   - A declared fault kind aimed at a fault point the system lacks is not
//     declared for it (faults.Kind.AppliesTo, Scenario.DeclaredFaults), and a
//     sometimes-expectation names a branch only a system that can reach it is
//     asked for (sometimesNeeds); each dropped one is listed on the case.
//   - A kind drawn per write fires as often for a system that writes less
//     (faults.FitRates).
//   - Findings the system's delivery promise allows are expected findings:
//     counted and shown, not failures (allowedByPromise).
//
// For Cordum's engine, which has every feature and promises exactly once,
// the fitted suites are the suites as written, and every run is the same.

// Feature is something a system has or lacks, read from its spec.
type Feature string

// The features a scenario's point may be about.
const (
	FeatureJobLock      Feature = "a job lock"
	FeatureTenantCaps   Feature = "tenant caps"
	FeatureRunAdmission Feature = "run admission"
	FeatureRunning      Feature = "a running state (the spec's Running role)"
	// FeatureReplicaCancels: a replica writes a client's cancel (not the
	// gateway itself).
	FeatureReplicaCancels Feature = "cancels written by a replica"
	FeatureInvalidRequest Feature = "an invalid-request DLQ code"
	// FeatureExactlyOnce: the system promises each dispatch is stored by
	// the broker once, not at least once.
	FeatureExactlyOnce Feature = "an exactly-once delivery promise"
	FeatureRollback    Feature = "a rollback from the dispatched state to the scheduled one"
	// FeaturePickGrace: a job without a route is retried for a grace window
	// before it fails (the spec's PickGrace).
	FeaturePickGrace Feature = "a pick grace window (the spec's PickGrace)"
	// FeatureRouteAwaited: a job without a route waits for one (retried,
	// within a grace or up to the retry cap) rather than failing at once.
	FeatureRouteAwaited Feature = "a wait for a route (a job no pool can take is retried, not failed at once)"
	// FeatureDispatchOverBus: dispatches are published over the bus (the
	// workers do not pull them from the store).
	FeatureDispatchOverBus Feature = "dispatches published over the bus (not WorkersPull)"
)

// In reports whether a system with spec s has the feature.
func (f Feature) In(s sut.Spec) bool {
	switch f {
	case FeatureJobLock:
		return s.JobLock
	case FeatureTenantCaps:
		return s.HasTenantCaps()
	case FeatureRunAdmission:
		return s.RunAdmission
	case FeatureRunning:
		return s.Running != ""
	case FeatureReplicaCancels:
		return s.Cancels == sut.CancelByReplica
	case FeatureInvalidRequest:
		return s.ReasonInvalidRequest != ""
	case FeatureExactlyOnce:
		return s.Delivery == sut.ExactlyOnce
	case FeatureRollback:
		return s.Allowed(s.Dispatched, s.Scheduled)
	case FeaturePickGrace:
		return s.PickGrace > 0
	case FeatureRouteAwaited:
		return !s.NoRouteFailsAtOnce
	case FeatureDispatchOverBus:
		return !s.WorkersPull
	}
	return false
}

// NotApplicable says why the scenario cannot apply to its system: its point
// is a feature the system lacks ("" when it applies).
func (s Scenario) NotApplicable() string {
	sys := s.system()
	spec := sys.Spec(sut.Options{})
	for _, f := range s.Needs {
		if f.In(spec) {
			continue
		}
		if f == FeatureExactlyOnce {
			return fmt.Sprintf("its point is a duplicate publish found where exactly once is impossible, and %s "+
				"promises only %s: a duplicate publish is what it allows (an expected finding), not a finding to expect",
				sys.Name(), spec.Delivery)
		}
		return fmt.Sprintf("its point is %s, which %s does not have", f, sys.Name())
	}
	return ""
}

// sometimesNeeds are the features a branch label needs beyond being
// countable: a fenced lock needs a lock, a tenant-limit failure caps.
var sometimesNeeds = map[string]Feature{
	"lock_fenced":                 FeatureJobLock,
	"dlq_tenant_limit":            FeatureTenantCaps,
	"dlq_invalid_request":         FeatureInvalidRequest,
	"publish_rollback":            FeatureRollback,
	"rollback_failure":            FeatureRollback,
	"run_429_cleanup":             FeatureRunAdmission,
	"idempotency_cleanup_failure": FeatureRunAdmission,
}

// environmentBranches are reached by the environment, whatever the system.
var environmentBranches = map[string]bool{"store_loss_touched": true, "broker_loss_touched": true}

// SometimesNotApplicable says why a system with spec s cannot be asked to
// reach branch ("" when it can): the label must be one the system's branch
// counters count (Metrics.Branches, with their _of_terminal and _in_flight
// variants) or dlq_<code> for a reason code the spec declares, and the
// system must have the feature the branch is about.
func SometimesNotApplicable(branch string, s sut.Spec) string {
	if f, ok := sometimesNeeds[branch]; ok && !f.In(s) {
		return "the system has no " + strings.TrimPrefix(strings.TrimPrefix(string(f), "a "), "an ")
	}
	if environmentBranches[branch] {
		return ""
	}
	if code, ok := strings.CutPrefix(branch, "dlq_"); ok {
		if s.HasReason(code) {
			return ""
		}
		return "the system declares no DLQ reason code " + code
	}
	base := strings.TrimSuffix(strings.TrimSuffix(branch, "_of_terminal"), "_in_flight")
	for _, label := range s.Metrics.Branches {
		if label == branch || label == base {
			return ""
		}
	}
	return "no branch counter of the system counts " + branch
}

// For fits the suite to sys: each case as Case.For makes it.
func (s Suite) For(sys sut.System) Suite {
	out := s
	out.Cases = make([]Case, len(s.Cases))
	for i, c := range s.Cases {
		out.Cases[i] = c.For(sys)
	}
	return out
}

// NotApplicable lists the suite's cases that cannot apply, each with why.
func (s Suite) NotApplicable() []Case {
	var out []Case
	for _, c := range s.Cases {
		if c.NotApplicable != "" {
			out = append(out, c)
		}
	}
	return out
}

// For is the case run against sys: not applicable (with why) when its
// scenario's point is a feature sys lacks; otherwise with the
// sometimes-expectations sys cannot reach dropped, and each dropped
// expectation and fault kind listed in Dropped with why.
func (c Case) For(sys sut.System) Case {
	c.Scenario = c.Scenario.On(sys)
	c.NotApplicable = c.Scenario.NotApplicable()
	c.Dropped = nil
	if c.NotApplicable != "" {
		return c
	}
	spec := sys.Spec(sut.Options{})
	var keep []string
	for _, b := range c.Sometimes {
		if why := SometimesNotApplicable(b, spec); why != "" {
			c.Dropped = append(c.Dropped, fmt.Sprintf("sometimes %s: %s", b, why))
			continue
		}
		keep = append(keep, b)
	}
	c.Sometimes = keep
	for _, k := range c.Scenario.Faults {
		if !k.AppliesTo(spec) {
			c.Dropped = append(c.Dropped, fmt.Sprintf("fault kind %s: the system has no %s", k.Name,
				strings.TrimPrefix(k.Needs(), "a ")))
		}
	}
	return c
}

// ExpectedKey is the branch key under which a seed counts the findings of
// checker its system's promise allows: counted with the branches, so that
// every report that shows branches shows them (reports.SeedResult carries
// no field of its own for them yet).
func ExpectedKey(checkerName string) string { return "expected:" + checkerName }

// promiseAllows says whether the world holds the system to an at-least-once
// promise with an idempotent consumer: the spec declares it, the system's
// worker protocol has the store-backed consumer, and the world runs it.
func (s Scenario) promiseAllows(workersNoDedup bool) bool {
	sys := s.system()
	if sys.Spec(sut.Options{}).Delivery != sut.AtLeastOnceIdempotentConsumer {
		return false
	}
	_, ok := sys.Worker().(sut.IdempotentConsumer)
	return ok && !workersNoDedup
}

// keepsConsumer reports whether the system's consumer must stay on in a
// world that turns the workers' de-duplication off: for a system whose
// promise rests on its own consumer, the consumer is the system, not the
// environment. (The simulator ties the consumer to the workers' in-process
// de-duplication, so both stay on.)
func (s Scenario) keepsConsumer() bool {
	sys := s.system()
	_, ok := sys.Worker().(sut.IdempotentConsumer)
	return ok && sys.Spec(sut.Options{}).Delivery == sut.AtLeastOnceIdempotentConsumer
}

// allowedByPromise takes out of r the findings an at-least-once promise with
// an idempotent consumer allows, and returns them: an exactly_once_publish
// finding whose repeat is the same message again (the message id of the
// generation's first stored copy, as every stored copy of it carries) for a
// generation that ran at most once. A second message for one dispatch, a
// generation nothing re-opened, or a generation run twice (which the consumer
// should have prevented) stays a finding, as does exactly_once_execution.
func allowedByPromise(h *history.History, r *checker.Result) []checker.Violation {
	if h == nil || r == nil {
		return nil
	}
	type key struct {
		job string
		gen int
	}
	stored := map[key][]history.PublishRecord{}
	for _, p := range h.Publishes {
		if p.Dispatch && p.Stored() && p.JobID != "" {
			k := key{p.JobID, p.Gen}
			stored[k] = append(stored[k], p)
		}
	}
	runs := map[key]int{}
	for _, e := range h.Executions {
		runs[key{e.JobID, e.Gen}]++
	}
	sameMessageAgain := func(v checker.Violation) bool {
		for k, ps := range stored {
			if k.job != v.Job || runs[k] > 1 {
				continue
			}
			for i, p := range ps {
				if p.Step != v.Step {
					continue
				}
				if i == 0 {
					return false // the first copy: a dispatch nothing re-opened
				}
				for _, q := range ps {
					if q.MsgID != ps[0].MsgID {
						return false
					}
				}
				return true
			}
		}
		return false
	}
	var keep, allowed []checker.Violation
	for _, v := range r.Violations {
		if v.Checker == "exactly_once_publish" && v.Layer == checker.LayerInvariants && sameMessageAgain(v) {
			allowed = append(allowed, v)
			continue
		}
		keep = append(keep, v)
	}
	if len(allowed) > 0 {
		r.Violations = keep
	}
	return allowed
}
