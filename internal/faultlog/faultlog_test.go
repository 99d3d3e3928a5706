package faultlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"parley/services"
)

// TestUnavailableOnceASecond: a fault of ours is logged each
// time at ERROR; storage unreachable at WARN, once a second at most, the
// next line counting those left out.
func TestUnavailableOnceASecond(t *testing.T) {
	var out bytes.Buffer
	f := New(slog.New(slog.NewTextHandler(&out, nil)))
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	f.now = func() time.Time { return at }
	down := services.Refuse(services.Unavailable, "storage is unreachable for now")
	internal := services.Refuse(services.Internal, "an unexpected server fault")
	steps := []struct {
		after  time.Duration // since the step before
		r      *services.Refusal
		logged string // the line's start, "" for none
		count  string // its unlogged_since_last, "" for none
	}{
		{0, down, "level=WARN msg=\"storage unavailable\"", ""},
		{0, down, "", ""},
		{300 * time.Millisecond, down, "", ""},
		{0, internal, "level=ERROR msg=\"request failed\"", ""},
		{300 * time.Millisecond, down, "", ""},
		{0, internal, "level=ERROR msg=\"request failed\"", ""},
		{400 * time.Millisecond, down, "level=WARN msg=\"storage unavailable\"", "unlogged_since_last=3"},
		{time.Minute, down, "level=WARN msg=\"storage unavailable\"", ""},
	}
	for i, s := range steps {
		at = at.Add(s.after)
		out.Reset()
		f.Report(context.Background(), "request failed", context.DeadlineExceeded, s.r, "request_id", "r1", "method", "GET", "path", "/api/v1/inbox")
		line := out.String()
		if s.logged == "" {
			if line != "" {
				t.Fatalf("step %d: logged %q, want nothing", i, line)
			}
			continue
		}
		if !strings.Contains(line, s.logged) || !strings.Contains(line, "err=\"context deadline exceeded\"") || !strings.Contains(line, "path=/api/v1/inbox") ||
			strings.Contains(line, "WARN") != strings.Contains(line, `in="request failed"`) {
			t.Fatalf("step %d: logged %q, want %s with the error and the request", i, line, s.logged)
		}
		if got := strings.Contains(line, "unlogged_since_last"); got != (s.count != "") || !strings.Contains(line, s.count) {
			t.Fatalf("step %d: logged %q, want the count %q", i, line, s.count)
		}
	}
	out.Reset()
	f.Report(context.Background(), "request failed", errors.New("boom"), nil)
	if !strings.Contains(out.String(), "level=ERROR") {
		t.Fatalf("an error with no refusal logged %q", out.String())
	}
}
