// Package buildinfo reads what a binary knows of its own build: the
// version, VCS revision and Go version Go records in it.
package buildinfo

import "runtime/debug"

// Info is what the binary knows of its own build.
type Info struct {
	Version   string // the module's version; "(devel)" for a build from a checkout
	Commit    string // VCS revision; "" when unknown
	Time      string // commit time (RFC 3339); "" when unknown
	Modified  bool   // built from a work tree with uncommitted changes
	GoVersion string
}

// Read reads the build information Go records in the binary (go build
// and go install from a checkout record the VCS revision; go run and go
// test do not), linked (a commit set at link time, "" for none) taking
// precedence.
func Read(linked string) Info {
	b := Info{Version: "(devel)", Commit: linked}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = info.GoVersion
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}
