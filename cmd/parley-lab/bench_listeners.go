package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"parley/services"
)

// listeners holds open what the feed's figures are about (docs/protocol.md §13):
// waiting inbox calls and event streams, each on its own connection, for
// as long as ctx lasts. Their tokens are made for them, at most
// waits_per_token waiting calls or streams_per_token streams each.
func listeners(ctx context.Context, forum *services.Forum, base string, waiters, streams int) (*sync.WaitGroup, error) {
	var wg sync.WaitGroup
	per, perWait := forum.Limits().StreamsPerToken, forum.Limits().WaitsPerToken
	tokens := map[int]string{}
	token := func(i int) (string, error) {
		if t, ok := tokens[i]; ok {
			return t, nil
		}
		tok, err := forum.CreateToken(ctx, services.TokenRequest{Handle: fmt.Sprintf("listener-%d-%d", time.Now().UnixNano()%1e6, i),
			Rights: []services.Right{services.RightRead}})
		if err != nil {
			return "", err
		}
		tokens[i] = tok.Secret
		return tok.Secret, nil
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: waiters + streams, DisableCompression: true}}
	now, err := forum.CurrentCursor(ctx) // listeners hear what comes next, as resuming clients do
	if err != nil {
		return nil, err
	}
	for i := range waiters {
		tok, err := token(i / max(perWait, 1))
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/inbox?wait=30&limit=1&since="+now, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	for i := range streams {
		tok, err := token(1_000_000 + i/per)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/stream?since="+now, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
			}
		}()
	}
	return &wg, nil
}

// serverGoroutines reads the server's goroutine count from its profiler
// (--pprof), or -1.
func serverGoroutines(pprof string) int {
	if pprof == "" {
		return -1
	}
	resp, err := http.Get("http://" + pprof + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "goroutine profile: total %d", &n); err != nil {
		return -1
	}
	return n
}
