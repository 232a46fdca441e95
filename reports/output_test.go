package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
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
	s := Build("simrun dev", "release", "", cases, []SeedResult{seed("b", 1, VerdictPass), bad, seed("b", 3, VerdictPass),
		found("a", 5, "dup-publish", VerdictPass), seed("c", 7, VerdictPass), seed("c", 8, VerdictPass)}, 12)
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))

	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back), buf.String())
	require.Equal(t, "release", back.Name)
	require.Equal(t, 3, back.Tests)
	require.Equal(t, 1, back.Failures)
	require.Len(t, back.Cases, 3)
	require.Equal(t, "b seeds 1..3", back.Cases[0].Name)
	require.Equal(t, "regression/dup-publish seed 5", back.Cases[1].Name)
	require.Equal(t, "dispatchsim.release", back.Cases[0].Classname)
	require.Equal(t, "6.000", back.Cases[0].Time, "summed wall of the case's seeds")

	f := back.Cases[0].Failure
	require.NotNil(t, f)
	require.Contains(t, f.Message, "1 of 3 seeds failed (safety)")
	require.Contains(t, f.Message, "K9")
	require.Contains(t, f.Body, "invariants/exactly_once_publish job=j-1 step=7: job j-1 published 2 times")
	require.Contains(t, f.Body, "replay: simrun replay --scenario b --seed 2")
	require.Contains(t, f.Body, "report: failures/b-2/report.html")
	require.Contains(t, f.Body, "declared K9 never fired over 3 seeds")
	require.Nil(t, back.Cases[1].Failure)
}

func TestJUnitShard(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2}}, {Scenario: "c", Seeds: []uint64{3}}}
	s := Build("simrun dev", "release", "1/2", cases, []SeedResult{seed("b", 1, VerdictPass)}, 1)
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))
	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, 1, back.Skipped)
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
	var buf bytes.Buffer
	require.NoError(t, WriteIndex(&buf, s))
	html := buf.String()
	require.Contains(t, html, `href="failures/b-2/report.html"`)
	require.Contains(t, html, "never fired: K9")
	require.Contains(t, html, "publish_rollback")
	require.Contains(t, html, "simrun replay --scenario b --seed 2")
	require.Contains(t, html, "safety violation")
	require.Contains(t, html, "c&lt;i&gt;")
	require.NotContains(t, html, "c<i>")
	require.Less(t, strings.Index(html, `id="slowest"`), len(html))
	slow := html[strings.Index(html, `id="slowest"`):]
	require.Less(t, strings.Index(slow, ">2</a>"), strings.Index(slow, ">3<"), "the slowest seed first")
}
