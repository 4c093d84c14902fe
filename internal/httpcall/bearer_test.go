package httpcall_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall"
)

// TestSetBearerSetsTheHeaderOnlyWithAToken: a token becomes
// "Authorization: Bearer TOKEN"; none leaves the request without the
// header.
func TestSetBearerSetsTheHeaderOnlyWithAToken(t *testing.T) {
	t.Parallel()
	req, err := httpcall.Get(t.Context(), "http://host/v0/block/5")
	require.NoError(t, err)
	httpcall.SetBearer(req, "")
	require.NotContains(t, req.Header, "Authorization")
	httpcall.SetBearer(req, "K3Y-1.a_b~c+d/e=")
	require.Equal(t, "Bearer K3Y-1.a_b~c+d/e=", req.Header.Get("Authorization"))
}

// TestCheckBearerRefusesWhatNoHeaderHoldsWithoutShowingIt.
func TestCheckBearerRefusesWhatNoHeaderHoldsWithoutShowingIt(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "K3Y", "a-b.c_d~e+f/g=="} {
		require.NoError(t, httpcall.CheckBearer(ok), ok)
	}
	for _, bad := range []string{"s3cr3t key", "s3cr3t\n", "s3cr3t\r\nX-Other: 1", "s3cr3t\x00", "s3cr3té", "\ts3cr3t"} {
		err := httpcall.CheckBearer(bad)
		require.ErrorIs(t, err, httpcall.ErrBadBearer, "%q", bad)
		require.NotContains(t, err.Error(), "s3cr3t")
	}
}
