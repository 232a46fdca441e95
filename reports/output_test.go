package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJUnit(t *testing.T) {
	cases := []CaseSpec{
		{Scenario: "b", Seeds: []uint64{1, 2, 3}, Declared: []string{"K1", "K9"}},
		{Scenario: "a", Seeds: []uint64{5}, Finding: "dup-publish"},
		{Scenario: "c", Seeds: []uint64{7, 8}},
	}
	bad := seed("b", 2, VerdictSafety, "K1")
	bad.Artifacts = "failures/b-2"
	bad.WallSeconds = 99
	s := Build("simrun dev", "release", "", cases, []SeedResult{seed("b", 1, VerdictPass), bad, seed("b", 3, VerdictPass),
		found("a", 5, "dup-publish", VerdictPass), seed("c", 7, VerdictPass), seed("c", 8, VerdictPass)}, 12)
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))

	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back), buf.String())
	require.Equal(t, "release", back.Name)
	require.Equal(t, 4, back.Tests, "three cases and one failing seed")
	require.Equal(t, 2, back.Failures, "the failing seed, and the case whose K9 never fired")
	require.Len(t, back.Cases, 4)
	seedCase := back.Cases[0]
	require.Equal(t, "b/2", seedCase.Name, "a failing seed is a test case of its own")
	require.Equal(t, "99.000", seedCase.Time)
	require.NotNil(t, seedCase.Failure)
	require.Equal(t, "invariants/exactly_once_publish: job j-1 published 2 times", seedCase.Failure.Message)
	require.Equal(t, VerdictSafety, seedCase.Failure.Type)
	require.Contains(t, seedCase.Failure.Body, "invariants/exactly_once_publish job=j-1 step=7: job j-1 published 2 times")
	require.Contains(t, seedCase.Failure.Body, "replay: simrun replay --scenario b --seed 2")
	require.Contains(t, seedCase.Failure.Body, "report: failures/b-2/report.html")

	require.Equal(t, "b seeds 1..3", back.Cases[1].Name)
	require.Equal(t, "regression/dup-publish seed 5", back.Cases[2].Name)
	require.Equal(t, "dispatchsim.release", back.Cases[1].Classname)
	require.Equal(t, "4.000", back.Cases[1].Time, "the case's passing seeds; the failing one has its own time")
	f := back.Cases[1].Failure
	require.NotNil(t, f)
	require.Contains(t, f.Message, "never fired: K9")
	require.Contains(t, f.Body, "declared K9 never fired over 3 seeds")
	require.Nil(t, back.Cases[2].Failure)

	total := 0.0
	for _, c := range back.Cases {
		var x float64
		_, err := fmt.Sscanf(c.Time, "%f", &x)
		require.NoError(t, err)
		total += x
	}
	require.InDelta(t, 99+1+3+5+7+8, total, 1e-9, "test case times add up to the seeds' wall time")
}

// A run stopped early: the case with unrun seeds fails as incomplete.
func TestJUnitIncomplete(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2, 3}}}
	s := Build("simrun dev", "release", "", cases, []SeedResult{seed("b", 1, VerdictPass)}, 1)
	s.StoppedBy("budget 1s spent", false)
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))
	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, 1, back.Failures)
	require.Equal(t, VerdictIncomplete, back.Cases[0].Failure.Type)
	require.Contains(t, back.Cases[0].Failure.Message, "2 of 3 seeds not run")
	require.Contains(t, buf.String(), `name="verdict" value="incomplete"`)
	require.Contains(t, buf.String(), `name="stopped" value="budget 1s spent"`)
}

func TestJUnitShard(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2}}, {Scenario: "c", Seeds: []uint64{3}}}
	// Shard 2/2 runs every second seed: b2 only.
	s := Build("simrun dev", "release", "2/2", cases, []SeedResult{seed("b", 2, VerdictPass)}, 1)
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))
	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, 1, back.Skipped)
	require.Zero(t, back.Failures)
	require.NotNil(t, back.Cases[1].Skipped, "no seed of c ran in this shard")
	require.Contains(t, back.Cases[0].SystemOut, "1 of 2 seeds ran here")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))

	boom := errors.New("boom")
	err := WriteFileAtomic(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half a fi")
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, _ := os.ReadFile(path)
	require.Equal(t, "old", string(got), "the old file is untouched")
	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "no temporary file is left behind")

	require.NoError(t, WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }))
	got, _ = os.ReadFile(path)
	require.Equal(t, "new", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 1)

	require.Error(t, WriteFileAtomic(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }))
	require.Error(t, WriteJSONAtomic(filepath.Join(dir, "bad.json"), func() {}), "a value JSON cannot encode")
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 1)
}

func TestWriteIndex(t *testing.T) {
	cases := []CaseSpec{
		{Scenario: "b", Seeds: []uint64{1, 2, 3}, Declared: []string{"K1", "K9"}},
		{Scenario: "c<i>", Seeds: []uint64{7}},
	}
	bad := seed("b", 2, VerdictSafety, "K1")
	bad.Artifacts = "failures/b-2"
	bad.WallSeconds = 99
	s := Build("simrun dev", "release", "", cases, []SeedResult{seed("b", 1, VerdictPass), bad, seed("b", 3, VerdictPass),
		seed("c<i>", 7, VerdictPass)}, 12)
	s.Coverage.Branches = map[string]int{"publish_rollback": 4}
	s.System = "outbox"
	var buf bytes.Buffer
	require.NoError(t, WriteIndex(&buf, s))
	html := buf.String()
	require.Contains(t, html, `id="system">system outbox</span>`, "the header names the system")
	require.Contains(t, html, "<title>release on outbox")
	require.Contains(t, html, `href="failures/b-2/report.html"`)
	require.Contains(t, html, "never fired: K9")
	require.Contains(t, html, "publish_rollback")
	require.Contains(t, html, "simrun replay --scenario b --seed 2")
	require.Contains(t, html, "safety violation")
	require.Contains(t, html, "c&lt;i&gt;")
	require.NotContains(t, html, "c<i>")
	require.Less(t, strings.Index(html, `id="slowest"`), len(html))
	groups := strings.Index(html, `id="groups"`)
	require.Positive(t, groups, "a failing run has failure groups")
	require.Less(t, groups, strings.Index(html, `id="cases"`), "the page opens on the failure groups, above the case table")
	slow := html[strings.Index(html, `id="slowest"`):]
	require.Less(t, strings.Index(slow, ">2</a>"), strings.Index(slow, ">3<"), "the slowest seed first")
}

// A case that cannot apply to the system is a skipped test with its reason,
// and the index lists it, never as a pass.
func TestNotApplicableCasesAreListed(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1}}}
	s := Build("simrun dev", "release", "", cases, []SeedResult{seed("b", 1, VerdictPass)}, 1)
	s.NotApplicable = []NotApplicableCase{{Case: "tenants", Reason: "its point is tenant caps, which q does not have"}}
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))
	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, 1, back.Skipped)
	require.Zero(t, back.Failures)
	last := back.Cases[len(back.Cases)-1]
	require.Equal(t, "tenants", last.Name)
	require.Equal(t, "not applicable: its point is tenant caps, which q does not have", last.Skipped.Message)

	buf.Reset()
	require.NoError(t, WriteIndex(&buf, s))
	require.Contains(t, buf.String(), "its point is tenant caps, which q does not have")
	require.Regexp(t, `(?s)<b>tenants</b>.*not applicable`, buf.String())
	require.Contains(t, buf.String(), "cases not applicable")
}
