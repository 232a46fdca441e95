package reports

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Run is one seed's run as reports read it: plain data the caller hands
// over, so reports never depend on how runs are made.
type Run struct {
	// System names the system under test ("" is the default, cordum).
	System string
	// Spec is the system's spec as the run held it to its promises: the
	// pages colour and name states by their roles in it (nil: every state
	// is drawn as "other", under its own name).
	Spec     *sut.Spec
	Scenario string
	Seed     uint64
	Checksum uint64
	Steps    uint64
	Result   *checker.Result
	History  *history.History
	Plan     history.Plan
	Fired    map[string]int
	Branches map[string]int
	// Wall is the run's wall time, Check the checker's share of it.
	Wall, Check time.Duration
	// Trace is the decision log, when the run kept it.
	Trace []byte
	// Replay is the one command that reproduces the seed.
	Replay string
	// Branch ("K/B") and Strategy name the run's variant of the seed ("":
	// the seed itself, the uniform pick).
	Branch, Strategy string
}
