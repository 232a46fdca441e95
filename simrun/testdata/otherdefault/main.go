// Command otherdefault is a build whose default system is not the one under
// test: printed lines must name --system to reproduce.
package main

import (
	"github.com/dispatchsim/dispatchsim/simrun"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

func main() { simrun.Main(outbox.System{}, cordum.System{}) }
