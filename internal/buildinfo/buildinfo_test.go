package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFromBuild(t *testing.T) {
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want Info
	}{
		{"no build info at all", nil, false, Info{Version: "devel", Revision: "unknown"}},
		{"go run: no VCS stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true,
			Info{Version: "devel", Revision: "unknown"}},
		{"go build in a clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, true,
			Info{Version: "devel", Revision: "abc123"}},
		{"go build with local changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}, true,
			Info{Version: "devel", Revision: "abc123+dirty"}},
		{"go install of a tagged module", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true,
			Info{Version: "v1.2.3", Revision: "unknown"}},
	}
	for _, c := range cases {
		got := fromBuild(c.bi, c.ok)
		got.Go = ""
		assert.Equal(t, c.want, got, c.name)
	}
}

func TestLinkerVersionWins(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v9.9.9"
	assert.Equal(t, "v9.9.9", fromBuild(&debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"}}, true).Version)
}
