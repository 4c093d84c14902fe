package upstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBehindAsksAgain: ErrBehind is asked again up to BehindRetries times,
// each retry told to onRetry; any other error or a success ends it.
func TestBehindAsksAgain(t *testing.T) {
	t.Parallel()
	w := Waits{TxPollInterval: time.Millisecond, BehindRetries: 3}.WithDefaults()
	asks, retries := 0, 0
	onRetry := func(err error) {
		require.ErrorIs(t, err, ErrBehind)
		retries++
	}
	err := w.Behind(t.Context(), func(context.Context) error {
		asks++
		if asks < 3 {
			return fmt.Errorf("height 5: %w", ErrBehind)
		}
		return nil
	}, onRetry)
	require.NoError(t, err)
	require.Equal(t, 3, asks)
	require.Equal(t, 2, retries)

	asks = 0
	err = w.Behind(t.Context(), func(context.Context) error {
		asks++
		return fmt.Errorf("height 5, ask %d: %w", asks, ErrBehind)
	}, nil)
	require.EqualError(t, err, "height 5, ask 4: upstream is behind", "the last ask's error, as it is")
	require.Equal(t, 4, asks, "one ask and BehindRetries more")

	asks = 0
	refused := errors.New("refused")
	err = w.Behind(t.Context(), func(context.Context) error { asks++; return refused }, nil)
	require.ErrorIs(t, err, refused)
	require.Equal(t, 1, asks)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = Waits{TxPollInterval: time.Hour, BehindRetries: 3}.Behind(ctx, func(context.Context) error { return ErrBehind }, nil)
	require.ErrorIs(t, err, ErrBehind, "an ended context returns the ask's error")
}
