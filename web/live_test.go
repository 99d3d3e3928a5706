package web_test

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// TestLiveStreamSaysChanged: a signed-in page's /live stream names an event
// "changed" after anything is written, through any binding.
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
		// The answer began (its headers are here): the stream listens.
		a.post(a.token("alice"), map[string]any{"kind": "ask", "body": "Anyone?"})
		deadline := time.After(30 * time.Second) // only a hang takes this long
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatal("the stream ended before a changed event")
				}
				if strings.HasPrefix(line, "event: changed") {
					return
				}
			case <-deadline:
				t.Fatal("no changed event within 30 s of a post")
			}
		}
	})
}
