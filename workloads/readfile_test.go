package workloads

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadOnlyRegularFiles checks that Load refuses, at once, a workload or --config path that
// is no regular file (a device that never ends, a FIFO no one writes to, a directory) or that
// is larger than MaxFileSize, and reads a file of exactly MaxFileSize bytes.
func TestReadOnlyRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := writeFile(t, "big.yaml", strings.Repeat(" ", MaxFileSize+1))
	limit := writeFile(t, "limit.yaml", "name: limit\n"+strings.Repeat(" ", MaxFileSize-len("name: limit\n")))
	tests := []struct {
		path, want string
	}{
		// A device that never ends: reading it would grow without bound.
		{"/dev/zero", "not a regular file (it is a character device): want a YAML file"},
		// A FIFO with no writer: opening it for reading would block.
		{fifo, "not a regular file (it is a named pipe): want a YAML file"},
		{t.TempDir(), "not a regular file (it is a directory): want a YAML file"},
		{big, "a file of 4194305 bytes is not allowed: want at most 4194304 bytes (4 MiB)"},
	}
	for _, tt := range tests {
		start := time.Now()
		_, err := Load(LoadOptions{Workload: tt.path})
		assert.EqualError(t, err, tt.path+": "+tt.want, "Load(workload %s)", tt.path)
		_, err = Load(LoadOptions{Workload: "smoke", ConfigFile: tt.path, ConfigSource: "--config " + tt.path})
		assert.EqualError(t, err, "--config "+tt.path+": "+tt.want, "Load(--config %s)", tt.path)
		assert.Less(t, time.Since(start), 5*time.Second, "%s must be refused at once", tt.path)
	}
	w, err := Load(LoadOptions{Workload: limit})
	require.NoError(t, err, "a file of exactly MaxFileSize bytes")
	assert.Equal(t, "limit", w.Name)
}
