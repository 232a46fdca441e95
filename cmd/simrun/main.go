// Command simrun is dispatchsim's command line with the bundled systems:
// cordum (engine/) and outbox (systems/outbox/dispatch). A team builds its
// own the same way, with its own systems (see the simrun package).
package main

import (
	"github.com/dispatchsim/dispatchsim/simrun"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

func main() { simrun.Main(cordum.System{}, outbox.System{}) }
