//go:build unix

package cli

import "syscall"

// processFileLimit is the process's RLIMIT_NOFILE.
type processFileLimit struct{}

func (processFileLimit) get() (soft, hard uint64, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, err
	}
	return uint64(l.Cur), uint64(l.Max), nil
}

func (processFileLimit) set(soft uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	l.Cur = soft
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

// openFileLimit is the limit commands check their connections against.
var openFileLimit fileLimit = processFileLimit{}
