package sut

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// ParseStoreCommand takes a command apart as go-redis sends it (args[0] the
// command's name): for EVALSHA sha numkeys KEYS... ARGV... (or EVAL with the
// source, and their read-only forms EVALSHA_RO and EVAL_RO) the keys and
// arguments separate and the script named by bySHA, which maps a script's
// SHA1 to its name (ScriptsBySHA); for a plain command, its first argument
// as its key.
func ParseStoreCommand(args []any, bySHA map[string]string) StoreCommand {
	if len(args) == 0 {
		return StoreCommand{}
	}
	c := StoreCommand{Name: strings.ToLower(argString(args[0]))}
	if !IsScriptCommand(c.Name) {
		if len(args) > 1 {
			c.Keys = []string{argString(args[1])}
			c.Args = argStrings(args[2:])
		}
		return c
	}
	if len(args) < 3 {
		return c
	}
	sha := argString(args[1])
	if SendsScriptSource(c.Name) {
		sum := sha1.Sum([]byte(sha))
		sha = hex.EncodeToString(sum[:])
	}
	c.Script = bySHA[sha]
	n, err := strconv.Atoi(argString(args[2]))
	if err != nil || n < 0 || 3+n > len(args) {
		c.Args = argStrings(args[3:])
		return c
	}
	c.Keys = argStrings(args[3 : 3+n])
	c.Args = argStrings(args[3+n:])
	return c
}

// IsScriptCommand reports whether a command (lower case) runs a Lua script:
// EVALSHA, EVAL, EVALSHA_RO or EVAL_RO.
func IsScriptCommand(name string) bool {
	switch name {
	case "evalsha", "eval", "evalsha_ro", "eval_ro":
		return true
	}
	return false
}

// SendsScriptSource reports whether a script command carries the script's
// source rather than its SHA1: EVAL and EVAL_RO.
func SendsScriptSource(name string) bool { return name == "eval" || name == "eval_ro" }

// ScriptsBySHA inverts o.Scripts: a script's SHA1 to its name.
func ScriptsBySHA(o Observer) map[string]string {
	out := map[string]string{}
	for name, sha := range o.Scripts() {
		out[sha] = name
	}
	return out
}

func argStrings(args []any) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = argString(a)
	}
	return out
}

func argString(a any) string {
	if s, ok := a.(string); ok {
		return s
	}
	return fmt.Sprint(a)
}
