package reports

import (
	"slices"

	"github.com/dispatchsim/dispatchsim/checker"
)

// The order a person reads a seed's findings in. The checker lists them by
// layer, then step; a counter compared with the ground truth at the end of
// the run (a metrics or accounting check) has no job and no step, sorts as
// step 0 and would lead every report and name every failure group, though it
// only counts what a job-level finding shows. So:
//
//  0. the harness's own faults, which put the whole run in question;
//  1. job-level findings of the safety layers (assumptions, invariants,
//     linearization), earliest step first;
//  2. job-level findings of the liveness layer, earliest step first (a
//     liveness step is where a job stalled, often the consequence of a
//     safety finding);
//  3. accounting findings: no job and no step, a whole-run count;
//  4. findings the environment's broken contract explains.
//
// A finding is job-level when it names a job (or key) or a step; within a
// rank one that names a step comes before one that does not, and findings
// the same in all of this keep the checker's order.

// accountingFinding reports whether a violation is about the whole run: it
// names no job and no step (a counter or metric mismatch).
func accountingFinding(job string, step uint64) bool { return job == "" && step == 0 }

// readingRank orders one finding; lower is read first.
func readingRank(layer, job string, step uint64) (rank int, noStep bool) {
	switch {
	case layer == string(checker.LayerHarness): // the run itself is in question
		return -1, step == 0
	case layer == string(checker.LayerEnvironment):
		return 3, step == 0
	case accountingFinding(job, step):
		return 2, true
	case layer == string(checker.LayerLiveness):
		return 1, step == 0
	}
	return 0, step == 0
}

func compareFindings(layerA, jobA string, stepA uint64, layerB, jobB string, stepB uint64) int {
	ra, na := readingRank(layerA, jobA, stepA)
	rb, nb := readingRank(layerB, jobB, stepB)
	switch {
	case ra != rb:
		return ra - rb
	case na != nb:
		if na {
			return 1
		}
		return -1
	case stepA < stepB:
		return -1
	case stepA > stepB:
		return 1
	}
	return 0
}

// readingOrder is the checker's violations in reading order, as a new slice.
func readingOrder(vs []checker.Violation) []checker.Violation {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b checker.Violation) int {
		return compareFindings(string(a.Layer), a.Job, a.Step, string(b.Layer), b.Job, b.Step)
	})
	return out
}

// ReadingOrder is a seed's violations in the order a person reads them:
// job-level findings first (safety, then liveness, each earliest step
// first), then counter and metric mismatches about the whole run, then what
// the environment explains. It returns a new slice.
func ReadingOrder(vs []Violation) []Violation {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b Violation) int {
		return compareFindings(a.Layer, a.Job, a.Step, b.Layer, b.Job, b.Step)
	})
	return out
}

// FirstFinding is the violation a seed's report opens on, and the one that
// names its failure group: the first in reading order.
func FirstFinding(vs []Violation) (Violation, bool) {
	if len(vs) == 0 {
		return Violation{}, false
	}
	return ReadingOrder(vs)[0], true
}

// FirstChecker names a failing seed for grouping: the checker of its first
// finding, or its linearizability outcome when no checker fired.
func FirstChecker(r SeedResult) string {
	if v, ok := FirstFinding(r.Violations); ok {
		return v.Checker
	}
	return "linearizability " + r.Linearizability
}

// Accounting reports whether the violation is about the whole run (a
// counter or metric mismatch: no job, no step) rather than a job.
func (v Violation) Accounting() bool { return accountingFinding(v.Job, v.Step) }
