package store

import "github.com/dispatchsim/dispatchsim/sut"

// command takes a go-redis command apart for the observer (sut.StoreCommand).
// One command is asked about up to four times (its fault point, its run key
// and org, its record), so the last one taken apart is kept: the kept
// arguments stay referenced, so the same backing array means the same
// command, which go-redis never changes once built.
func (s *Store) command(name string, args []any) sut.StoreCommand {
	if s.scripts == nil {
		s.scripts = sut.ScriptsBySHA(s.obs)
	}
	if len(args) > 0 && len(args) == len(s.parsedArgs) && &args[0] == &s.parsedArgs[0] && name == s.parsed.Name {
		return s.parsed
	}
	c := sut.ParseStoreCommand(args, s.scripts)
	c.Name = name
	s.parsedArgs, s.parsed = args, c
	return c
}
