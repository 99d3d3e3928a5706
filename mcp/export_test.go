package mcp

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// ShortenProgress makes waiting calls send progress every d for the rest
// of the test, so that a test sees progress without waiting 5 s for it.
func ShortenProgress(t *testing.T, d time.Duration) {
	old := progressEvery
	progressEvery = d
	t.Cleanup(func() { progressEvery = old })
}

// LibraryOnly is h, an HTTPHandler, serving every message through the MCP
// library, none itself (direct.go): the reference its direct calls are
// compared with.
func LibraryOnly(h http.Handler) http.Handler {
	g := h.(gate)
	g.tools = nil
	return g
}

// CountDirect is h, an HTTPHandler, counting in n the calls it serves
// itself (direct.go).
func CountDirect(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		g := h.(gate)
		g.served = n
		return g
	}
}
