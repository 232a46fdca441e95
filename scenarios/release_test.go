package scenarios

import (
	"os"
	"testing"
	"time"
)

// runSuite runs a suite as Go subtests, one per case; a failing seed prints its
// violations and the line that reproduces it.
func runSuite(t *testing.T, s Suite) {
	var reps []*CaseReport
	var wall, check time.Duration
	seeds, blind := 0, 0
	for _, c := range s.Cases {
		name := c.Scenario.Name
		if c.Finding != "" {
			name = "regression/" + c.Finding
		}
		t.Run(name, func(t *testing.T) {
			rep := RunCase(c, nil)
			reps = append(reps, rep)
			wall += rep.Wall
			check += rep.Check
			seeds += rep.Seeds
			blind += rep.TimeoutNeverPublished
			for _, n := range rep.Notes() {
				t.Log(n)
			}
			if rep.NotApplicable != "" {
				t.Skip(rep.NotApplicable)
			}
			if !rep.Passed() {
				t.Errorf("%s", rep.Describe())
			}
			if rep.LinUnknown > 0 {
				t.Errorf("%d seeds ended with linearizability unknown", rep.LinUnknown)
			}
			t.Logf("seeds=%d fired: %s", rep.Seeds, FormatCounts(rep.Fired))
		})
	}
	fired, branches := Coverage(reps)
	t.Logf("suite %s: %d seeds; jobs that ended TIMEOUT never published: %d", s.Name, seeds, blind)
	t.Logf("suite %s: fault coverage: %s", s.Name, FormatCounts(fired))
	t.Logf("suite %s: branches reached: %s", s.Name, FormatCounts(branches))
	if wall > 0 {
		t.Logf("suite %s: checker time %.1f%% of run time", s.Name, 100*check.Seconds()/wall.Seconds())
	}
}

// TestRelease is the release gate: `go test ./scenarios -run TestRelease`.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("the release suite runs in full mode")
	}
	runSuite(t, Release())
}

// TestRegression runs the pinned seeds alone: `go test ./scenarios -run TestRegression`.
func TestRegression(t *testing.T) {
	runSuite(t, Regression())
}

// TestExploratory is the nightly swarm (500 seeds, a few minutes); it runs
// only when asked: `DISPATCHSIM_EXPLORATORY=1 go test ./scenarios -run TestExploratory`.
func TestExploratory(t *testing.T) {
	if os.Getenv("DISPATCHSIM_EXPLORATORY") == "" {
		t.Skip("set DISPATCHSIM_EXPLORATORY=1 to run the exploratory suite")
	}
	runSuite(t, Exploratory())
}
