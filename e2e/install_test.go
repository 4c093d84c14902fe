//go:build e2e

package e2e

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoInstallLatestPrintsTheVersion runs the README's
// `go install github.com/nearline/nearline/cmd/nearline@latest` against a
// module proxy of the checkout's tracked files published as v0.0.1 (a
// file:// GOPROXY, the dependencies from the module cache): the
// module installs in module mode (no replace directive, every embedded
// file tracked) and the binary prints that version.
func TestGoInstallLatestPrintsTheVersion(t *testing.T) {
	t.Parallel()
	const module, version = "github.com/nearline/nearline", "v0.0.1"
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	top := strings.TrimSpace(string(root))
	readme, err := os.ReadFile(filepath.Join(top, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if cmd := "go install " + module + "/cmd/nearline@latest"; !strings.Contains(string(readme), cmd) {
		t.Fatalf("README.md does not say %q", cmd)
	}
	files, err := exec.Command("git", "-C", top, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for _, name := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(top, name))
		if err != nil {
			t.Fatal(err) // a tracked file deleted in the work tree
		}
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(top, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-11-29T00:00:00Z"}`,
		version + ".mod":  string(mod),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The dependencies come from the module cache's download directory,
	// itself a proxy: offline, and the module cache is left alone.
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	downloads := filepath.Join(strings.TrimSpace(string(cache)), "cache", "download")
	bin := t.TempDir()
	install := exec.Command("go", "install", module+"/cmd/nearline@latest")
	install.Dir = t.TempDir() // outside the checkout: module mode, as for a user
	install.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-modcacherw", "GOSUMDB=off", "GOWORK=off",
		"GOTOOLCHAIN=local", "GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(downloads),
		"GOMODCACHE="+t.TempDir())
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/nearline@latest: %v\n%s", module, err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "nearline"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("nearline version: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "nearline "+version {
		t.Fatalf("nearline version printed %q, want %q first", out, "nearline "+version)
	}
	t.Logf("go install …@latest, then nearline version:\n%s", out)
}
