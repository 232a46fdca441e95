package simrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim/live"
)

// liveFlags are run's flags for a live run: a scenario's workload against
// real servers on the wall clock instead of the simulator.
type liveFlags struct {
	on                 bool
	redisURL, natsURL  string
	disposable         bool
	duration, drain    time.Duration
	ackWait, healBound time.Duration
	// Faults applied from outside the servers.
	storeLatency, brokerLatency time.Duration
	brokerRestarts              []time.Duration
	brokerRestartCmd            string
	// workloadOnly runs the cases that declare fault kinds without them.
	workloadOnly bool
}

// brokerRestartTimeout bounds --broker-restart-cmd: a broker that is not
// back by then is a failed restart, which the history records.
const brokerRestartTimeout = time.Minute

// liveDefaultAckWait is a live run's ack wait: JetStream's own default. The
// scenarios' 10 minutes would hold a killed replica's deliveries for ten
// minutes of real time.
const liveDefaultAckWait = 30 * time.Second

func addLiveFlags(fl *pflag.FlagSet, f *liveFlags) {
	fl.BoolVar(&f.on, "live", false, "run the scenario's workload against real servers in real time (--redis-url, --nats-url): "+
		"not deterministic; fault kinds are not injected, replica events and the outside faults below are applied")
	fl.StringVar(&f.redisURL, "redis-url", "", "live: the Redis server and database (redis://host:port/db); its database must be empty")
	fl.StringVar(&f.natsURL, "nats-url", "", "live: the NATS server with JetStream (nats://host:port); the topology's streams are recreated")
	fl.BoolVar(&f.disposable, "disposable-target", false, "live: the target is a disposable test deployment: "+
		"a non-loopback address is allowed, and a non-empty database and streams are emptied first")
	fl.DurationVar(&f.duration, "duration", 0, "live: how long the workload runs (default: until the scenario's last submit or event, plus 5s)")
	fl.DurationVar(&f.drain, "drain", 10*time.Second, "live: how long to keep running after every job ended")
	fl.DurationVar(&f.ackWait, "ack-wait", liveDefaultAckWait, "live: the broker's ack wait, instead of the scenario's")
	fl.DurationVar(&f.healBound, "heal-bound", 0, "live: how long every job has after the workload to end "+
		"(default: the scenario's own, 30m unless it says; a shorter one turns a slow recovery into a liveness failure)")
	fl.DurationVar(&f.storeLatency, "store-latency", 0, "live: latency added each way between the system and Redis, by a proxy this run starts")
	fl.DurationVar(&f.brokerLatency, "broker-latency", 0, "live: latency added each way between the system and NATS, by a proxy this run starts")
	fl.DurationSliceVar(&f.brokerRestarts, "broker-restart-at", nil, "live: restart the broker at these times into each seed's run "+
		"(e.g. 20s,45s), with --broker-restart-cmd")
	fl.StringVar(&f.brokerRestartCmd, "broker-restart-cmd", "", "live: the shell command that restarts the broker "+
		"(e.g. 'systemctl restart nats-server', or 'pkill -USR1 embedded-nats'); it must return once the broker is back")
	fl.BoolVar(&f.workloadOnly, "workload-only", false, "live: run the cases that declare fault kinds with their workload and world alone, "+
		"leaving out the kinds and the goals only they reach (each listed)")
}

// liveOnlyFlags may only come with --live; simOnlyFlags never with it.
var (
	liveOnlyFlags = []string{"redis-url", "nats-url", "disposable-target", "duration", "drain", "ack-wait", "heal-bound",
		"store-latency", "broker-latency", "broker-restart-at", "broker-restart-cmd", "workload-only"}
	simOnlyFlags = []string{"shard", "budget", "allow-incomplete", "strategy", "fail-fast"}
)

