package kernel

import (
	"context"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
)

// Clock is a group's view of virtual time, implementing sut.Clock. Skew
// shifts what Now reports (a replica whose clock runs ahead); durations are
// unaffected.
type Clock struct {
	k      *Kernel
	group  string
	skew   time.Duration
	timers int
}

var _ sut.Clock = (*Clock)(nil)

// NewClock returns the clock of a group.
func (k *Kernel) NewClock(group string, skew time.Duration) *Clock {
	return &Clock{k: k, group: group, skew: skew}
}

// Now returns the group's virtual time.
func (c *Clock) Now() time.Time { return c.k.epoch.Add(c.k.now + c.skew) }

// Sleep parks the calling actor for d of virtual time. A context cancelled
// meanwhile is reported when the sleep ends.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	a := c.k.Current(ctx, "clock sleep")
	if err := ctx.Err(); err != nil {
		return err
	}
	c.k.Tracef(a.name, "sleep %s", d)
	a.SleepUntil(c.k.now + d)
	return ctx.Err()
}

// AfterFunc runs f as a new actor of the clock's group after d.
func (c *Clock) AfterFunc(d time.Duration, f func(ctx context.Context)) sut.Timer {
	c.timers++
	name := fmt.Sprintf("timer#%d", c.timers)
	k := c.k
	t := k.addTimer(k.now+d, k.Group(c.group), AlarmFunc(func() {
		a := k.Spawn(c.group, name, f)
		k.Tracef(a.name, "timer fired")
	}))
	return simTimer{t}
}

type simTimer struct{ t *timer }

func (s simTimer) Stop() bool {
	was := !s.t.stopped
	s.t.stopped = true
	return was
}
