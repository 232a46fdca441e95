package simrun

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// A live run's bad inputs are refused before anything connects: one line,
// exit 2.
func TestLiveBadInputsAreOneLineAndExit2(t *testing.T) {
	const redisURL, natsURL = "redis://127.0.0.1:1/0", "nats://127.0.0.1:1"
	cases := []struct {
		name     string
		args     []string
		mentions string
	}{
		{"live flag without live", []string{"run", "--redis-url", redisURL}, "add --live"},
		{"no redis url", []string{"run", "--live", "--nats-url", natsURL}, "--redis-url"},
		{"no nats url", []string{"run", "--live", "--redis-url", redisURL}, "--nats-url"},
		{"remote redis", []string{"run", "--live", "--redis-url", "redis://10.0.0.7:6379/0", "--nats-url", natsURL},
			"not a loopback address"},
		{"remote nats", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", "nats://nats.example.com:4222"},
			"--disposable-target"},
		{"bad redis url", []string{"run", "--live", "--redis-url", "mysql://x", "--nats-url", natsURL}, "--redis-url"},
		{"simulator flag", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL, "--strategy", "pct"},
			"does not apply to a live run"},
		{"scenario with faults", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL,
			"--scenario", "dispatch-rollback"}, "--workload-only"},
		{"workload only without live", []string{"run", "--workload-only"}, "add --live"},
		{"swarm", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL, "--scenario", "swarm"},
			"cannot run live"},
		{"restart without command", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL,
			"--broker-restart-at", "5s"}, "--broker-restart-cmd"},
		{"restart command without times", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL,
			"--broker-restart-cmd", "true"}, "--broker-restart-at"},
		{"restart at zero", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL,
			"--broker-restart-at", "0s", "--broker-restart-cmd", "true"}, "a time into the run"},
		{"negative latency", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL,
			"--store-latency", "-1ms"}, "--store-latency"},
		{"latency without live", []string{"run", "--broker-latency", "1ms"}, "add --live"},
		{"no server", []string{"run", "--live", "--redis-url", redisURL, "--nats-url", natsURL, "--scenario", "placement",
			"--out", t.TempDir()}, "--nats-url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usageError(t, simrun(t, simrunBin, c.args...), c.mentions)
		})
	}
}

// fakeResolver answers the loopback guard's look-ups from a table, for the
// duration of a test: names an attacker controls resolve where the table says.
func fakeResolver(t *testing.T, names map[string][]string) {
	t.Helper()
	was := lookupHost
	t.Cleanup(func() { lookupHost = was })
	lookupHost = func(_ context.Context, host string) ([]netip.Addr, error) {
		ips, ok := names[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		out := make([]netip.Addr, len(ips))
		for i, ip := range ips {
			out[i] = netip.MustParseAddr(ip)
		}
		return out, nil
	}
}

// The loopback guard refuses every host that is not certainly this machine,
// and hands back the address to dial in place of a name, so a name cannot
// resolve elsewhere by the time the client dials it.
func TestLoopbackGuardRefusesAdversarialHosts(t *testing.T) {
	fakeResolver(t, map[string][]string{
		"localhost":             {"127.0.0.1", "::1"},
		"localhost.":            {"127.0.0.1"},
		"127.0.0.1.evil.com":    {"203.0.113.9"},
		"127.0.0.1.nip.example": {"127.0.0.1"}, // a public name for loopback: dialled as the address checked
		"localhost.example.com": {"93.184.216.34"},
		"half.evil.com":         {"127.0.0.1", "203.0.113.9"},
		"mapped.evil.com":       {"::ffff:10.0.0.1"},
		"empty.example.com":     {},
	})
	for _, c := range []struct {
		host string
		want string // the address to dial; "" for a refusal
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.8.9.10", "127.8.9.10"},
		{"::1", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"localhost", "127.0.0.1"},
		{"localhost.", "127.0.0.1"},
		{"127.0.0.1.nip.example", "127.0.0.1"},
		{"::ffff:10.0.0.1", ""},
		{"10.0.0.7", ""},
		{"0.0.0.0", ""},
		{"::", ""},
		{"::1%lo", ""},
		{"fe80::1%eth0", ""},
		{"2130706433", ""},
		{"0x7f000001", ""},
		{"0x7f.0.0.1", ""},
		{"0177.0.0.1", ""},
		{"127.1", ""},
		{"127.0.0.1.", ""},
		{"127.0.0.1.evil.com", ""},
		{"localhost.example.com", ""},
		{"half.evil.com", ""},
		{"mapped.evil.com", ""},
		{"empty.example.com", ""},
		{"locaIhost", ""},
		{"localhost..", ""},
		{"", ""},
	} {
		got, err := loopbackAddress(context.Background(), c.host)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%q: accepted as %s, want refused", c.host, got)
		case c.want != "" && err != nil:
			t.Errorf("%q: refused (%v), want %s", c.host, err, c.want)
		case c.want != "" && got.String() != c.want:
			t.Errorf("%q: dials %s, want %s", c.host, got, c.want)
		}
	}
	// "localhost" is a name like any other: a hosts file or resolver that
	// sends it elsewhere is refused, not trusted by its spelling.
	fakeResolver(t, map[string][]string{"localhost": {"198.51.100.7"}})
	if got, err := loopbackAddress(context.Background(), "localhost"); err == nil {
		t.Errorf("localhost resolving to 198.51.100.7 was accepted as %s", got)
	}
}