// checkLiveFlags refuses a live flag without --live, and a simulator's flag
// with it.
func checkLiveFlags(cmd *cobra.Command, f liveFlags) error {
	fl := cmd.Flags()
	if !f.on {
		for _, name := range liveOnlyFlags {
			if fl.Changed(name) {
				return usageErrorf("--%s is for a live run: add --live", name)
			}
		}
		return nil
	}
	for _, name := range simOnlyFlags {
		if fl.Changed(name) {
			return usageErrorf("--%s does not apply to a live run", name)
		}
	}
	switch {
	case f.redisURL == "":
		return usageErrorf("--live needs --redis-url (e.g. redis://127.0.0.1:6379/15)")
	case f.natsURL == "":
		return usageErrorf("--live needs --nats-url (e.g. nats://127.0.0.1:4222)")
	case f.duration < 0 || f.drain < 0 || f.healBound < 0 || f.ackWait < 0:
		return usageErrorf("--duration, --drain, --ack-wait and --heal-bound take positive durations")
	case f.ackWait > 0 && f.ackWait < time.Second:
		return usageErrorf("--ack-wait %s: want at least 1s (handlers hold deliveries across store calls)", f.ackWait)
	case f.storeLatency < 0 || f.brokerLatency < 0:
		return usageErrorf("--store-latency and --broker-latency take positive durations")
	case len(f.brokerRestarts) > 0 && strings.TrimSpace(f.brokerRestartCmd) == "":
		return usageErrorf("--broker-restart-at needs --broker-restart-cmd, the command that restarts the broker")
	case len(f.brokerRestarts) == 0 && fl.Changed("broker-restart-cmd"):
		return usageErrorf("--broker-restart-cmd needs --broker-restart-at, when to run it")
	}
	for _, at := range f.brokerRestarts {
		if at <= 0 {
			return usageErrorf("--broker-restart-at %s: want a time into the run", at)
		}
	}
	return nil
}

// restartBroker runs --broker-restart-cmd; its output ends up in the error
// when it fails.
func restartBroker(command string) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), brokerRestartTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "sh", "-c", command).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", command, err, oneLine(strings.TrimSpace(string(out))))
		}
		return nil
	}
}

// outsideFaults describes what a live run applies from outside, for its
// output and summary.
func outsideFaults(f liveFlags) string {
	var parts []string
	if f.storeLatency > 0 {
		parts = append(parts, fmt.Sprintf("%s each way to redis", f.storeLatency))
	}
	if f.brokerLatency > 0 {
		parts = append(parts, fmt.Sprintf("%s each way to nats", f.brokerLatency))
	}
	if len(f.brokerRestarts) > 0 {
		ats := make([]string, len(f.brokerRestarts))
		for i, at := range f.brokerRestarts {
			ats[i] = at.String()
		}
		parts = append(parts, "broker restarted at "+strings.Join(ats, ", "))
	}
	return strings.Join(parts, "; ")
}

// proxied puts a latency proxy in front of the servers --store-latency and
// --broker-latency name; the returned options and URL go through them.
// stop stops the proxies.
func proxied(f liveFlags, ropts *redis.Options) (store *redis.Options, natsURL string, stop func(), err error) {
	var proxies []*live.Proxy
	stop = func() {
		for _, p := range proxies {
			_ = p.Close()
		}
	}
	store, natsURL = ropts, f.natsURL
	if f.storeLatency > 0 {
		p, err := live.NewProxy(ropts.Addr, f.storeLatency)
		if err != nil {
			return nil, "", stop, err
		}
		proxies = append(proxies, p)
		o := *ropts
		o.Addr = p.Addr()
		store = &o
	}
	if f.brokerLatency > 0 {
		var urls []string
		for _, s := range strings.Split(f.natsURL, ",") {
			u, _ := url.Parse(strings.TrimSpace(s)) // checked by liveNATSURL
			port := u.Port()
			if port == "" {
				port = "4222"
			}
			p, err := live.NewProxy(net.JoinHostPort(u.Hostname(), port), f.brokerLatency)
			if err != nil {
				return nil, "", stop, err
			}
			proxies = append(proxies, p)
			u.Host = p.Addr()
			urls = append(urls, u.String())
		}
		natsURL = strings.Join(urls, ",")
	}
	return store, natsURL, stop, nil
}

// resolveTimeout bounds the look-up of a live target's host name.
const resolveTimeout = 5 * time.Second

