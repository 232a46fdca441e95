package natsbus

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/dispatchsim/dispatchsim/engine"
)

// Defaults, as the reference deployment runs them (JetStream's own defaults
// differ: ack wait 30s, unlimited deliveries).
const (
	DefaultDuplicateWindow = 2 * time.Minute
	DefaultAckWait         = 10 * time.Minute
	DefaultMaxDeliver      = 100
	DefaultMaxAckPending   = 1000
	DefaultFetchBatch      = 64
	// heartbeatMaxAge bounds the heartbeat stream: a load report older than a
	// worker's TTL tells a replica nothing.
	heartbeatMaxAge = time.Minute
	// deleteTimeout bounds the clean-up of fan-out consumers after a drain.
	deleteTimeout = 5 * time.Second
)

// Stream is one JetStream stream: the subjects that share its storage and its
// duplicate window. A message id is de-duplicated within one stream only.
type Stream struct {
	Name     string
	Subjects []string // NATS subjects, wildcards allowed
	// MaxAge drops messages older than this; 0 keeps them until the stream's
	// other limits (none by default).
	MaxAge time.Duration
}

// DefaultStreams is the reference topology (engine.Streams), the heartbeats
// kept no longer than a worker's load report tells anything. A dispatch's id
// (jobreq:<jobID>) is de-duplicated against dispatches only.
func DefaultStreams() []Stream {
	var out []Stream
	for _, s := range engine.Streams() {
		st := Stream{Name: s.Name, Subjects: s.Subjects}
		if slices.Contains(s.Subjects, engine.SubjectHeartbeat) {
			st.MaxAge = heartbeatMaxAge
		}
		out = append(out, st)
	}
	return out
}

// Config configures a Bus. Conn is required; zero values mean the documented
// defaults, filled in by withDefaults.
type Config struct {
	Conn *nats.Conn
	// Streams is the topology; nil means DefaultStreams(). New creates or
	// updates each stream.
	Streams []Stream
	// DuplicateWindow is every stream's de-duplication window (2m). It must be
	// longer than EngineDedupWindow: the engine re-publishes a dispatch under
	// its first id only that long, trusting the broker to drop the copy.
	DuplicateWindow time.Duration
	// EngineDedupWindow is the engine's Config.DedupWindow
	// (engine.DefaultDedupWindow).
	EngineDedupWindow time.Duration
	// AckWait is how long a delivery may stay unsettled before it is
	// redelivered (10m).
	AckWait time.Duration
	// MaxDeliver ends a message's redeliveries (100); -1 means unlimited.
	MaxDeliver int
	// MaxAckPending caps a consumer's unsettled deliveries (1000), across all
	// members of its queue. It is also the bound on concurrent handlers.
	MaxAckPending int
	// FetchBatch is how many messages a member asks for at a time (64).
	FetchBatch int
	// Logger receives consume errors; nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Streams == nil {
		c.Streams = DefaultStreams()
	}
	c.DuplicateWindow = cmp.Or(c.DuplicateWindow, DefaultDuplicateWindow)
	c.EngineDedupWindow = cmp.Or(c.EngineDedupWindow, engine.DefaultDedupWindow)
	c.AckWait = cmp.Or(c.AckWait, DefaultAckWait)
	c.MaxDeliver = cmp.Or(c.MaxDeliver, DefaultMaxDeliver)
	c.MaxAckPending = cmp.Or(c.MaxAckPending, DefaultMaxAckPending)
	c.FetchBatch = cmp.Or(c.FetchBatch, DefaultFetchBatch)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	return c
}

func (c Config) validate() error {
	switch {
	case c.Conn == nil:
		return errors.New("natsbus: Config.Conn is required")
	case c.DuplicateWindow <= c.EngineDedupWindow:
		return fmt.Errorf("natsbus: duplicate window %s must be longer than the engine's dedup window %s",
			c.DuplicateWindow, c.EngineDedupWindow)
	case len(c.Streams) == 0:
		return errors.New("natsbus: no streams")
	}
	for _, s := range c.Streams {
		if s.Name == "" || len(s.Subjects) == 0 {
			return fmt.Errorf("natsbus: stream %q needs a name and subjects", s.Name)
		}
	}
	return nil
}
