// Package simrun is the simrun command line as a library: a team gates its
// own dispatcher from its own module with a main of three lines,
//
//	func main() { simrun.Main(mine.System{}) }
//
// and gets every command (run, replay, shrink, report, compare, explore,
// check) for the systems it registers. simrun runs scenario suites, replays
// and shrinks a failing seed, and writes the outputs a CI gate and an
// engineer read: summary.json, JUnit XML and self-contained HTML reports.
//
// Exit codes: 0 pass, 1 safety violation, 2 usage error, 3 liveness
// violation, 4 linearizability inconclusive, 5 non-deterministic replay,
// 6 incomplete (seeds not run: a budget, a dead worker, a missing shard),
// 7 a harness fault (the simulator itself broke on a seed), 130 and 143
// interrupted by SIGINT and SIGTERM.
package simrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dispatchsim/dispatchsim/sut"
)

// version names the build in reports; release builds set it with
// -ldflags "-X github.com/dispatchsim/dispatchsim/simrun.version=<tag>".
var version = "dev"

// Exit codes.
const (
	exitPass             = 0
	exitSafety           = 1
	exitUsage            = 2
	exitLiveness         = 3
	exitInconclusive     = 4
	exitNondeterministic = 5
)

// exitError carries an exit code up to main; err, if set, is printed as one line.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// usageErrorf is a bad input: one line on stderr, exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// exitWith ends a command with code and no further message.
func exitWith(code int) error {
	if code == exitPass {
		return nil
	}
	return &exitError{code: code}
}

// Main runs the command line on os.Args with systems registered, the first
// the default of --system, and exits with the command's code. It tunes the
// runtime for the simulator first (see below); it never returns.
func Main(systems ...sut.System) {
	// The kernel runs one actor at a time and passes a baton between
	// goroutines; on more than one P every pass wakes another thread. One P
	// measured 8.0 seeds/s against 4.4 on two (release suite, 2 cores);
	// parallelism comes from worker processes (-j). An explicit GOMAXPROCS wins.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// A seed's live heap is a few MB of short-lived garbage (miniredis Lua
	// states, trace lines); collecting at 4x instead of 2x measured 9.5 against
	// 7.0 seeds/s with -j 1 (17.9 against 12.6 with -j 2) for 47 MB of peak RSS
	// instead of 28. An explicit GOGC wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// Printed lines name the program as it was invoked, so a team's own
	// binary prints lines that paste into it.
	if len(os.Args) > 0 && os.Args[0] != "" {
		progName = programName(os.Args[0])
	}
	code := Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, systems...)
	if code > exitSafety && code != exitUsage && strings.HasPrefix(progName, "go run ") {
		fmt.Fprintf(os.Stderr, "simrun: note: go run ends every failing program with exit 1; this verdict's code is %d "+
			"(build the program with go build for a CI gate that reads it)\n", code)
	}
	os.Exit(code)
}

// programName is how printed lines name a program started as arg0: its
// base name, or, for a binary go run built in its temporary folder (which is
// gone, and on no PATH), the go run command that builds it again.
func programName(arg0 string) string {
	dir := filepath.ToSlash(filepath.Dir(arg0))
	if path.Base(dir) != "exe" || !strings.Contains(dir, "/go-build") {
		return filepath.Base(arg0)
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" && bi.Path != "command-line-arguments" {
		return "go run " + bi.Path
	}
	return "go run ."
}

// Run executes one command line with systems registered and returns its exit
// code, for a caller that exits itself or tests the command line in-process.
// Without systems it is a usage error.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, systems ...sut.System) int {
	if err := register(systems); err != nil {
		fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
		return exitUsage
	}
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "simrun: "+oneLine(ee.err.Error()))
		}
		return ee.code
	}
	// Cobra's own errors: unknown command or flag, bad flag value, bad arguments.
	fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
	return exitUsage
}

// rejectEmptyValues refuses a flag given an empty value (--scenario ""): a
// CI variable that came out empty must not quietly run the default.
func rejectEmptyValues(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && f.Value.Type() == "string" && f.Value.String() == "" {
			err = usageErrorf("--%s: empty value", f.Name)
		}
	})
	return err
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           strings.TrimPrefix(progName, "go run "),
		Short:         "Deterministic simulation and fault injection for job dispatch engines",
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().StringVar(&commitFlag, "commit", "",
		"commit to record in outputs when the binary carries no VCS information (default: $GITHUB_SHA)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return rejectEmptyValues(cmd) }
	root.SetFlagErrorFunc(explainFlagError)
	root.AddCommand(newListCmd(), newRunCmd(), newReplayCmd(), newShrinkCmd(), newReportCmd(), newWorkerCmd(), newCompareCmd(),
		newMutantsCmd(),
		newExploreCmd(), newCheckCmd(), newLikelihoodCmd())
	return root
}
