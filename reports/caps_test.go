package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// A run far larger than any scenario's still gives a report under the cap,
// and the report says what it left out.
func TestSeedReportStaysUnderTheCap(t *testing.T) {
	h := &sim.History{End: time.Hour}
	var plan faults.Plan
	res := &checker.Result{Linearizability: checker.LinOk}
	step := uint64(0)
	for j := range 1000 {
		id := fmt.Sprintf("j-%d", j)
		h.Submitted = append(h.Submitted, sim.SubmittedJob{JobID: id, Accepted: true})
		for k := range 300 { // far past the per-lane cap
			step++
			h.Publishes = append(h.Publishes, sim.PublishRecord{Step: step, JobID: id, Subject: "worker.w1.jobs",
				Outcome: sim.PublishStored, Actor: strings.Repeat("replica-1/handler", 3)})
			if k%10 == 0 {
				h.Faults = append(h.Faults, sim.FaultRecord{Step: step, Kind: "PublishFailsAfterStored", Target: "worker.w1.jobs " + id})
				plan.Entries = append(plan.Entries, faults.PlanEntry{Kind: "PublishFailsAfterStored", Target: "worker.w1.jobs " + id, Step: step})
			}
		}
		if j%10 == 0 {
			res.Violations = append(res.Violations, checker.Violation{Layer: checker.LayerInvariants,
				Checker: "exactly_once_publish", Job: id, Step: step, Message: strings.Repeat("x", 300)})
		}
	}
	o := &scenarios.Outcome{Scenario: "huge", Seed: 1, Steps: step, Result: res, Run: &sim.Result{History: h}, Plan: plan}
	var buf bytes.Buffer
	require.NoError(t, NewSeedReport(runOf(o), "", Meta{}).WriteHTML(&buf))
	html := buf.String()
	require.Less(t, buf.Len(), maxReportBytes, "report of %d KiB", buf.Len()>>10)
	require.Contains(t, html, "jobs not named by a violation are not drawn")
	require.Contains(t, html, "more violating jobs have no zoomed chart")
	require.Contains(t, html, "more entries are not listed")
	require.Contains(t, html, "more violations are in summary.json")
	require.Contains(t, html, "late events beyond")
	require.LessOrEqual(t, strings.Count(html, `<g class="lane`), maxFocus+maxViolations+maxOtherLanes)
	t.Logf("huge run: %d KiB", buf.Len()>>10)
}
