package kernel

import (
	"fmt"
	"strconv"
	"strings"
)

// Branch names a continuation of a seed: the run is the seed's own up to
// step Step, and from there every stream the seed drives is reseeded for
// branch number N (SeedTree.Fork). N == 0 is the seed itself, at any step:
// (scenario, seed, Step, N, Focus) is a replay key.
type Branch struct {
	Step uint64 `json:"step"`
	N    uint64 `json:"n"`
	// Focus, if set, is a job the branch's fault draws favour: the job the
	// moment it forks at touched, so that a second rare event on that job,
	// which a defect may need right after the first, is likelier.
	Focus string `json:"focus,omitempty"`
}

// IsZero reports whether b is the seed itself.
func (b Branch) IsZero() bool { return b.N == 0 }

// String is the key as the CLI takes it: "K/B", or "K/B@job" with a focus
// ("" for the seed itself).
func (b Branch) String() string {
	if b.IsZero() {
		return ""
	}
	if b.Focus != "" {
		return fmt.Sprintf("%d/%d@%s", b.Step, b.N, b.Focus)
	}
	return fmt.Sprintf("%d/%d", b.Step, b.N)
}

// ParseBranch reads "K/B" or "K/B@job": branch B (1 or more) from step K,
// its faults favouring job if given. "K/0" is the seed itself and parses to
// the zero Branch.
func ParseBranch(s string) (Branch, error) {
	key, focus, focused := strings.Cut(strings.TrimSpace(s), "@")
	k, n, ok := strings.Cut(key, "/")
	step, err1 := strconv.ParseUint(k, 10, 64)
	num, err2 := strconv.ParseUint(n, 10, 64)
	if !ok || err1 != nil || err2 != nil || focused && focus == "" {
		return Branch{}, fmt.Errorf("branch %q: want K/B, the step and the branch number (e.g. 1200/3), "+
			"or K/B@job to favour a job's faults", s)
	}
	if num == 0 {
		return Branch{}, nil
	}
	return Branch{Step: step, N: num, Focus: focus}, nil
}
