// Command streamqueue is the simrun command line with the Redis Streams
// dispatcher registered: the release gate its team runs on it.
package main

import (
	"github.com/dispatchsim/dispatchsim/examples/streamqueue/streamqueue"
	"github.com/dispatchsim/dispatchsim/simrun"
)

func main() { simrun.Main(streamqueue.System{}) }
