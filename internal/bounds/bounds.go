// Package bounds holds the range checks that configs' validate methods
// share, so that a setting out of range is reported the same way
// everywhere: "<setting> <value>: want ...". A validate method returns
// errors.Join of one check per field, so every setting out of range is
// reported at once.
package bounds

import (
	"cmp"
	"fmt"
)

// AtLeast reports v below least as "<name> <v>: want at least <least>".
func AtLeast[T cmp.Ordered](name string, v, least T) error {
	if v < least {
		return fmt.Errorf("%s %v: want at least %v", name, v, least)
	}
	return nil
}

// NotNegative reports v below zero as "<name> <v>: want positive" (zero
// passes: a config's zero takes its default before it is checked).
func NotNegative[T cmp.Ordered](name string, v T) error {
	var zero T
	if v < zero {
		return fmt.Errorf("%s %v: want positive", name, v)
	}
	return nil
}

// AtMost reports v above most as "<name> <v>: want at most <most>".
func AtMost[T cmp.Ordered](name string, v, most T) error {
	if v > most {
		return fmt.Errorf("%s %v: want at most %v", name, v, most)
	}
	return nil
}
