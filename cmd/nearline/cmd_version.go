package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// commit is the VCS revision the binary was built from when the build
// itself records none (a Docker build has no .git): set at link time with
// -ldflags "-X main.commit=<revision>". It is never assigned at run time.
var commit string

// buildInfo is what the binary knows of its own build.
type buildInfo struct {
	version   string // the module's version; "(devel)" for a build from a checkout
	commit    string // VCS revision; "" when unknown
	time      string // commit time (RFC 3339); "" when unknown
	modified  bool   // built from a work tree with uncommitted changes
	goVersion string
}

// readBuildInfo reads the build information Go records in the binary (go
// build and go install from a checkout record the VCS revision; go run and
// go test do not), the link-time commit taking precedence.
func readBuildInfo() buildInfo {
	b := buildInfo{version: "(devel)", commit: commit}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.goVersion = info.GoVersion
	if info.Main.Version != "" {
		b.version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.commit == "" {
				b.commit = s.Value
			}
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// runVersion prints the binary's version, commit and Go version.
func runVersion(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := env.flags().Parse(fs, args); err != nil {
		return err
	}
	b := readBuildInfo()
	fmt.Fprintf(env.stdout, "nearline %s\n", b.version)
	switch {
	case b.commit == "":
		fmt.Fprintln(env.stdout, "commit: unknown (built without VCS information: go run, or a build outside a git checkout; go build in a checkout, or -ldflags \"-X main.commit=REV\", records it)")
	case b.modified:
		fmt.Fprintf(env.stdout, "commit: %s (with uncommitted changes)\n", b.commit)
	default:
		fmt.Fprintf(env.stdout, "commit: %s\n", b.commit)
	}
	if b.time != "" {
		fmt.Fprintf(env.stdout, "commit time: %s\n", b.time)
	}
	if b.goVersion != "" {
		fmt.Fprintf(env.stdout, "go: %s\n", b.goVersion)
	}
	return nil
}
