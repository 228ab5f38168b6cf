package cli

import (
	"fmt"
)

// openFilesReserve is the open files a command needs besides its connections: the run
// directory's files, the listener, metrics scrapes, standard streams and the runtime's own.
const openFilesReserve = 64

// fileLimit reads and sets the process's open-file limit (RLIMIT_NOFILE); soft is the limit
// in force, hard the most the soft limit may be raised to without privilege.
type fileLimit interface {
	get() (soft, hard uint64, err error)
	set(soft uint64) error
}

// ensureOpenFiles checks, before anything starts, that conns connections to an external
// server fit within the open-file limit: one file per connection, plus openFilesReserve. The
// embedded simulator is reached without sockets (simserver.Local), so a command that uses it
// (external false) needs no file per connection and nothing is checked. When the soft limit is
// too low it is raised as far as needed, up to the hard limit; when even the hard limit is too
// low the command is refused (exit 2), naming the flag, its value, the files needed and the
// largest value that fits. Where the limit cannot be read (not a Unix system) nothing is
// checked.
func ensureOpenFiles(lim fileLimit, flag string, conns int, external bool) error {
	if lim == nil || !external {
		return nil
	}
	soft, hard, err := lim.get()
	if err != nil {
		return nil // no limit to check against; a shortage shows as failed connections
	}
	need := uint64(conns) + openFilesReserve
	if need <= soft {
		return nil
	}
	if need <= hard {
		if err := lim.set(need); err == nil {
			return nil
		}
	}
	fits := 0
	if hard > openFilesReserve {
		fits = int(hard - openFilesReserve)
	}
	return usageError(fmt.Errorf("%s %d needs %d open files (one per connection to the server, and %d more), above the open-file limit of %d (hard limit %d): "+
		"want %s at most %d here, or raise the limit first (ulimit -n %d)", flag, conns, need, openFilesReserve, soft, hard, flag, fits, need))
}
