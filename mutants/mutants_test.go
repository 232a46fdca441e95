package mutants

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/reports"
)

// knownSurvivors are catalog mutants the release suite cannot kill yet, each
// with what would. The gate fails if one of them starts being killed (drop it
// from here) or another one survives. None now: every catalog mutant is
// killed, or absorbed by another layer (Mutant.Absorbed, proven by
// TestAbsorbedMutantsAreEquivalent).
var knownSurvivors = map[string]string{}

// The release suite as a whole, run by `simrun mutants` built from this tree,
// kills every catalog mutant with a checker its entry names; each mutant's
// suite stops at its first named kill, two mutants at a time.
func TestEveryMutantIsKilled(t *testing.T) {
	longtest.Require(t, "builds one simrun per mutant and runs the release suite against each")
	dir := t.TempDir()
	bin := filepath.Join(dir, "simrun")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/simrun").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "mutants", "--root", "..", "-j", "2", "--fail-fast", "--json", "--out", filepath.Join(dir, "out"))
	stdout, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil {
		require.True(t, errors.As(err, &exit), "%v", err)
		require.Equal(t, 1, exit.ExitCode(), "survivors exit 1, anything else is a broken run: %s", exit.Stderr)
	}
	var sum reports.MutantsSummary
	require.NoError(t, json.Unmarshal(stdout, &sum))
	require.Len(t, sum.Mutants, len(All))
	for _, m := range sum.Mutants {
		why, known := knownSurvivors[m.Name]
		switch {
		case All[indexOf(m.Name)].Absorbed != nil:
			require.Equal(t, reports.MutantEquivalent, m.Status, "%s is absorbed: reported, never run", m.Name)
		case known:
			require.NotEqual(t, reports.MutantKilled, m.Status, "%s is killed now (by %s): drop it from knownSurvivors", m.Name, m.Checker)
			require.Equal(t, reports.MutantSurvived, m.Status, "%s: %s", m.Name, m.Reason)
			t.Logf("%s survives, known: %s", m.Name, why)
		default:
			require.Equal(t, reports.MutantKilled, m.Status, "%s: %s", m.Name, m.Reason)
			require.True(t, m.Named, "%s was killed by %s, not by one of %v", m.Name, m.Checker, m.Expected)
			t.Logf("%s killed by %s after %d seeds (%.1fs)", m.Name, m.Checker, m.SeedsToKill, m.SecondsToKill)
		}
	}
}

func indexOf(name string) int {
	for i, m := range All {
		if m.Name == name {
			return i
		}
	}
	panic("no mutant " + name)
}

// An absorbed mutant is equivalent only while its evidence holds: the engine
// test that stages the defect's situation passes with the mutant built in,
// and fails once the layer said to absorb it is taken out too (so the test
// can see the defect at all).
func TestAbsorbedMutantsAreEquivalent(t *testing.T) {
	longtest.Require(t, "builds the engine's tests with each absorbed mutant, with and without the absorbing layer")
	for _, m := range All {
		if m.Absorbed == nil {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			require.NoError(t, engineTest(t, m, m.Absorbed.Test), "the layer no longer absorbs %s", m.Name)
			bare := m
			bare.Edits = append(append([]Edit(nil), m.Edits...), m.Absorbed.Without...)
			require.Error(t, engineTest(t, bare, m.Absorbed.Test), "%s passes without the layer too: it shows nothing", m.Absorbed.Test)
		})
	}
}

// engineTest runs one engine/ test with the mutant built in.
func engineTest(t *testing.T, m Mutant, test string) error {
	overlay, err := m.Overlay("..", t.TempDir())
	require.NoError(t, err)
	cmd := exec.Command("go", "test", "-v", "-count=1", "-overlay", overlay, "-run", "^"+test+"$", "./engine")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "REDIS_URL="+ownDatabase(t, os.Getenv("REDIS_URL")))
	out, err := cmd.CombinedOutput()
	if err != nil {
		require.Contains(t, string(out), "--- FAIL: "+test, "not a test failure: %s", out)
		return fmt.Errorf("%s failed", test)
	}
	require.Contains(t, string(out), "--- PASS: "+test, "%s", out)
	return nil
}

// A mutant whose edit no longer matches the engine is an error, never a
// silently unmutated build.
func TestStaleEditIsAnError(t *testing.T) {
	m := Mutant{Name: "stale", Edits: []Edit{{File: "engine/scheduler.go", From: "no such code", To: ""}}}
	_, err := m.Overlay("..", t.TempDir())
	require.ErrorContains(t, err, "no longer applies")
}

func TestCatalogNamesAreUniqueAndScenariosExist(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All {
		require.False(t, seen[m.Name], "duplicate mutant %s", m.Name)
		seen[m.Name] = true
		require.NotEmpty(t, m.Catches, m.Name)
		require.NotEmpty(t, m.Edits, m.Name)
	}
}

// positionOf is the line and column (as gremlins counts them) where text
// first stands in the file.
func positionOf(t *testing.T, file, text string) (line, col int) {
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	at := strings.Index(string(src), text)
	require.Positive(t, at, "%q not in %s", text, file)
	return strings.Count(string(src[:at]), "\n") + 1, at - strings.LastIndex(string(src[:at]), "\n")
}

