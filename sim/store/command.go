package store

import "github.com/dispatchsim/dispatchsim/sut"

// command takes a go-redis command apart for the observer (sut.StoreCommand).
func (s *Store) command(name string, args []any) sut.StoreCommand {
	if s.scripts == nil {
		s.scripts = sut.ScriptsBySHA(s.obs)
	}
	c := sut.ParseStoreCommand(args, s.scripts)
	c.Name = name
	return c
}
