package client_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// fault is what the proxy does to one request.
type fault int

const (
	pass        fault = iota // forward it, forward the answer
	loseAnswer               // forward it, then drop the connection: the server acted, the client never hears
	unavailable              // answer 503 unavailable without forwarding
	rateLimited              // answer 429 rate_limited, retry_after 1, without forwarding
)

// faultProxy stands between a client and the server and fails the posts
// (POST /api/v1/messages) as decide says, the n-th post seen being n
// (from 1); everything else passes.
type faultProxy struct {
	upstream string
	decide   func(n int) fault
	srv      *httptest.Server

	mu     sync.Mutex
	posts  int
	faults map[fault]int

	// down answers every request 503 unavailable while set, counting
	// them in refused: an outage of the storage behind the server.
	down    atomic.Bool
	refused atomic.Int64
}

func newFaultProxy(t *testing.T, upstream string, decide func(n int) fault) *faultProxy {
	p := &faultProxy{upstream: upstream, decide: decide, faults: map[fault]int{}}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// URL is where clients reach the server through the proxy.
func (p *faultProxy) URL() string { return p.srv.URL }

// counts is how many posts the proxy saw, and how many of each fault.
func (p *faultProxy) counts() (int, map[fault]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[fault]int{}
	for k, v := range p.faults {
		out[k] = v
	}
	return p.posts, out
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f := pass
	if p.down.Load() {
		p.refused.Add(1)
		f = unavailable
	} else if r.Method == http.MethodPost && r.URL.Path == "/api/v1/messages" {
		p.mu.Lock()
		p.posts++
		f = p.decide(p.posts)
		p.faults[f]++
		p.mu.Unlock()
	}
	switch f {
	case unavailable:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"reason":"unavailable","status":503,"message":"storage is unreachable (the test's proxy says so)"}}`)
		return
	case rateLimited:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"reason":"rate_limited","status":429,"message":"too many requests (the test's proxy says so)","retry_after":1}}`)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if f == loseAnswer {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}
