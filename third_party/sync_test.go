// Package thirdparty holds patched copies of dependencies, each produced from
// its pristine upstream release and a patch file by a script.
package thirdparty

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestMiniredisInSync rebuilds the miniredis copy from upstream and the patch
// and requires third_party/miniredis to be exactly that: an edit made to the
// copy instead of to miniredis.patch fails here.
func TestMiniredisInSync(t *testing.T) {
	script, err := os.ReadFile("miniredis.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^version=v\S+`).Match(script) {
		t.Fatal("miniredis.sh names no pinned version")
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// Importers never see this module's replace directives: the copy must be
	// reached by its own path, never by replacing upstream's.
	if bytes.Contains(gomod, []byte("github.com/alicebob/miniredis/v2")) {
		t.Errorf("go.mod names upstream miniredis: import the copy as github.com/dispatchsim/dispatchsim/third_party/miniredis")
	}

	fresh := filepath.Join(t.TempDir(), "miniredis")
	cmd := exec.Command("bash", "miniredis.sh", fresh)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("miniredis.sh: %v\n%s", err, out)
	}
	want, got := readTree(t, fresh), readTree(t, "miniredis")
	for name, body := range want {
		switch have, ok := got[name]; {
		case !ok:
			t.Errorf("third_party/miniredis/%s is missing", name)
		case !bytes.Equal(have, body):
			t.Errorf("third_party/miniredis/%s differs from upstream + miniredis.patch", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("third_party/miniredis/%s is not in upstream + miniredis.patch", name)
		}
	}
	if t.Failed() {
		t.Log("rebuild with third_party/miniredis.sh; change miniredis.patch, never the copy")
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = body
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
