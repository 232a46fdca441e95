package kernel

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ParseSeed reads a root seed: decimal, 0x-hex, or a 40-hex git commit id (its
// first 16 hex digits), so a CI run can seed itself from the commit under test.
func ParseSeed(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, fmt.Errorf("seed is empty")
	case len(s) == 40 && isHex(s):
		v, err := strconv.ParseUint(s[:16], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("seed %q: %v", s, err)
		}
		return v, nil
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("seed %q is not valid hex (want 0x followed by at most 16 hex digits)", s)
		}
		return v, nil
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("seed %q is not a decimal number, 0x-hex or a 40-hex commit id", s)
		}
		return v, nil
	}
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// SeedTree derives an independent PRNG per component from one root seed, so an
// extra draw in one component never shifts another's sequence.
type SeedTree struct {
	Root uint64
}

// Child returns the PRNG of the named component (PCG seeded by root and the
// name's FNV-64 hash).
func (t SeedTree) Child(name string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(t.Root, h.Sum64()))
}
