package web_test

import (
	"net/http"
	"testing"

	"parley/services"
)

// TestReadThreadAnswers304WhenUnchanged: read_thread sends an ETag; sent
// back, it gets 304 with no body while the thread is unchanged, and the
// whole tree again, with a new ETag, once anything in it changed.
func TestReadThreadAnswers304WhenUnchanged(t *testing.T) {
	eachServer(t, services.Config{}, func(t *testing.T, a *api) {
		alice, bob := a.token("alice"), a.token("bob")
		th := a.post(alice, map[string]any{"kind": "ask", "body": "Which port?"}).str("thread", "id")
		first := a.ok(200, "GET", "/api/v1/threads/"+th, bob, nil)
		etag := first.header.Get("ETag")
		if etag == "" || first.header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("no ETag: %v", first.header)
		}
		get := func(tag string) *http.Response {
			req, _ := http.NewRequest("GET", a.base+"/api/v1/threads/"+th, nil)
			req.Header.Set("Authorization", "Bearer "+bob)
			req.Header.Set("If-None-Match", tag)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		for _, tag := range []string{etag, `"other", ` + etag, "*"} {
			if resp := get(tag); resp.StatusCode != http.StatusNotModified || resp.ContentLength > 0 {
				t.Fatalf("If-None-Match %s on an unchanged thread: %d", tag, resp.StatusCode)
			}
		}
		a.post(bob, map[string]any{"kind": "answer", "thread": th, "body": "8443."})
		if resp := get(etag); resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == etag {
			t.Fatalf("after a post: %d, ETag %s", resp.StatusCode, resp.Header.Get("ETag"))
		}
		// A refusal is still a refusal, not a 304.
		a.refused(services.ThreadNotFound, "GET", "/api/v1/threads/th_999", bob, nil)
	})
}
