package workloads

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileSize is the largest workload or --config file Load reads, in bytes: far above any
// real workload, small enough that a wrong path (a log, a disk image) fails at once.
const MaxFileSize = 4 << 20

// errNotRegular marks a path that names something other than a regular file.
var errNotRegular = errors.New("not a regular file")

// ReadFile reads a workload or --config file (or a run's config.yaml) as Load does: only a
// regular file, and only up to MaxFileSize bytes. The file is opened without blocking and checked on the descriptor it
// was opened as, so a FIFO, a device (/dev/zero) or a directory is refused before any read,
// and a file swapped between a check and the open cannot slip through.
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (it is %s): want a YAML file", errNotRegular, fileKind(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		return nil, tooLarge(fi.Size())
	}
	// The size may have grown since Stat: read one byte past the limit to notice.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

func tooLarge(size int64) error {
	return fmt.Errorf("a file of %d bytes is not allowed: want at most %d bytes (%d MiB)",
		size, MaxFileSize, MaxFileSize>>20)
}

// fileKind names a non-regular file mode for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
