package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// checkOutput says why a command may not write its output file at path, named by flag in
// the message: it is not a regular file (a directory, a device such as /dev/full), it is one
// of the command's inputs (a file of inputs, or a file inside one of them when it is a
// directory), or it exists and force is off. Every command writing a file a user names
// checks it here before it reads anything, so no output replaces what it was made from.
func checkOutput(flag, path string, inputs []string, force bool) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usageError(fmt.Errorf("%s %s: %w", flag, path, unwrapPath(err)))
	}
	if !info.Mode().IsRegular() {
		return usageError(fmt.Errorf("%s %s: is a %s, not a regular file: want the path of a file to write", flag, path, fileKind(info)))
	}
	if in := inputHolding(info, inputs); in != "" {
		return usageError(fmt.Errorf("%s %s: is one of the inputs (%s): want a file outside them", flag, path, in))
	}
	if !force {
		return usageError(fmt.Errorf("%s %s: exists: pass --force to replace it, or name another file", flag, path))
	}
	return nil
}

// given returns the paths that are not empty: the inputs a command was given of those it may
// take.
func given(paths ...string) []string {
	return slices.DeleteFunc(paths, func(p string) bool { return p == "" })
}

// inputHolding returns the input that is, or holds, the file out describes; "" for none.
func inputHolding(out fs.FileInfo, inputs []string) string {
	for _, in := range inputs {
		found := false
		_ = filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if found {
				return fs.SkipAll
			}
			if err != nil {
				return nil // what cannot be read cannot be written over by us either
			}
			if d.Type().IsRegular() || p == in {
				if info, err := os.Stat(p); err == nil && os.SameFile(info, out) {
					found = true
					return fs.SkipAll
				}
			}
			return nil
		})
		if found {
			return in
		}
	}
	return ""
}

// fileKind names what a file that is not a regular file is.
func fileKind(info fs.FileInfo) string {
	switch m := info.Mode(); {
	case m.IsDir():
		return "directory"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
