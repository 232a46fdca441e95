package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// A spec whose state names are none of our engine's: every role, and a
// non-terminal and a terminal state that have none.
var queuedSpec = sut.Spec{
	States:    []string{"QUEUED", "SENT", "IN_FLIGHT", "BACKOFF", "DONE", "BROKEN", "ABORTED", "TIMED_OUT", "HELD", "REJECTED"},
	Terminal:  []string{"DONE", "BROKEN", "ABORTED", "TIMED_OUT", "REJECTED"},
	Scheduled: "QUEUED", Dispatched: "SENT", Running: "IN_FLIGHT", Retrying: "BACKOFF",
	Succeeded: "DONE", Failed: "BROKEN", Cancelled: "ABORTED", TimedOut: "TIMED_OUT",
}

// wantRole is each state's class on the page.
var wantRole = map[string]string{
	"QUEUED": "st-scheduled", "SENT": "st-dispatched", "IN_FLIGHT": "st-running", "BACKOFF": "st-retrying",
	"DONE": "st-succeeded", "BROKEN": "st-failed", "ABORTED": "st-cancelled", "TIMED_OUT": "st-timedout",
	"HELD": "st-other", "REJECTED": "st-otherterminal",
}

// queuedRun is a run of that system: job a passes through every
// non-terminal state and times out (a violation names it, so it gets a
// zoomed lane); jobs b to e end in the other terminal states.
func queuedRun() Run {
	h := &history.History{End: time.Minute}
	step := uint64(0)
	move := func(job string, states ...string) {
		from := ""
		for _, to := range states {
			step += 100 // wide bars: room for each state's name in the zoomed lane
			h.States = append(h.States, history.StateChange{Step: step, Time: time.Duration(step) * time.Millisecond,
				Actor: "replica-1", JobID: job, From: from, To: to})
			from = to
		}
	}
	for _, j := range []string{"a", "b", "c", "d", "e"} {
		h.Submitted = append(h.Submitted, history.SubmittedJob{JobID: j})
	}
	move("a", "QUEUED", "SENT", "IN_FLIGHT", "BACKOFF", "HELD", "QUEUED", "TIMED_OUT")
	move("b", "QUEUED", "DONE")
	move("c", "QUEUED", "BROKEN")
	move("d", "QUEUED", "ABORTED")
	move("e", "REJECTED")
	res := &checker.Result{Linearizability: checker.LinOk, Violations: []checker.Violation{{Layer: checker.LayerLiveness,
		Checker: "job_succeeded", Job: "a", Step: 700, Message: "job a timed out"}}}
	spec := queuedSpec
	return Run{System: "queued-example", Spec: &spec, Scenario: "s", Seed: 1, Result: res, History: h}
}

var (
	segTitle    = regexp.MustCompile(`<rect class="seg (st-[a-z]+)"[^>]*><title>([A-Z_]+) \(`)
	legendEntry = regexp.MustCompile(`<span class="role" title="[^"]*"><i class="swatch (st-[a-z]+)"></i><b>([^<]*)</b>`)
	segLabel    = regexp.MustCompile(`<text class="seglabel"[^>]*>([A-Z_]+)</text>`)
)

// A system whose states are named QUEUED, SENT, TIMED_OUT... gets each state
// coloured by its role in the spec and labelled with its own name, in the
// swimlanes and in the legend; none is left grey and unnamed.
func TestSeedReportColoursStatesByRole(t *testing.T) {
	html := renderSeed(t, NewSeedReport(queuedRun(), "", Meta{}))

	segs := segTitle.FindAllStringSubmatch(html, -1)
	require.NotEmpty(t, segs)
	drawn := map[string]bool{}
	for _, m := range segs {
		require.Equal(t, wantRole[m[2]], m[1], "the bar of %s", m[2])
		drawn[m[2]] = true
	}
	for state := range wantRole {
		require.True(t, drawn[state], "%s has a bar", state)
	}

	legend := map[string]string{}
	for _, m := range legendEntry.FindAllStringSubmatch(html, -1) {
		for _, state := range strings.Split(m[2], ", ") {
			legend[state] = m[1]
		}
	}
	require.Equal(t, wantRole, legend, "the legend names each state under its role's colour")

	labels := map[string]bool{}
	for _, m := range segLabel.FindAllStringSubmatch(html, -1) {
		labels[m[1]] = true
	}
	for _, state := range []string{"QUEUED", "SENT", "IN_FLIGHT", "BACKOFF", "HELD", "TIMED_OUT"} {
		require.True(t, labels[state], "job a's zoomed lane names %s", state)
	}
	require.Contains(t, html, `system queued-example</span>`, "the header names the system")
	require.Contains(t, html, "<title>s seed 1 on queued-example")
}

func TestStateRoles(t *testing.T) {
	spec := queuedSpec
	roles := stateRoles{&spec}
	for state, class := range wantRole {
		require.Equal(t, class, roles.of(state).Class, state)
	}
	require.Equal(t, "st-other", roles.of("NEVER_DECLARED").Class, "a state the spec does not know is other, not terminal")
	// Without a spec nothing is known: every state is "other", by its name.
	require.Equal(t, "st-other", stateRoles{}.of("DONE").Class)
	run := queuedRun()
	run.Spec = nil
	html := renderSeed(t, NewSeedReport(run, "", Meta{}))
	for _, m := range segTitle.FindAllStringSubmatch(html, -1) {
		require.Equal(t, "st-other", m[1], m[2])
	}
	require.Regexp(t, `<b>QUEUED, SENT, IN_FLIGHT, BACKOFF, HELD, TIMED_OUT, DONE, BROKEN, ABORTED, REJECTED</b> other, not terminal`, html)
}

// The pages know no system's state names: they come from the spec. Tests may
// name them; the code and the templates may not.
func TestNoEngineStateNamesInPages(t *testing.T) {
	names := regexp.MustCompile(`\b(PENDING|SCHEDULED|DISPATCHED|RUNNING|RETRYING|SUCCEEDED|FAILED|CANCELLED|TIMEOUT|DENIED)\b`)
	var files []string
	for _, glob := range []string{"*.go", "templates/*.tmpl", "../simrun/*.go"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			require.False(t, names.MatchString(line), "%s:%d names a state of one system: %s", f, i+1, line)
		}
	}
}

// A state that holds two roles (a queue whose claim is both its scheduling
// pass and its dispatch) is coloured as the state a job sits in, labelled
// with its own name, and its tooltip names both roles; no legend row says it
// is scheduled.
func TestAStateWithTwoRolesIsColouredByTheOneAJobSitsIn(t *testing.T) {
	spec := sut.Spec{States: []string{"WAITING", "CLAIMED", "OK"}, Terminal: []string{"OK"},
		Scheduled: "CLAIMED", Dispatched: "CLAIMED", Retrying: "WAITING", Succeeded: "OK"}
	r := stateRoles{spec: &spec}
	require.Equal(t, roleDispatched, r.of("CLAIMED"))
	require.Equal(t, "CLAIMED: the spec's Scheduled and Dispatched roles", r.title("CLAIMED"))
	require.Equal(t, "WAITING: the spec's Retrying role", r.title("WAITING"))
	rows := r.legend(nil)
	for _, row := range rows {
		if row.Class == roleScheduled.Class {
			t.Fatalf("a scheduled row: %+v", row)
		}
		if row.Class == roleDispatched.Class {
			require.Equal(t, []string{"CLAIMED"}, row.States)
			require.Equal(t, "CLAIMED: the spec's Scheduled and Dispatched roles", row.Title)
		}
	}
}
