//go:build !unix

package cli

// openFileLimit is nil where there is no RLIMIT_NOFILE: nothing is checked.
var openFileLimit fileLimit
