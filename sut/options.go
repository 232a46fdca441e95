package sut

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Options are the settings a world runs a system with, as data so a run can
// print and compare them. Zero values mean the system's defaults.
type Options struct {
	DispatchTimeout time.Duration
	// DispatchTimeoutByTopic overrides DispatchTimeout for a topic; an entry
	// of zero or less means the global one.
	DispatchTimeoutByTopic map[string]time.Duration
	RunningTimeout         time.Duration
	ReconcileInterval      time.Duration
	MaxSchedulingRetries   int
	// DedupWindow is how long after a dispatch's first publish the engine
	// may re-publish it under the same message id; it must stay below the
	// broker's window. LockTTL is the job lock's expiry.
	DedupWindow, LockTTL time.Duration
	// RunLimit is an org's max concurrent workflow runs.
	RunLimit int
	Routing  Routing
	// TenantMaxActive caps how many of a tenant's jobs may be in flight
	// (dispatched or running) at once; a tenant it does not name has no cap.
	TenantMaxActive map[string]int `json:",omitempty"`
}

// Routing maps topics to pools and pools to the capabilities they need.
type Routing struct {
	Topics map[string][]string `json:",omitempty"`
	// Pools maps a pool to the capabilities a job needs to be sent there.
	Pools map[string][]string `json:",omitempty"`
}

// Eligible reports whether the topic maps to any pool, and which of its
// pools offer every capability in requires (a pool that offers none takes
// only jobs that require none).
func (r Routing) Eligible(topic string, requires []string) (mapped bool, pools []string) {
	for _, p := range r.Topics[topic] {
		mapped = true
		offered, ok := r.Pools[p]
		if ok && offers(offered, requires) {
			pools = append(pools, p)
		}
	}
	return mapped, pools
}

func offers(offered, required []string) bool {
	for _, need := range required {
		found := false
		for _, o := range offered {
			found = found || strings.EqualFold(o, need)
		}
		if !found {
			return false
		}
	}
	return true
}

// Clone copies r so a change to the copy leaves r alone.
func (r Routing) Clone() Routing {
	out := Routing{Topics: map[string][]string{}, Pools: map[string][]string{}}
	for t, p := range r.Topics {
		out.Topics[t] = append([]string(nil), p...)
	}
	for p, req := range r.Pools {
		out.Pools[p] = append([]string(nil), req...)
	}
	return out
}

// String prints every option, zero values as "default", routing sorted.
func (o Options) String() string {
	dur := func(d time.Duration) string {
		if d == 0 {
			return "default"
		}
		return d.String()
	}
	num := func(n int) string {
		if n == 0 {
			return "default"
		}
		return strconv.Itoa(n)
	}
	var topics []string
	for t, pools := range o.Routing.Topics {
		topics = append(topics, t+"->"+strings.Join(pools, "|"))
	}
	sort.Strings(topics)
	var pools []string
	for p, req := range o.Routing.Pools {
		pools = append(pools, p+"["+strings.Join(req, ",")+"]")
	}
	sort.Strings(pools)
	out := fmt.Sprintf("dispatch_timeout=%s running_timeout=%s reconcile_interval=%s max_scheduling_retries=%s "+
		"dedup_window=%s lock_ttl=%s run_limit=%s topics=%s pools=%s", dur(o.DispatchTimeout), dur(o.RunningTimeout), dur(o.ReconcileInterval),
		num(o.MaxSchedulingRetries), dur(o.DedupWindow), dur(o.LockTTL), num(o.RunLimit), strings.Join(topics, " "), strings.Join(pools, " "))
	if len(o.DispatchTimeoutByTopic) > 0 {
		var byTopic []string
		for t, d := range o.DispatchTimeoutByTopic {
			byTopic = append(byTopic, t+":"+d.String())
		}
		sort.Strings(byTopic)
		out += " dispatch_timeout_by_topic=" + strings.Join(byTopic, ",")
	}
	if len(o.TenantMaxActive) > 0 {
		var caps []string
		for t, n := range o.TenantMaxActive {
			caps = append(caps, t+":"+strconv.Itoa(n))
		}
		sort.Strings(caps)
		out += " tenant_max_active=" + strings.Join(caps, ",")
	}
	return out
}
