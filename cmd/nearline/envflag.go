package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Each helper registers a flag whose default comes from an environment
// variable, and says so in the flag's help.

func stringFlag(fs *flag.FlagSet, env *environment, name, envVar, def, help string) *string {
	if v := env.getenv(envVar); v != "" {
		def = v
	}
	return fs.String(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}

func intFlag(fs *flag.FlagSet, env *environment, name, envVar string, def int, help string) *int {
	if v, err := strconv.Atoi(strings.TrimSpace(env.getenv(envVar))); err == nil {
		def = v
	}
	return fs.Int(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}

func uint64Flag(fs *flag.FlagSet, env *environment, name, envVar string, def uint64, help string) *uint64 {
	if v, err := strconv.ParseUint(strings.TrimSpace(env.getenv(envVar)), 10, 64); err == nil {
		def = v
	}
	return fs.Uint64(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}

func durationFlag(fs *flag.FlagSet, env *environment, name, envVar string, def time.Duration, help string) *time.Duration {
	if v, err := time.ParseDuration(strings.TrimSpace(env.getenv(envVar))); err == nil {
		def = v
	}
	return fs.Duration(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}

func boolFlag(fs *flag.FlagSet, env *environment, name, envVar string, def bool, help string) *bool {
	if v, err := strconv.ParseBool(strings.TrimSpace(env.getenv(envVar))); err == nil {
		def = v
	}
	return fs.Bool(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}

func float64Flag(fs *flag.FlagSet, env *environment, name, envVar string, def float64, help string) *float64 {
	if v, err := strconv.ParseFloat(strings.TrimSpace(env.getenv(envVar)), 64); err == nil {
		def = v
	}
	return fs.Float64(name, def, fmt.Sprintf("%s (env %s)", help, envVar))
}
