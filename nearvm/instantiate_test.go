package nearvm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
)

// TestFixturesInstantiate compiles and instantiates every fixture contract
// and checks its exports and imports against its descriptor.
func TestFixturesInstantiate(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	ctx := context.Background()
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			e, err := r.contract(ctx, f.Code, f.CodeHash)
			require.NoError(t, err)
			defer r.cache.release(ctx, e)
			require.Nil(t, e.compileErr)
			require.Nil(t, e.linkErr)
			for _, exp := range f.Exports {
				require.Contains(t, e.exports, exp)
			}
			s := newCallState(r.cfg, viewCtx("c.near", nil), newMemStorage())
			mod, err := r.wasm.InstantiateModule(context.WithValue(ctx, stateKey{}, s), e.compiled,
				wazero.NewModuleConfig().WithName("").WithStartFunctions())
			require.NoError(t, err)
			require.NotNil(t, mod.Memory(), "contract memory")
			require.NotNil(t, mod.ExportedGlobal(gasGlobalExport))
			require.NoError(t, mod.Close(ctx))
		})
	}
}
