package kernel

import (
	"encoding/binary"
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
// extra draw in one component never shifts another's sequence. A tree made by
// NewSeedTree also keeps every stream it hands out, so Fork can reseed them
// all for a branch.
type SeedTree struct {
	Root    uint64
	streams *streams // nil: the children are not kept (a draw before any run)
}

// streams are a tree's children so far and the branch they are drawn for.
type streams struct {
	branch Branch
	pcgs   []namedPCG
}

type namedPCG struct {
	name string
	pcg  *rand.PCG
}

// NewSeedTree returns a tree that keeps its children, for Fork.
func NewSeedTree(root uint64) SeedTree { return SeedTree{Root: root, streams: &streams{}} }

// Child returns the PRNG of the named component (PCG seeded by root and the
// name's FNV-64 hash; after Fork, by root and the hash of the name and the
// branch).
func (t SeedTree) Child(name string) *rand.Rand {
	var b Branch
	if t.streams != nil {
		b = t.streams.branch
	}
	pcg := rand.NewPCG(StreamSeed(t.Root, name, b))
	if t.streams != nil {
		t.streams.pcgs = append(t.streams.pcgs, namedPCG{name, pcg})
	}
	return rand.New(pcg)
}

// Fork reseeds every stream the tree handed out for branch b, in place, and
// draws every later one for it too: a component keeps its *rand.Rand and
// draws the branch's numbers from then on.
func (t SeedTree) Fork(b Branch) {
	if t.streams == nil {
		panic("kernel: Fork of a SeedTree that keeps no streams (use NewSeedTree)")
	}
	t.streams.branch = b
	for _, s := range t.streams.pcgs {
		s.pcg.Seed(StreamSeed(t.Root, s.name, b))
	}
}

// StreamSeed is the PCG seed of a named stream: (root, FNV-64 of the name)
// for the seed itself (b.N == 0), and (root, FNV-64 of the name, "@", the
// branch's step and number as little-endian uint64s) for a branch, so every
// (seed, step, branch) draws streams of its own.
func StreamSeed(root uint64, name string, b Branch) (uint64, uint64) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	if b.N != 0 {
		var key [17]byte
		key[0] = '@'
		binary.LittleEndian.PutUint64(key[1:9], b.Step)
		binary.LittleEndian.PutUint64(key[9:], b.N)
		_, _ = h.Write(key[:])
	}
	return root, h.Sum64()
}
