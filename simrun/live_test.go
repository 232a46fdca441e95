package simrun

import "testing"

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