// A gremlins mutant is applied at the site the tool named, with the tool's
// replacement, and a site that no longer holds the operator is an error.
func TestGremlinsMutantAppliesAtItsSite(t *testing.T) {
	line, col := positionOf(t, "../engine/reconciler.go", "< timeout")
	dir := t.TempDir()
	report := func(line, col int) string {
		path := filepath.Join(dir, fmt.Sprintf("report-%d-%d.json", line, col))
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`{"files":[{"file_name":"reconciler.go","mutations":[
			{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":%d,"column":%d}]}]}`, line, col)), 0o644))
		return path
	}
	gs, err := ReadGremlins(report(line, col), "..")
	require.NoError(t, err)
	require.Len(t, gs, 1)
	require.Equal(t, fmt.Sprintf("engine/reconciler.go:%d:%d CONDITIONALS_NEGATION", line, col), gs[0].Site)
	overlay, err := gs[0].Overlay("..", dir)
	require.NoError(t, err)
	b, err := os.ReadFile(overlay)
	require.NoError(t, err)
	var ov struct{ Replace map[string]string }
	require.NoError(t, json.Unmarshal(b, &ov))
	require.Len(t, ov.Replace, 1)
	for _, mutated := range ov.Replace {
		got, err := os.ReadFile(mutated)
		require.NoError(t, err)
		require.Contains(t, string(got), "now.Sub(job.UpdatedAt) >= timeout")
	}

	_, err = ReadGremlins(report(line, 1), "..")
	require.ErrorContains(t, err, "no replacement")
}

// Each triage file holds sites of its own packages only, and every triaged
// site still holds an operator its mutator changes: a triage left behind by
// an edit of the code points at nothing, and fails here.
func TestEquivalentTriageFileReads(t *testing.T) {
	for file, sites := range map[string]string{
		"equivalent.txt":         `^engine/\w+\.go:\d+:\d+ [A-Z_]+$`,
		"harness-equivalent.txt": `^(checker|model|faults)/\w+\.go:\d+:\d+ [A-Z_]+$`,
	} {
		eq, err := ReadEquivalent(file)
		require.NoError(t, err)
		for site, reason := range eq {
			require.Regexp(t, sites, site, file)
			require.NotEmpty(t, reason)
			var path, typ string
			var line, col int
			_, err := fmt.Sscanf(strings.Replace(site, ":", " ", 2), "%s %d %d %s", &path, &line, &col, &typ)
			require.NoError(t, err, site)
			src, err := os.ReadFile(filepath.Join("..", path))
			require.NoError(t, err, site)
			at := offsetOf(string(src), line, col)
			require.GreaterOrEqual(t, at, 0, "%s is outside the file", site)
			replaced := false
			for op := range gremlinsReplacements[typ] {
				replaced = replaced || strings.HasPrefix(string(src[at:]), op)
			}
			require.True(t, replaced, "%s: no %s operator at that position; the triage is stale", site, typ)
		}
	}
}

// A schemata carries each mutant behind its own switch, an inverted && or ||
// around its whole chain, and traces a compile error inside a mutant's form
// to that mutant alone.
func TestSchemataSwitchesEachMutantOnItsOwn(t *testing.T) {
	line, col := positionOf(t, "../model/job.go", "st != in.From || !allowed")
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(report, []byte(fmt.Sprintf(`{"files":[{"file_name":"job.go","mutations":[
		{"type":"CONDITIONALS_NEGATION","status":"RUNNABLE","line":%d,"column":%d},
		{"type":"INVERT_LOGICAL","status":"RUNNABLE","line":%d,"column":%d}]}]}`, line, col+3, line, col+14)), 0o644))
	gs, err := ReadGremlinsOf(report, "..", "model")
	require.NoError(t, err)
	require.Len(t, gs, 2)
	sc, err := BuildSchemata("..", dir, "model", gs, nil)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "model_job.go"))
	require.NoError(t, err)
	rewritten := string(b)
	_, err = parser.ParseFile(token.NewFileSet(), "job.go", rewritten, 0)
	require.NoError(t, err)
	require.Contains(t, rewritten, "if schemataOn(2) { return /*schemata:2{*/(st != in.From && !allowed(in.From, in.To))/*}*/ }")
	require.Contains(t, rewritten, "/*schemata:1{*/(st == in.From)/*}*/")
	require.FileExists(t, filepath.Join(dir, "schemata_switch.go"))

	form := strings.Index(rewritten, "/*schemata:1{*/")
	errLine := strings.Count(rewritten[:form], "\n") + 1
	errCol := form - strings.LastIndex(rewritten[:form], "\n") + 20
	require.Equal(t, []string{gs[0].Site}, sc.SitesAt(filepath.Join(dir, "model_job.go"), errLine, errCol))
}

// ownDatabase is url with a database of its own (the third after its own):
// the engine tests flush the database they are given, and the engine
// package's own tests run at the same time against the same server.
func ownDatabase(t *testing.T, url string) string {
	if url == "" {
		return ""
	}
	u, err := neturl.Parse(url)
	require.NoError(t, err, "REDIS_URL")
	db := 0
	if p := strings.Trim(u.Path, "/"); p != "" {
		db, err = strconv.Atoi(p)
		require.NoError(t, err, "REDIS_URL's database")
	}
	u.Path = "/" + strconv.Itoa((db+2)%16)
	return u.String()
}
