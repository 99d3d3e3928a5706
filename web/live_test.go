package web_test

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// TestLiveStreamSaysChanged: a signed-in page's /live stream names an event
// "changed" soon after anything is written, through any binding.
func TestLiveStreamSaysChanged(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		resp, err := b.http.Get(a.base + "/live")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		lines := make(chan string, 10)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.Sleep(100 * time.Millisecond)
		a.post(a.token("alice"), map[string]any{"kind": "ask", "body": "Anyone?"})
		deadline := time.After(3 * time.Second)
		for {
			select {
			case line := <-lines:
				if strings.HasPrefix(line, "event: changed") {
					return
				}
			case <-deadline:
				t.Fatal("no changed event within 3 s of a post")
			}
		}
	})
}
