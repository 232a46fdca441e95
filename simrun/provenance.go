package simrun

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dispatchsim/dispatchsim/reports"
)

// commitFlag is the root's --commit: the commit to record when the binary
// carries no VCS information (go test binaries, builds outside a checkout).
var commitFlag string

// provenance says which build this is: the commit and dirty flag Go stamped
// into the binary, else --commit, else GITHUB_SHA (a CI checkout), else the
// checkout of this module the command runs in (go run, go test, or a build
// with -buildvcs=false).
func provenance() reports.Provenance {
	p := reports.Provenance{Version: version, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		p.GoVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				p.Commit, p.CommitSource = s.Value, "vcs"
			case "vcs.modified":
				p.Dirty = s.Value == "true"
			}
		}
	}
	switch {
	case p.Commit != "":
	case commitFlag != "":
		p.Commit, p.CommitSource = commitFlag, "--commit"
	case os.Getenv("GITHUB_SHA") != "":
		p.Commit, p.CommitSource = os.Getenv("GITHUB_SHA"), "GITHUB_SHA"
	default:
		p.Commit, p.Dirty = checkoutCommit()
		if p.Commit != "" {
			p.CommitSource = "git checkout"
		}
	}
	return p
}

// checkoutCommit is the commit of the checkout of this module that holds the
// working directory, if any, and whether it has uncommitted changes.
func checkoutCommit() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if modfile := string(b); !strings.HasPrefix(strings.TrimSpace(modfile), "module "+modulePath) {
				return "", false
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(head)), err == nil && len(bytes.TrimSpace(status)) > 0
}

const modulePath = "github.com/dispatchsim/dispatchsim"
