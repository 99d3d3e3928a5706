package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// sse is one Server-Sent Event of the stream.
type sse struct{ event, id, data string }

// openStream opens GET /api/v1/stream for role with lastID as
// Last-Event-ID (if any); its events arrive on the channel until closed.
func (k *kit) openStream(role, lastID string) (*http.Response, <-chan sse, error) {
	req, _ := http.NewRequest("GET", k.base+"/api/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+k.tok(role))
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	events := make(chan sse, 256)
	if resp.StatusCode != 200 {
		close(events)
		return resp, events, nil
	}
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.event != "" || cur.data != "" {
					events <- cur
				}
				cur = sse{}
			case strings.HasPrefix(line, "event:"):
				cur.event = strings.TrimSpace(line[6:])
			case strings.HasPrefix(line, "id:"):
				cur.id = strings.TrimSpace(line[3:])
			case strings.HasPrefix(line, "data:"):
				cur.data += strings.TrimSpace(line[5:])
			}
		}
	}()
	return resp, events, nil
}

// until reads events until one satisfies ok, with a generous bound; it
// returns the events read before it and the one found.
func until(events <-chan sse, bound time.Duration, ok func(sse) bool) ([]sse, *sse) {
	var seen []sse
	timeout := time.After(bound)
	for {
		select {
		case e, open := <-events:
			if !open {
				return seen, nil
			}
			if ok(e) {
				return seen, &e
			}
			seen = append(seen, e)
		case <-timeout:
			return seen, nil
		}
	}
}

func streamChecks() []check {
	s := "feed"
	return []check{
		{s, "the stream resumes after Last-Event-ID without loss or repetition", "§13", false, true, func(k *kit) error {
			bound := time.Duration(k.limit("wait_max_seconds")+60) * time.Second
			resp, events, err := k.openStream("carol", "")
			if err != nil {
				return err
			}
			if resp.StatusCode != 200 {
				resp.Body.Close()
				return fmt.Errorf("stream status %d", resp.StatusCode)
			}
			t1, _ := k.ask("alice")
			_, first := until(events, bound, func(e sse) bool { return e.event == "parley.event" && strings.Contains(e.data, `"`+t1+`"`) })
			resp.Body.Close()
			if first == nil || first.id == "" {
				return fmt.Errorf("no parley.event with an id for %s", t1)
			}
			t2, _ := k.ask("alice")
			resp, events, err = k.openStream("carol", first.id)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			before, found := until(events, bound, func(e sse) bool { return e.event == "parley.event" && strings.Contains(e.data, `"`+t2+`"`) })
			if found == nil {
				return fmt.Errorf("after Last-Event-ID %s the stream lost the event of %s", first.id, t2)
			}
			for _, e := range before {
				if e.event == "parley.event" && strings.Contains(e.data, `"`+t1+`"`) {
					return fmt.Errorf("after Last-Event-ID %s the stream repeated the event of %s", first.id, t1)
				}
			}
			return nil
		}},
		{s, "a stream beyond streams_per_token is rate_limited with retry_after", "§13, §2.2", false, true, func(k *kit) error {
			n := k.limit("streams_per_token")
			if n <= 0 || n > 20 {
				return errSkip("streams_per_token %d", n)
			}
			var open []*http.Response
			defer func() {
				for _, r := range open {
					r.Body.Close()
				}
			}()
			for i := 0; i < n; i++ {
				resp, _, err := k.openStream("reader", "")
				if err != nil {
					return err
				}
				open = append(open, resp)
				if resp.StatusCode != 200 {
					return fmt.Errorf("stream %d of %d: status %d", i+1, n, resp.StatusCode)
				}
			}
			resp, _, err := k.openStream("reader", "")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			r := Reply{Status: resp.StatusCode, Raw: raw, Wire: "HTTP GET /api/v1/stream"}
			json.Unmarshal(raw, &r.Body)
			return k.rateRefusal(r, max(60, k.limit("wait_max_seconds")+5))
		}},
	}
}