// lookupHost resolves a host name for the loopback guard; tests replace it.
var lookupHost = func(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// loopbackAddress is the loopback address a live run dials for host, or why
// host is not certainly this machine. An IP literal must be loopback
// (IPv4-mapped IPv6 counts as the IPv4 it maps). A name must resolve, and to
// loopback addresses only; the run then dials the address it checked, not
// the name, so a name that resolves elsewhere later (a short TTL, a second
// resolver) cannot move it. Numbers in any form but dotted decimal
// (2130706433, 0x7f.1, 0177.0.0.1, 127.1) are refused: resolvers and
// clients disagree on what they mean.
func loopbackAddress(ctx context.Context, host string) (netip.Addr, error) {
	if host == "" {
		return netip.Addr{}, errors.New("no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		switch a = a.Unmap(); {
		case a.Zone() != "":
			return netip.Addr{}, fmt.Errorf("%s has an IPv6 zone: name a loopback address without one", host)
		case !a.IsLoopback():
			return netip.Addr{}, fmt.Errorf("%s is not a loopback address", host)
		}
		return a, nil
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if last := labels[len(labels)-1]; last == "" || last[0] >= '0' && last[0] <= '9' || strings.ContainsAny(host, "%:/\\@[] ") {
		return netip.Addr{}, fmt.Errorf("%s is neither a host name nor an address in the usual form (write 127.0.0.1 or ::1)", host)
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := lookupHost(ctx, host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s does not resolve, so it is not certainly a loopback address: %v", host, err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("%s resolves to no address", host)
	}
	for _, a := range addrs {
		if a = a.Unmap(); !a.IsLoopback() || a.Zone() != "" {
			return netip.Addr{}, fmt.Errorf("%s resolves to %s, which is not a loopback address", host, a)
		}
	}
	return addrs[0].Unmap(), nil
}

// notLoopback is the refusal of a live target that is not certainly this
// machine, and what a disposable one needs.
func notLoopback(flag, what string, err error) error {
	return fmt.Errorf("--%s: %v: a live run %s; add --disposable-target if it is a disposable test deployment", flag, err, what)
}

// liveRedisOptions parses --redis-url and holds it to loopback unless the
// target is disposable: the options returned dial the address checked.
func liveRedisOptions(f liveFlags) (*redis.Options, error) {
	opts, err := redis.ParseURL(f.redisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis-url %q: %v", f.redisURL, err)
	}
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("--redis-url %q: %v", f.redisURL, err)
	}
	if f.disposable {
		return opts, nil
	}
	addr, err := loopbackAddress(context.Background(), host)
	if err != nil {
		return nil, notLoopback("redis-url", "empties and writes its database", err)
	}
	opts.Addr = net.JoinHostPort(addr.String(), port)
	return opts, nil
}

// liveNATSURL holds every server --nats-url lists to loopback unless the
// target is disposable, and returns the list to dial: each server at the
// address checked.
func liveNATSURL(f liveFlags) (string, error) {
	var urls []string
	for _, s := range strings.Split(f.natsURL, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Hostname() == "" {
			return "", fmt.Errorf("--nats-url %q: want nats://host:port", s)
		}
		if !f.disposable {
			addr, err := loopbackAddress(context.Background(), u.Hostname())
			if err != nil {
				return "", notLoopback("nats-url", "deletes and recreates its streams", err)
			}
			switch port := u.Port(); {
			case port != "":
				u.Host = net.JoinHostPort(addr.String(), port)
			case addr.Is6():
				u.Host = "[" + addr.String() + "]"
			default:
				u.Host = addr.String()
			}
		}
		urls = append(urls, u.String())
	}
	return strings.Join(urls, ","), nil
}

// runLive is simrun run --live: every selected case whose scenario can run
// live, one seed at a time, against the servers; the same checkers, the
// same summary and index, each seed's report. Nothing of it replays.
func runLive(cmd *cobra.Command, f runFlags) error {
	lf := f.live
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if cmd.Flags().Changed("count") && f.seeds.count == 0 {
		return usageErrorf("--count 0: want at least 1")
	}
	sys, err := lookupSystem(f.system)
	if err != nil {
		return usageErrorf("--system: %v", err)
	}
	ropts, err := liveRedisOptions(lf)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if lf.natsURL, err = liveNATSURL(lf); err != nil {
		return usageErrorf("%v", err)
	}
	sel, err := selectCases(f.suite, f.scenario, f.seeds)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sel, fit := fitSelection(sel, sys)
	if lf.workloadOnly {
		for i := range sel.Cases {
			sel.Cases[i] = sel.Cases[i].WorkloadOnly()
		}
	}
	var skipped []reports.NotApplicableCase
	live := sel
	live.Cases, live.Custom = nil, nil
	for i, c := range sel.Cases {
		if err := c.Scenario.LiveApplicable(); err != nil {
			skipped = append(skipped, reports.NotApplicableCase{Case: caseLabel(c), Reason: "live: " + err.Error()})
			continue
		}
		live.Cases, live.Custom = append(live.Cases, c), append(live.Custom, sel.Custom[i])
	}
	if len(live.Cases) == 0 {
		hint := ""
		if !lf.workloadOnly {
			hint = "; --workload-only runs a case's workload without its fault kinds"
		}
		if f.scenario != "" {
			return usageErrorf("scenario %s cannot run live: %s%s", f.scenario, strings.TrimPrefix(skipped[0].Reason, "live: "), hint)
		}
		return usageErrorf("no case of %s can run live (each declares fault kinds or store or broker events)%s", sel.Name, hint)
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	if f.junit != "" {
		if err := ensureWritableFile(f.junit); err != nil {
			return usageErrorf("--junit %s: %v", f.junit, err)
		}
	}
	moved, movedTo, err := cleanOutDir(f.out, f.discardPrevious)
	if err != nil {
		return usageErrorf("--out %s: clear the previous run: %v", f.out, err)
	}
	reportCleared(stderr, f.out, moved, movedTo)

	redisAddr := ropts.Addr
	ropts, natsURL, closeProxies, err := proxied(lf, ropts)
	defer closeProxies()
	if err != nil {
		return usageErrorf("latency proxy: %v", err)
	}
	// Reconnects without end, and only to the servers given: a broker that
	// restarts comes back, and one behind a proxy is not reached around it.
	nc, err := nats.Connect(natsURL, nats.Timeout(5*time.Second), nats.Name("simrun live"),
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.IgnoreDiscoveredServers())
	if err != nil {
		return usageErrorf("--nats-url %s: %v", lf.natsURL, err)
	}
	defer nc.Close()

	// With --json, stdout holds the summary alone; the rest goes to stderr.
	console := stdout
	if f.json {
		console = stderr
	}
	target := fmt.Sprintf("redis %s db %d, nats %s", redisAddr, ropts.DB, lf.natsURL)
	outside := outsideFaults(lf)
	if outside != "" {
		target += " (" + outside + ")"
	}
	if lf.workloadOnly {
		target += ", workload only"
	}
	fmt.Fprintf(console, "LIVE RUN against %s: real servers on the wall clock, not the simulator.\n", target)
	fmt.Fprintln(console, "It is NOT deterministic: the servers and the Go scheduler decide the order of events, "+
		"a seed's checksum identifies nothing, and no replay line reproduces a seed.")
	fmt.Fprintf(console, "Fault kinds are not injected; replica stop, kill, start and pause events are applied. "+
		"Ack wait %s, drain %s, heal bound %s.\n", lf.ackWait, lf.drain, healBoundText(lf.healBound))
	if outside != "" {
		fmt.Fprintf(console, "From outside: %s.\n", outside)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(console, "%d of %d cases not run live (fault kinds, a swarm, or a server losing data); "+
			"index.html lists each with why, -v prints them here\n", len(skipped), len(sel.Cases))
	}
	if f.verbose {
		for _, s := range skipped {
			fmt.Fprintf(console, "     %-44s not run live: %s\n", s.Case, strings.TrimPrefix(s.Reason, "live: "))
		}
	}
	if lf.workloadOnly {
		fmt.Fprintln(console, "Workload only: the cases' fault kinds, and the goals only they reach, are left out; "+
			"a pass says nothing about those faults.")
		for _, c := range live.Cases {
			if len(c.Dropped) > 0 && f.verbose {
				fmt.Fprintf(console, "     %-44s left out: %s\n", caseLabel(c), strings.Join(c.Dropped, "; "))
			}
		}
	}

	tasks := live.tasks(shard{I: 1, N: 1})
	byName := map[string]scenarios.Scenario{}
	for _, c := range live.Cases {
		byName[c.Scenario.Name] = c.Scenario // fitted to the system, and to --workload-only
	}
	start := time.Now() // determinism-ok: wall time is a reported figure
	var results []reports.SeedResult
	var failures []string
	for i, t := range tasks {
		sc := byName[t.Scenario]
		fmt.Fprintf(console, "%s seed %d: running live...\n", sc.Name, t.Seed)
		o, err := sc.RunLive(t.Seed, scenarios.LiveTarget{Redis: ropts, NATS: nc,
			// What the previous seed of this run left is this run's own.
			Flush:    lf.disposable || i > 0,
			Duration: lf.duration, Drain: lf.drain, AckWait: lf.ackWait, HealBound: lf.healBound,
			BrokerRestarts: lf.brokerRestarts, RestartBroker: restartBroker(lf.brokerRestartCmd)})
		if err != nil {
			if i == 0 {
				return usageErrorf("%v", err)
			}
			return &exitError{code: exitUsage, err: fmt.Errorf("live: %s seed %d: %w", sc.Name, t.Seed, err)}
		}
		res := reports.SeedResultOf(liveReportRun(o), t.Expect)
		res.Finding = t.Finding
		dir := artifactDir(t.Scenario, t.Seed, scenarios.Variant{})
		res.Artifacts = dir
		if err := writeLiveArtifacts(filepath.Join(f.out, dir), sc, o, res); err != nil {
			fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
		}
		fmt.Fprintf(console, "%s seed %d: %s in %s, %d steps, %d publishes, %d store commands; report %s\n", sc.Name, t.Seed,
			res.Verdict, o.Wall.Round(time.Millisecond), o.Steps, len(o.Run.History.Publishes), o.Run.History.Redis.Commands,
			filepath.Join(f.out, dir, "report.html"))
		if !passed(res) {
			failures = append(failures, fmt.Sprintf("%s seed %d: %s", sc.Name, t.Seed, oneLineFailure(res)))
		}
		results = append(results, res)
	}
	wall := time.Since(start) // determinism-ok: figure

	sum := reports.Build("simrun "+version, live.Name, "", live.specs(sys), results, wall.Seconds())
	sum.System = f.system
	sum.Live = target
	for _, c := range fit.notApplicable {
		sum.NotApplicable = append(sum.NotApplicable, reports.NotApplicableCase{Case: caseLabel(c), Reason: c.NotApplicable})
	}
	sum.NotApplicable = append(sum.NotApplicable, skipped...)
	sum.Provenance = provenance()
	if err := writeOutputs(f.out, sum, f.junit); err != nil {
		code := sum.ExitCode()
		if code == exitPass {
			code = exitUsage
		}
		return &exitError{code: code, err: err}
	}
	if f.json {
		if err := writeJSON(stdout, sum); err != nil {
			return err
		}
	} else {
		printLiveSummary(stdout, sum, failures, f.out, wall)
	}
	return exitWith(sum.ExitCode())
}

// liveReportRun is a live seed's run for reports: no replay line, since
// nothing reproduces it.
func liveReportRun(o *scenarios.Outcome) reports.Run {
	r := reportRun(o)
	r.Replay = ""
	return r
}

// writeLiveArtifacts writes a live seed's folder: its trace, history,
// result and report. No plan: there is nothing to replay.
func writeLiveArtifacts(dir string, sc scenarios.Scenario, o *scenarios.Outcome, res reports.SeedResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	prov := provenance()
	res.Provenance = &prov
	meta := reports.Meta{EngineVersion: prov.String(), Options: derivedOptions(sc, o), Live: true,
		Note: "A live run against real servers on the wall clock: not deterministic."}
	writes := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"trace.log", func(w io.Writer) error { _, err := w.Write(o.World.Trace().Bytes()); return err }},
		{"history.json", func(w io.Writer) error { return writeJSON(w, o.Run.History) }},
		{"seed.json", func(w io.Writer) error { return writeJSON(w, res) }},
		{"report.html", func(w io.Writer) error {
			return reports.NewSeedReport(liveReportRun(o), sc.ExpectViolation, meta).WriteHTML(w)
		}},
	}
	var errs []error
	for _, f := range writes {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			errs = append(errs, fmt.Errorf("artifacts: %s: %w", f.name, err))
		}
	}
	return errors.Join(errs...)
}

// printLiveSummary is the text summary of a live run, which says again that
// it is live.
func printLiveSummary(w io.Writer, sum *reports.Summary, failures []string, out string, wall time.Duration) {
	for _, f := range failures {
		fmt.Fprintln(w, "FAIL "+f)
	}
	ran := len(sum.Seeds)
	fmt.Fprintf(w, "%s (LIVE, not deterministic): %s, %d of %d seeds in %s; summary %s, index %s\n", sum.Suite, sum.Verdict,
		ran, sum.Planned, wall.Round(time.Millisecond), filepath.Join(out, "summary.json"), filepath.Join(out, "index.html"))
}

// healBoundText is --heal-bound as the console says it.
func healBoundText(d time.Duration) string {
	if d == 0 {
		return "the scenario's own"
	}
	return d.String()
}
