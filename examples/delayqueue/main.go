// Command delayqueue is the simrun command line with the delay queue
// registered: the release gate an outside team runs on its own dispatcher.
package main

import (
	"github.com/dispatchsim/dispatchsim/examples/delayqueue/delayqueue"
	"github.com/dispatchsim/dispatchsim/simrun"
)

func main() { simrun.Main(delayqueue.System{}) }
