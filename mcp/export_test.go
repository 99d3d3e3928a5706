package mcp

import (
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
