package engine

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// DispatchCurrent is the worker's side of the job lock's fencing. A scheduler
// paused past its lock's TTL between the DISPATCHED write and the publish can
// still publish once it wakes (no store script can fence a broker), after the
// job's next lock holder moved it on, even to a terminal state. The resource
// that must refuse the stale dispatch is the worker: it runs a packet only if
// the job is not terminal and still at the packet's dispatch generation.
//
// Any non-terminal state passes: after an ambiguous publish the job may be
// rolled back to SCHEDULED while the stored copy is delivered, and that copy is
// the one the broker keeps (the re-publish under the same id is dropped).
// An error means the job is unknown: the worker asks again later.
func DispatchCurrent(ctx context.Context, rdb redis.Cmdable, p JobPacket) (bool, error) {
	vals, err := rdb.HMGet(ctx, jobKey(p.JobID), "state", "dispatch_gen").Result()
	if err != nil {
		return false, fmt.Errorf("read job %s for dispatch check: %w", p.JobID, err)
	}
	state, _ := vals[0].(string)
	if state == "" {
		return false, nil // no such job: nothing to run
	}
	gen := 0
	if s, ok := vals[1].(string); ok {
		if gen, err = strconv.Atoi(s); err != nil {
			return false, fmt.Errorf("read job %s for dispatch check: dispatch_gen %q: %w", p.JobID, s, err)
		}
	}
	return !JobState(state).Terminal() && gen == p.DispatchGen, nil
}
