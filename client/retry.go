package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Retry bounds how the client tries a request again. It retries only what
// Temporary reports: network failures, rate_limited (waiting at least the
// server's retry_after), unavailable, and HTTP 502–504. A post is resent
// with the same idempotency_key, so a retry never stores it twice
// (docs/protocol.md §3, errata 2).
type Retry struct {
	// Attempts is how many times a request is sent at most, the first
	// included; 1 turns retries off. Default 6.
	Attempts int
	// Base is the wait after the first failure, doubled after each further
	// one, with jitter (half to all of it). Default 250 ms.
	Base time.Duration
	// Max caps one wait computed by backoff; a longer retry_after from the
	// server is honoured anyway. Default 15 s.
	Max time.Duration
}

// DefaultRetry is the policy of a Client made without WithRetry.
var DefaultRetry = Retry{Attempts: 6, Base: 250 * time.Millisecond, Max: 15 * time.Second}

func (p Retry) withDefaults() Retry {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetry.Attempts
	}
	if p.Base <= 0 {
		p.Base = DefaultRetry.Base
	}
	if p.Max <= 0 {
		p.Max = DefaultRetry.Max
	}
	return p
}

// delay is the wait after failure n (0 for the first), for err.
func (p Retry) delay(n int, err error) time.Duration {
	d := p.Base << min(n, 20)
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	d = d/2 + rand.N(d/2+1)
	var r *Refusal
	if errors.As(err, &r) && r.RetryAfter > d {
		d = r.RetryAfter
	}
	return d
}

// do runs attempt until it succeeds, fails for good, the attempts are
// spent, or ctx ends; it returns the last error.
func (p Retry) do(ctx context.Context, attempt func() error) error {
	p = p.withDefaults()
	for n := 0; ; n++ {
		err := attempt()
		if err == nil || !Temporary(err) || n+1 >= p.Attempts || ctx.Err() != nil {
			return err
		}
		if err := sleep(ctx, p.delay(n, err)); err != nil {
			return err
		}
	}
}

// sleep waits d, or less if ctx ends first (its error then).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
