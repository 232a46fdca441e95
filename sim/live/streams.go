package live

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dispatchsim/dispatchsim/sut"
)

// openStream is a stream of the topology that JetStream cannot hold as
// written: a subject that starts with a wildcard (the one stream for every
// subject, ">", of a system that declares no streams) would take in
// JetStream's own API subjects, which the server refuses. It holds instead
// each subject the run publishes to or consumes from, added as the run
// first uses it; the stream is created with the first.
type openStream struct {
	config  jetstream.StreamConfig
	created bool
}

// isOpen reports whether a stream subject starts with a wildcard.
func isOpen(subject string) bool {
	first, _, _ := strings.Cut(subject, ".")
	return first == "*" || first == ">"
}

// splitOpen returns s with its open subjects taken out, and whether it had
// any.
func splitOpen(s sut.Stream) (closed []string, open bool) {
	for _, subj := range s.Subjects {
		if isOpen(subj) {
			open = true
		} else {
			closed = append(closed, subj)
		}
	}
	return closed, open
}

// hold makes sure the server's stream for subject, if it is an open one,
// holds it: the first stream of the topology that holds the subject is its
// stream, as in the simulated bus.
func (b *Broker) hold(ctx context.Context, subject string) error {
	for _, s := range b.cfg.Streams {
		if !s.Holds(subject) {
			continue
		}
		o := b.open[s.Name]
		if o == nil || slices.ContainsFunc(o.config.Subjects, func(p string) bool { return sut.SubjectMatches(p, subject) }) {
			return nil
		}
		// A pattern takes the place of the subjects it covers: JetStream
		// refuses overlapping subjects in one stream.
		o.config.Subjects = slices.DeleteFunc(o.config.Subjects, func(p string) bool { return sut.SubjectMatches(subject, p) })
		o.config.Subjects = append(o.config.Subjects, subject)
		var err error
		if o.created {
			_, err = b.js.UpdateStream(ctx, o.config)
		} else {
			_, err = b.js.CreateStream(ctx, o.config)
		}
		if err != nil {
			return fmt.Errorf("nats: stream %s: hold %s: %w", s.Name, subject, err)
		}
		o.created = true
		return nil
	}
	return nil // no stream holds it: a publish fails, as it would
}
