package rpcserve

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
)

// TestProtocolLayerKnowsNoStorage keeps the protocol layer, and the
// simulator that speaks through it, free of the archive's storage: neither
// links the store or pgx, and rpcserve does not link the contract runtime.
func TestProtocolLayerKnowsNoStorage(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH")
	root := fixture.Root()

	storage := []string{"github.com/nearline/nearline/store", "github.com/jackc/pgx"}
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"./rpcserve", append(storage, "github.com/nearline/nearline/nearvm")},
		{"./sim", storage},
	} {
		cmd := exec.Command(goTool, "list", "-deps", c.pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "go list -deps %s: %s", c.pkg, stderr)
		deps := strings.Fields(string(out))
		require.NotEmpty(t, deps)
		for _, dep := range deps {
			for _, bad := range c.forbidden {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s depends on %s", c.pkg, dep)
				}
			}
		}
	}
}
