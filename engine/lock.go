package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lock scripts. Release and renewal compare the token first, so a handler whose
// lock expired can never delete or extend the lock another handler now holds
// (older Cordum released locks without a token).
var (
	releaseLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
	renewLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
)

// lockSpec is how one kind of lock is taken.
type lockSpec struct {
	TTL  time.Duration // expiry of the key
	Poll time.Duration // wait between attempts while the lock is busy
	Wait time.Duration // give up after this long: ErrLockBusy
}

// locker takes token-guarded Redis locks (SET NX PX).
type locker struct {
	rdb   redis.UniversalClient
	clock Clock
	rand  Random
}

// newToken returns a 128-bit random hex token.
func newToken(r Random) string {
	return fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())
}

// heldLock is a lock this process holds, until it expires or is released.
type heldLock struct {
	key   string
	token string
}

// acquire polls SET NX PX until it wins or spec.Wait has passed (ErrLockBusy).
// Any Redis error ends the attempt: its outcome is unknown, and the caller retries.
func (l *locker) acquire(ctx context.Context, key string, spec lockSpec) (*heldLock, error) {
	token := newToken(l.rand)
	deadline := l.clock.Now().Add(spec.Wait)
	for {
		ok, err := l.rdb.SetNX(ctx, key, token, spec.TTL).Result()
		if err != nil {
			// The SET may have applied with its reply lost: delete our token if it
			// is there, best effort, so the key does not sit until its TTL.
			_ = releaseLockScript.Run(ctx, l.rdb, []string{key}, token).Err()
			return nil, fmt.Errorf("acquire lock %s: %w", key, err)
		}
		if ok {
			return &heldLock{key: key, token: token}, nil
		}
		if !l.clock.Now().Before(deadline) {
			return nil, fmt.Errorf("acquire lock %s: %w", key, ErrLockBusy)
		}
		if err := l.clock.Sleep(ctx, spec.Poll); err != nil {
			return nil, fmt.Errorf("acquire lock %s: %w", key, err)
		}
	}
}

// release deletes the lock if it still carries our token.
func (l *locker) release(ctx context.Context, h *heldLock) error {
	if err := releaseLockScript.Run(ctx, l.rdb, []string{h.key}, h.token).Err(); err != nil {
		return fmt.Errorf("release lock %s: %w", h.key, err)
	}
	return nil
}

// renew extends the lock if it still carries our token. held is false when the
// lock expired or another holder took it.
func (l *locker) renew(ctx context.Context, h *heldLock, ttl time.Duration) (held bool, err error) {
	n, err := renewLockScript.Run(ctx, l.rdb, []string{h.key}, h.token, strconv.FormatInt(ttl.Milliseconds(), 10)).Int64()
	if err != nil {
		return false, fmt.Errorf("renew lock %s: %w", h.key, err)
	}
	return n == 1, nil
}

// renewedLock keeps a held lock alive with clock timers every TTL/3 while a
// critical section runs. After maxFailures failed renewals in a row, or as soon as
// the lock is seen lost, it cancels the critical section's context: the section's
// store writes are fenced from then on (they check the context and the token).
type renewedLock struct {
	l           *locker
	held        *heldLock
	ttl         time.Duration
	maxFailures int
	cancel      context.CancelCauseFunc
	onAbandon   func()

	mu       sync.Mutex // renewals run concurrently with the section in production
	timer    Timer
	failures int
	done     bool
}

func (r *renewedLock) schedule() {
	r.timer = r.l.clock.AfterFunc(r.ttl/3, r.renewOnce)
}

func (r *renewedLock) renewOnce(ctx context.Context) {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()

	held, err := r.l.renew(ctx, r.held, r.ttl)

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	switch {
	case err == nil && held:
		r.failures = 0
	case err == nil && !held:
		r.abandonLocked(fmt.Errorf("%w: %s expired or taken over", ErrLockLost, r.held.key))
		return
	default:
		r.failures++
		if r.failures >= r.maxFailures {
			r.abandonLocked(fmt.Errorf("%w: %d renewals of %s failed: %v", ErrLockLost, r.failures, r.held.key, err))
			return
		}
	}
	r.schedule()
}

func (r *renewedLock) abandonLocked(cause error) {
	r.done = true
	r.cancel(cause)
	if r.onAbandon != nil {
		r.onAbandon()
	}
}

// stop ends renewal; it reports whether the lock was still ours (not abandoned).
func (r *renewedLock) stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	wasHeld := !r.done
	r.done = true
	if r.timer != nil {
		r.timer.Stop()
	}
	return wasHeld
}

// fenceErr returns the reason the section's lock was lost, or nil while it holds.
func fenceErr(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrLockLost) {
		return cause
	}
	return ctx.Err()
}
