// Command defects is the simrun command line with the dispatcher and each
// of its planted defects registered (--system streamqueue-<defect>): CI
// shows with it that the release gate fails each defect.
package main

import (
	"github.com/dispatchsim/dispatchsim/examples/streamqueue/streamqueue"
	"github.com/dispatchsim/dispatchsim/simrun"
)

func main() {
	simrun.Main(streamqueue.System{}, streamqueue.System{Defect: streamqueue.AckOnPull},
		streamqueue.System{Defect: streamqueue.ReapIgnoresLease}, streamqueue.System{Defect: streamqueue.TerminalOverwrite},
		streamqueue.System{Defect: streamqueue.DeadLetterHidesCause})
}
