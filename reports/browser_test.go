package reports

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chromium finds a headless browser: $CHROMIUM, else /usr/bin/chromium. CI
// installs one, so there a missing browser fails the test instead of skipping.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium at $CHROMIUM or /usr/bin/chromium; CI must install it")
	}
	t.Skip("no chromium at $CHROMIUM or /usr/bin/chromium")
	return ""
}

// headless runs chromium on a local file with everything that could reach the
// network turned off, and returns its standard output.
func headless(t *testing.T, bin, file string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+file)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 2000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestSeedReportInBrowser(t *testing.T) {
	bin := chromium(t)
	o := failingRun(t)
	v := firstViolation(t, o)
	const payload = "<script>alert(1)</script>"
	const target = `<img src=x onerror="document.body.dataset.pwned=1">`
	p := poisoned(o, v.Job, payload, target)

	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	require.NoError(t, WriteFileAtomic(file, NewSeedReport(p, "exactly_once_publish", Meta{EngineVersion: "test"}).WriteHTML))
	dom := headless(t, bin, file, "--dump-dom")
	require.NotEmpty(t, dom)

	for _, id := range []string{"summary", "violations", "plan", "timeline", "linearizability", "trace", "replay"} {
		require.Regexp(t, `id="`+id+`"`, dom, "element id %s", id)
	}
	require.Regexp(t, `<g class="lane[ "]`, dom, "at least one swimlane")
	require.Contains(t, dom, `class="violation `)
	require.Contains(t, dom, "job &lt;script&gt;alert(1)&lt;/script&gt; published twice", "the violation names the job")
	require.Regexp(t, `<iframe class="porcupine"[^>]*srcdoc=`, dom, "porcupine's view is embedded")

	// The payloads stay text: no script or img element came from them, and
	// the onerror handler never ran.
	require.NotContains(t, dom, payload)
	require.NotContains(t, dom, "<img src=\"x\"")
	require.NotContains(t, dom, "<img src=x")
	require.NotContains(t, dom, "data-pwned")
	for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(dom, -1) {
		require.Equal(t, "<script>", m, "only the report's own inline script")
	}
	require.Equal(t, 1, strings.Count(dom, "<script>"), "exactly one script element: the report's own")
}

func TestIndexInBrowser(t *testing.T) {
	bin := chromium(t)
	s := Build("simrun test", "release", "", []CaseSpec{{Scenario: "a<b>", Seeds: []uint64{1, 2}, Declared: []string{"K"}}},
		[]SeedResult{seed("a<b>", 1, VerdictSafety, "K"), seed("a<b>", 2, VerdictPass)}, 1)
	s.Seeds[0].Artifacts = "failures/a-1"
	file := filepath.Join(t.TempDir(), "index.html")
	require.NoError(t, WriteFileAtomic(file, func(w io.Writer) error { return WriteIndex(w, s) }))
	dom := headless(t, bin, file, "--dump-dom")
	require.Contains(t, dom, `href="failures/a-1/report.html"`)
	require.Contains(t, dom, "a&lt;b&gt;")
	require.NotContains(t, dom, "a<b>", "the case name stays text")
}