// The guard judges the host the client will dial, whatever the URL hides in
// its user info or fragment, and every server of a NATS list; the options
// and URLs it returns dial the addresses it checked.
func TestLiveTargetsDialTheAddressChecked(t *testing.T) {
	fakeResolver(t, map[string][]string{"localhost": {"127.0.0.1"}, "evil.com": {"203.0.113.9"}})
	for _, c := range []struct{ url, want string }{
		{"redis://127.0.0.1:6379/0", "127.0.0.1:6379"},
		{"redis://user:secret@127.0.0.1:6379/0", "127.0.0.1:6379"},
		{"redis://localhost:6379/0", "127.0.0.1:6379"},
		{"redis://[::ffff:127.0.0.1]:6379/0", "127.0.0.1:6379"},
		{"redis://[::1]:6379/0", "[::1]:6379"},
		{"redis://127.0.0.1@evil.com:6379/0", ""},
		{"redis://127.0.0.1:6379@evil.com:6379/0", ""},
		{"redis://evil.com:6379/0#@127.0.0.1:6379", ""},
		{"redis://evil.com:6379/0?addr=127.0.0.1:6379", ""},
		{"redis://2130706433:6379/0", ""},
	} {
		opts, err := liveRedisOptions(liveFlags{redisURL: c.url})
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: accepted, dialling %s; want refused", c.url, opts.Addr)
		case c.want != "" && err != nil:
			t.Errorf("%s: refused (%v), want %s", c.url, err, c.want)
		case c.want != "" && opts.Addr != c.want:
			t.Errorf("%s: dials %s, want %s", c.url, opts.Addr, c.want)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://localhost:4222", "nats://127.0.0.1:4222"},
		{"nats://localhost", "nats://127.0.0.1"},
		{"nats://token@localhost:4222", "nats://token@127.0.0.1:4222"},
		{"nats://[::1]:4222, nats://127.0.0.2:4223", "nats://[::1]:4222,nats://127.0.0.2:4223"},
		{"nats://127.0.0.1@evil.com:4222", ""},
		{"nats://127.0.0.1:4222,nats://evil.com:4222", ""},
		{"nats://[::ffff:10.0.0.1]:4222", ""},
		{"127.0.0.1:4222", ""},
	} {
		got, err := liveNATSURL(liveFlags{natsURL: c.url})
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: accepted as %s, want refused", c.url, got)
		case c.want != "" && err != nil:
			t.Errorf("%s: refused (%v), want %s", c.url, err, c.want)
		case c.want != "" && got != c.want:
			t.Errorf("%s: dials %s, want %s", c.url, got, c.want)
		}
	}
	// A disposable target is taken as written.
	if opts, err := liveRedisOptions(liveFlags{redisURL: "redis://evil.com:6379/0", disposable: true}); err != nil ||
		opts.Addr != "evil.com:6379" {
		t.Errorf("a disposable target: %v, %+v", err, opts)
	}
	if _, err := liveNATSURL(liveFlags{natsURL: "nats://evil.com:4222"}); err == nil ||
		!strings.Contains(err.Error(), "--disposable-target") {
		t.Errorf("the refusal does not say how to run against a disposable target: %v", err)
	}
}
