//go:build ignore

// Command relay forwards TCP connections byte for byte, with no HTTP and no recording: the
// floor of what a process that forwards every frame costs, beside which scripts/proxybench
// puts agentsim record (docs/speed.md, "What forwarding costs").
//
//	go run scripts/proxybench/relay.go -listen 127.0.0.1:9001 -upstream 127.0.0.1:9000 [-splice]
//
// Each accepted connection gets one connection to the upstream and a goroutine each way. By
// default a direction is copied through a 32 KiB user-space buffer, one read and one write
// a time, as a forwarder that looks at the bytes must; with -splice, io.Copy between the two
// TCP connections, which Linux carries with splice(2) without the bytes reaching user space.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9001", "address to accept connections on")
	upstream := flag.String("upstream", "127.0.0.1:9000", "address each connection is forwarded to")
	splice := flag.Bool("splice", false, "copy with io.Copy between the sockets (splice on Linux), not a user-space buffer")
	flag.Parse()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-stop; l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			return // the listener closed on a signal; open connections end with the process
		}
		go forward(c.(*net.TCPConn), *upstream, *splice)
	}
}

// forward carries c to a new connection to upstream and back, until both directions end.
func forward(c *net.TCPConn, upstream string, splice bool) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() { copyHalf(u.(*net.TCPConn), c, splice); close(done) }()
	copyHalf(c, u.(*net.TCPConn), splice)
	<-done
}

// copyHalf copies src to dst until src ends, then ends dst's writing side.
func copyHalf(dst, src *net.TCPConn, splice bool) {
	if splice {
		_, _ = io.Copy(dst, src)
	} else {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
	}
	_ = dst.CloseWrite()
}
