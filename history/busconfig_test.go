package history

import (
	"testing"

	"github.com/dispatchsim/dispatchsim/sut"
)

func TestStreamOfFollowsTheTopology(t *testing.T) {
	declared := BusConfig{Streams: []sut.Stream{{Name: "JOBS", Subjects: []string{"worker.*.jobs"}},
		{Name: "SCHED", Subjects: []string{"sys.job.submit"}}}}
	for _, c := range []struct {
		cfg           BusConfig
		subject, want string
	}{
		{declared, "worker.a.jobs", "JOBS"},
		{declared, "worker.b.jobs", "JOBS"},
		{declared, "sys.job.submit", "SCHED"},
		{declared, "sys.job.result", ""},
		{BusConfig{}, "anything.at.all", "ALL"},
		{BusConfig{Streams: declared.Streams, SplitStreams: true}, "worker.a.jobs", "JOBS/worker.a.jobs"},
		{BusConfig{SplitStreams: true}, "x.y", "ALL/x.y"},
	} {
		if got := c.cfg.StreamOf(c.subject); got != c.want {
			t.Errorf("StreamOf(%q) under %s = %q, want %q", c.subject, c.cfg.Topology(), got, c.want)
		}
	}
	if got, want := declared.Topology(), "JOBS[worker.*.jobs] SCHED[sys.job.submit]"; got != want {
		t.Errorf("Topology() = %q, want %q", got, want)
	}
}
