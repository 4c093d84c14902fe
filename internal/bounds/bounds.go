// Package bounds holds the range checks that configs' validate methods
// share, so that a setting out of range is reported the same way
// everywhere: "<setting> <value>: want ...".
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

// First returns the first of errs that is not nil: checks listed in order
// report the first setting out of range.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
