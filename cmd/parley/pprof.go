package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"parley/internal/cli"
)

// serveProfiler serves Go's profiler on its own listener, which must be on
// the loopback interface: profiles show the program's inner workings.
func serveProfiler(addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return cli.Usagef("--pprof %q: give a loopback address such as 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go http.Serve(ln, mux)
	log.Info("profiler", "addr", ln.Addr().String())
	return nil
}
