package cli

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// listen listens on addr, the value of flag (--addr, --listen, --metrics-addr). An address
// that can never be listened on — not host:port, a port beyond 65535, a host that does not
// resolve or is not this machine's — is a usage error naming the flag; one that could be and
// is not now (the port in use, not permitted) is a runtime failure.
func listen(flag, addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError(fmt.Errorf("%s %q: %w: want host:port, e.g. 127.0.0.1:9464", flag, addr, unwrapAddr(err)))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, usageError(fmt.Errorf("%s %q: port %q is not allowed: want a port from 0 to 65535 (0: any free port)", flag, addr, port))
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return nil, usageError(fmt.Errorf("%s %q: host %q does not resolve: want an address of this machine, e.g. 127.0.0.1", flag, addr, host))
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, usageError(fmt.Errorf("%s %q: %s is not an address of this machine: want one of its addresses, e.g. 127.0.0.1 or 0.0.0.0", flag, addr, host))
	}
	return nil, runtimeError(fmt.Errorf("%s %q: %w", flag, addr, err))
}

// unwrapAddr keeps the reason of a *net.AddrError, without the address the message names
// already.
func unwrapAddr(err error) error {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return errors.New(ae.Err)
	}
	return err
}
