package reports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/mutants"
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
	require.NoError(t, WriteFileAtomic(file, NewSeedReport(runOf(p), "exactly_once_publish", Meta{EngineVersion: "test"}).WriteHTML))
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

// mutantRunDir is the output of a real failing run: simrun built with the
// terminal-state-resurrection mutant (mutants/), run on three seeds of its
// scenario. Built once per test binary.
var (
	mutantOnce sync.Once
	mutantWork string // removed by TestMain
	mutantDir  string
	mutantErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if mutantWork != "" {
		_ = os.RemoveAll(mutantWork)
	}
	os.Exit(code)
}

func mutantRun(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds simrun with a mutant")
	}
	mutantOnce.Do(func() {
		work, err := os.MkdirTemp("", "reports-mutant-")
		if err != nil {
			mutantErr = err
			return
		}
		mutantWork = work
		m, ok := mutants.Lookup("terminal-state-resurrection")
		if !ok {
			mutantErr = fmt.Errorf("no mutant terminal-state-resurrection")
			return
		}
		overlay, err := m.Overlay("..", work)
		if err != nil {
			mutantErr = err
			return
		}
		bin := filepath.Join(work, "simrun")
		if out, err := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "../cmd/simrun").CombinedOutput(); err != nil {
			mutantErr = fmt.Errorf("build the mutant: %v\n%s", err, out)
			return
		}
		dir := filepath.Join(work, "out")
		out, err := exec.Command(bin, "run", "--scenario", "terminal-resurrection", "--seeds", "4000..4002", "-j", "1",
			"--out", dir).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			mutantErr = fmt.Errorf("the mutant's run should fail with exit 1: %v\n%s", err, tail(string(out), 2000))
			return
		}
		mutantDir = dir
	})
	if mutantErr != nil {
		t.Fatal(mutantErr)
	}
	return mutantDir
}

// panelWidth is the width of a porcupine frame in a seed report on a wide
// screen: the page's 1240 px column less its padding, the card's and the
// frame's borders.
const panelWidth = 1148

var (
	srcdocAttr  = regexp.MustCompile(`<iframe class="porcupine"[^>]*?style="height:(\d+)px" srcdoc="([^"]*)"`)
	bodyData    = regexp.MustCompile(`<body([^>]*)>`)
	cardLink    = regexp.MustCompile(`class="(to-trace|to-lane)" href="#([^"]+)"`)
	elementID   = regexp.MustCompile(`\sid="([^"]+)"`)
	violationLi = `<li class="violation `
)

// Each porcupine view of a real illegal partition, opened at its frame's size,
// has the illegal linearization point on its first screen.
func TestPorcupineIllegalPointIsInTheFirstScreen(t *testing.T) {
	bin := chromium(t)
	dir := mutantRun(t)
	reportsSeen := 0
	for _, seed := range []string{"4000", "4001", "4002"} {
		page, err := os.ReadFile(filepath.Join(dir, "terminal-resurrection", seed, "report.html"))
		require.NoError(t, err)
		reportsSeen++
		frames := srcdocAttr.FindAllStringSubmatch(string(page), -1)
		require.NotEmpty(t, frames, "seed %s: porcupine's views are embedded", seed)
		for i, f := range frames {
			file := filepath.Join(t.TempDir(), fmt.Sprintf("view-%s-%d.html", seed, i))
			require.NoError(t, os.WriteFile(file, []byte(html.UnescapeString(f[2])), 0o644))
			dom := headless(t, bin, file, "--window-size="+fmt.Sprint(panelWidth)+","+f[1], "--virtual-time-budget=5000", "--dump-dom")
			body := bodyData.FindStringSubmatch(dom)
			require.NotNil(t, body, "seed %s view %d drew nothing", seed, i)
			require.Contains(t, body[1], `data-illegal="true"`, "seed %s view %d: an illegal partition (%s)", seed, i, body[1])
			require.Contains(t, body[1], `data-illegal-in-view="true"`, "seed %s view %d: the illegal point is on the first screen", seed, i)
		}
	}
	require.Equal(t, 3, reportsSeen)
}

// Every violation card of a real failing run links to an element that exists
// in the rendered page: its trace excerpt and its job's swimlane.
func TestEveryViolationLinkResolvesInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := mutantRun(t)
	file := filepath.Join(dir, "terminal-resurrection", "4000", "report.html")
	dom := headless(t, bin, file, "--window-size=1400,3000", "--dump-dom")
	ids := map[string]bool{}
	for _, m := range elementID.FindAllStringSubmatch(dom, -1) {
		ids[m[1]] = true
	}
	cards := strings.Split(dom, violationLi)[1:]
	require.Greater(t, len(cards), 3, "the mutant's run has many violations")
	for i, card := range cards {
		links := map[string]string{}
		for _, m := range cardLink.FindAllStringSubmatch(card, -1) {
			if _, seen := links[m[1]]; !seen {
				links[m[1]] = m[2]
			}
		}
		if !strings.Contains(card[:strings.Index(card, ">")], " acct") { // a whole-run count has no line or lane of its own
			require.Contains(t, links, "to-trace", "card %d links to its trace excerpt", i+1)
			require.Contains(t, links, "to-lane", "card %d links to its swimlane", i+1)
		}
		for class, id := range links {
			require.True(t, ids[id], "card %d's %s link #%s resolves to an element", i+1, class, id)
		}
	}
	// Opening the page at an excerpt unfolds it.
	opened := headless(t, bin, file+"#trace-v2", "--window-size=1400,3000", "--dump-dom")
	require.Regexp(t, `<details class="excerpt" id="trace-v2" open`, opened)
	require.NotRegexp(t, `<details class="excerpt" id="trace-v1" open`, opened)
}

// The suite index of a real failing run draws its charts, each with its
// numbers beside it.
func TestIndexChartsRenderWithNumbers(t *testing.T) {
	bin := chromium(t)
	dir := mutantRun(t)
	dom := headless(t, bin, filepath.Join(dir, "index.html"), "--window-size=1400,3000", "--dump-dom")
	for _, id := range []string{"chart-verdicts", "chart-faults", "chart-branches", "chart-wall"} {
		require.Contains(t, dom, `id="`+id+`"`)
	}
	require.Regexp(t, `<rect class="c-safety" x="[0-9.]+" y="[0-9.]+" width="[1-9][0-9.]*"`, dom, "a safety bar with a width")
	require.Regexp(t, `<td>terminal-resurrection</td><td class="num">3</td>`, dom, "the verdict chart's numbers")
	require.Regexp(t, `<td><span class="w">Worker<wbr>Retryable<wbr>After<wbr>Success</span></td><td class="num">[1-9]\d*</td>`, dom,
		"the fault chart's numbers")
	require.Regexp(t, `<text class="p50"[^>]*>p50 [0-9.]+s</text>`, dom, "p50 is marked")
	require.Regexp(t, `<td>p99</td><td class="num">[0-9.]+s</td>`, dom, "and listed")
}
