//go:build e2e

package scale

import (
	"os"
	"testing"

	"github.com/nearline/nearline/internal/e2ekit"
)

// binary is the nearline binary built once for the package's tests.
var binary e2ekit.Binary

func TestMain(m *testing.M) { os.Exit(e2ekit.Main(m, &binary)) }
