// Package buildinfo says which agentsim produced a run: the module version when it was built
// from a tagged module (go install …@v1.2.3), else the VCS revision it was built from, so a run
// directory names the code that made it.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is set at build time with
// -ldflags "-X github.com/agentsim/agentsim/internal/buildinfo.Version=…"; it wins over what
// the build recorded.
var Version = ""

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the release version, the module version, or "devel" for a source build.
	Version string `json:"version" yaml:"version"`
	// Revision is the VCS commit the binary was built from, with "+dirty" when the work tree had
	// uncommitted changes; "unknown" when the build recorded none (go run, tests).
	Revision string `json:"revision" yaml:"revision"`
	// Go is the toolchain version, e.g. "go1.26.8".
	Go string `json:"go" yaml:"go"`
}

// Read returns the running binary's build information.
func Read() Info {
	return fromBuild(debug.ReadBuildInfo())
}

// String renders the info on one line, e.g. "devel (revision 0a1b2c3d+dirty, go1.26.8)".
func (i Info) String() string {
	return i.Version + " (revision " + i.Revision + ", " + i.Go + ")"
}

func fromBuild(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: "devel", Revision: "unknown", Go: runtime.Version()}
	if ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			info.Revision = rev + dirty
		}
	}
	if Version != "" {
		info.Version = Version
	}
	return info
}
