package archive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero value: defaults", Config{}, true},
		{"no view state limit", Config{ViewStateLimit: -1}, true},
		{"view state limit below -1", Config{ViewStateLimit: -2}, false},
		{"no code cache", Config{CodeCacheSize: -1}, true},
		{"code cache below -1", Config{CodeCacheSize: -5}, false},
		{"health lag", Config{HealthMaxLag: time.Minute}, true},
		{"negative health lag", Config{HealthMaxLag: -time.Second}, false},
	} {
		err := c.cfg.Validate()
		if c.ok {
			require.NoError(t, err, c.name)
		} else {
			require.Error(t, err, c.name)
		}
	}
	d := Config{}.withDefaults()
	require.Equal(t, DefaultViewStateLimit, d.ViewStateLimit)
	require.Equal(t, DefaultCodeCacheSize, d.CodeCacheSize)
}
