// Package natsbustest runs an embedded nats-server with JetStream for tests:
// in this process, on a temporary store, listening on no port (Connect) or
// on a loopback port a test may restart (Start). It is for tests only.
package natsbustest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Connect starts a server for t and returns a client connection to it; both
// end with the test.
func Connect(t testing.TB) *nats.Conn {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		JetStream:  true,
		StoreDir:   t.TempDir(),
		DontListen: true,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server: not ready after 10s")
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatalf("nats connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Server is an embedded nats-server on a loopback port that a test may
// restart as an operator restarts a broker: same port, same store.
type Server struct {
	opts server.Options
	srv  *server.Server
}

// Start starts a Server for t on a free loopback port; it stops with the
// test.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{opts: server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true}}
	if err := s.start(); err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	s.opts.Port = s.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(s.stop)
	return s
}

// URL is where clients connect.
func (s *Server) URL() string { return s.srv.ClientURL() }

// Restart shuts the server down and starts it again on the same port and
// store; what it flushed to the store survives.
func (s *Server) Restart() error {
	s.stop()
	return s.start()
}

func (s *Server) start() error {
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		return err
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return fmt.Errorf("not ready after 10s on port %d", opts.Port)
	}
	s.srv = srv
	return nil
}

func (s *Server) stop() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}
