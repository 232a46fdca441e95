// Command embedded-nats runs a nats-server with JetStream (the version the
// engine's bus is tested against) on a loopback port, for a live run of
// simrun when no nats-server is installed:
//
//	go run ./cmd/embedded-nats -port 14222 &
//	simrun run --live --redis-url redis://127.0.0.1:16392/0 --nats-url nats://127.0.0.1:14222 --scenario placement
//
// It stores streams in a temporary directory removed on exit, and stops on
// SIGINT or SIGTERM. SIGUSR1 restarts it, as an operator restarts a broker:
// shut down, then started again on the same port and store, which a live
// run's --broker-restart-cmd can do:
//
//	simrun run --live ... --broker-restart-at 20s --broker-restart-cmd 'pkill -USR1 embedded-nats'
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on (keep it loopback: the server has no authentication)")
	port := flag.Int("port", 4222, "port to listen on")
	flag.Parse()
	if ip := net.ParseIP(*host); *host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fail(fmt.Errorf("-host %s: only a loopback address (the server has no authentication)", *host))
	}
	dir, err := os.MkdirTemp("", "embedded-nats-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	opts := server.Options{Host: *host, Port: *port, JetStream: true, StoreDir: dir, NoSigs: true}
	srv, err := start(opts)
	if err != nil {
		fail(err)
	}
	fmt.Printf("nats-server %s with JetStream at %s (store %s, pid %d)\n", server.VERSION, srv.ClientURL(), dir, os.Getpid())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		srv.Shutdown()
		srv.WaitForShutdown()
		if s != syscall.SIGUSR1 {
			return
		}
		if srv, err = start(opts); err != nil {
			fail(fmt.Errorf("restart: %w", err))
		}
		fmt.Printf("nats-server restarted at %s\n", srv.ClientURL())
	}
}

// start runs a server with opts and waits until it takes connections.
func start(opts server.Options) (*server.Server, error) {
	srv, err := server.NewServer(&opts)
	if err != nil {
		return nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		return nil, fmt.Errorf("nats-server on %s:%d not ready after 10s", opts.Host, opts.Port)
	}
	return srv, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "embedded-nats: "+err.Error())
	os.Exit(2)
}
