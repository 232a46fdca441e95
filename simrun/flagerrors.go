package simrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagForms say, per flag type, what a value must look like.
var flagForms = map[string]string{
	"int":      "a whole number, like 2",
	"uint64":   "a whole number, like 100",
	"duration": "a duration with its unit, like 90s, 10m or 1h30m",
	"bool":     "true or false",
	"float64":  "a number, like 0.5",
}

// explainFlagError turns a flag parse error into one line that names the
// flag and the form it wants, with a near name for a flag that does not exist.
func explainFlagError(cmd *cobra.Command, err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		f := invalid.GetFlag()
		form := flagForms[f.Value.Type()]
		if form == "" {
			form = "a " + f.Value.Type()
		}
		return usageErrorf("--%s %q: want %s", f.Name, invalid.GetValue(), form)
	}
	var missing *pflag.NotExistError
	if errors.As(err, &missing) {
		name := missing.GetSpecifiedName()
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if near := nearest(name, names); name != "" && near != "" {
			return usageErrorf("unknown flag --%s; did you mean --%s? (%s %s --help lists them)", name, near, progName, cmd.Name())
		}
		return usageErrorf("%v (%s %s --help lists the flags)", err, progName, cmd.Name())
	}
	return usageErrorf("%s", strings.TrimSpace(fmt.Sprint(err)))
}
