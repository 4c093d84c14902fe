package main

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/internal/buildinfo"
)

// commit is the VCS revision the binary was built from when the build
// itself records none (a Docker build has no .git): set at link time with
// -ldflags "-X main.commit=<revision>". It is never assigned at run time.
var commit string

// runVersion prints the binary's version, commit and Go version.
func runVersion(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := env.flags().Parse(fs, args); err != nil {
		return err
	}
	b := buildinfo.Read(commit)
	fmt.Fprintf(env.stdout, "nearline %s\n", b.Version)
	switch {
	case b.Commit == "":
		fmt.Fprintln(env.stdout, "commit: unknown (built without VCS information: go run, or a build outside a git checkout; go build in a checkout, or -ldflags \"-X main.commit=REV\", records it)")
	case b.Modified:
		fmt.Fprintf(env.stdout, "commit: %s (with uncommitted changes)\n", b.Commit)
	default:
		fmt.Fprintf(env.stdout, "commit: %s\n", b.Commit)
	}
	if b.Time != "" {
		fmt.Fprintf(env.stdout, "commit time: %s\n", b.Time)
	}
	if b.GoVersion != "" {
		fmt.Fprintf(env.stdout, "go: %s\n", b.GoVersion)
	}
	return nil
}
