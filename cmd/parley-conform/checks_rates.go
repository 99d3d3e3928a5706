package main

import (
	"fmt"
	"math"
	"time"
)

// The rates section proves that the per-token limits of §9 and §13 are
// enforced: posts_per_minute, requests_per_minute, waits_per_token. Each
// check acts as an identity of its own (--provision makes one; a tokens
// file names it), so no other check shares its buckets. A limit too high
// to exhaust cheaply is skipped: run the section alone against a server
// with low limits (docs/conformance.md).

// rateExhaustMax is the highest limit the kit exhausts.
const rateExhaustMax = 200

// rateRefusal checks a rate_limited refusal: the object of §2.2 with
// status 429 on the wire and a retry_after of 1 to maxRetry seconds.
func (k *kit) rateRefusal(r Reply, maxRetry int) error {
	if err := refused(r, "rate_limited", ""); err != nil {
		return err
	}
	retry, ok := dig(r.Body, "error", "retry_after").(float64)
	return all(
		expect(r.Status == 429 && num(r.Body, "error", "status") == 429, "rate_limited with status %d (object's %v), want 429: %s", r.Status, dig(r.Body, "error", "status"), r),
		expect(str(r.Body, "error", "message") != "", "the refusal has no message: %s", r),
		expect(k.b.Name() == "http" || r.IsError, "over MCP the refusal is no tool result with isError: %s", r),
		expect(ok && retry >= 1 && retry <= float64(maxRetry) && retry == math.Trunc(retry), "retry_after %v, want whole seconds from 1 to %d: %s", dig(r.Body, "error", "retry_after"), maxRetry, r))
}

// rateLimit reads a per-token limit the kit can exhaust, or skips.
func (k *kit) rateLimit(name string) (int, error) {
	v, ok := k.limits[name]
	switch {
	case !ok:
		return 0, errSkip("the manifest lists no %s", name)
	case v <= 0:
		return 0, errSkip("%s is off", name)
	case v > rateExhaustMax:
		return 0, errSkip("%s is %v, too many to exhaust cheaply (the kit exhausts at most %d); run --only rates against a server with lower limits", name, v, rateExhaustMax)
	}
	return int(v), nil
}

// burst sends requests as fast as it can until one is refused
// rate_limited or 2n+1 were sent; it answers how many were accepted
// first, the refusal, and how long it took.
func burst(n int, send func() (Reply, error)) (ok int, refusal *Reply, took time.Duration, err error) {
	start := time.Now()
	for i := 0; i < 2*n+1; i++ {
		r, err := send()
		if err != nil {
			return ok, nil, time.Since(start), err
		}
		switch {
		case r.OK():
			ok++
		case r.Reason() == "rate_limited":
			return ok, &r, time.Since(start), nil
		default:
			return ok, nil, time.Since(start), fmt.Errorf("request %d was refused, not for its rate: %s", i+1, r)
		}
	}
	return ok, nil, time.Since(start), nil
}

// perMinute proves a per-minute limit of n: a burst is refused rate_limited
// after at least n requests and at most n plus what a minute's window can
// refill while the burst runs. A server counting in fixed windows admits up
// to 2n when the burst straddles a window's end; then, after the refusal's
// retry_after, a second burst must stop at n.
func (k *kit) perMinute(name string, n int, send func() (Reply, error)) error {
	slack := func(d time.Duration) int { return int(math.Ceil(float64(n) * d.Seconds() / 60)) }
	ok, refusal, took, err := burst(n, send)
	if err != nil {
		return err
	}
	if refusal == nil {
		return fmt.Errorf("%d requests in %s were all accepted: %s is %d", ok, took.Round(time.Millisecond), name, n)
	}
	if ok < n {
		return fmt.Errorf("refused after %d requests, fewer than %s %d: %s", ok, name, n, refusal)
	}
	if err := k.rateRefusal(*refusal, 60); err != nil {
		return err
	}
	if ok <= n+slack(took) {
		return nil
	}
	time.Sleep(time.Duration(num(refusal.Body, "error", "retry_after")) * time.Second)
	again, refusal, took, err := burst(n, send)
	if err != nil {
		return err
	}
	if refusal == nil {
		return fmt.Errorf("after retry_after, %d requests in %s were all accepted: %s is %d", again, took.Round(time.Millisecond), name, n)
	}
	return all(
		expect(again <= n+slack(took), "%d then, after retry_after, %d requests accepted within a minute: %s is %d", ok, again, name, n),
		k.rateRefusal(*refusal, 60))
}

func rateChecks() []check {
	s := "rates"
	return []check{
		{s, "the post after posts_per_minute is rate_limited with retry_after", "§9, §2.2", false, false, func(k *kit) error {
			n, err := k.rateLimit("posts_per_minute")
			if err != nil {
				return err
			}
			tok, err := k.fresh("posts", "read,write")
			if err != nil {
				return err
			}
			defer k.release(tok)
			return k.perMinute("posts_per_minute", n, func() (Reply, error) {
				return k.b.Call(tok, "post", map[string]any{"kind": "ask", "body": k.body("a question counted against posts_per_minute")})
			})
		}},
		{s, "the request after requests_per_minute is rate_limited with retry_after", "§9, §2.2", false, false, func(k *kit) error {
			n, err := k.rateLimit("requests_per_minute")
			if err != nil {
				return err
			}
			tok, err := k.fresh("requests", "read")
			if err != nil {
				return err
			}
			defer k.release(tok)
			return k.perMinute("requests_per_minute", n, func() (Reply, error) { return k.b.Call(tok, "whoami", nil) })
		}},
		{s, "the waiting call after waits_per_token is rate_limited with retry_after", "§13, §9, §2.2", false, false, func(k *kit) error {
			if !k.profile("feed") {
				return errSkip("the manifest does not list the feed profile")
			}
			n, err := k.rateLimit("waits_per_token")
			if err != nil {
				return err
			}
			if n > 50 {
				return errSkip("waits_per_token is %d, too many waiting calls to hold at once", n)
			}
			tok, err := k.fresh("waits", "read")
			if err != nil {
				return err
			}
			defer k.release(tok)
			err = k.waitsEnforced(tok, n)
			if _, race := err.(waitRace); race {
				err = k.waitsEnforced(tok, n) // once more, now that the first round ended
			}
			return err
		}},
	}
}

// waitRace: a probe was admitted before every holder was counted, and a
// holder was refused in its place.
type waitRace struct{ error }

// waitsEnforced holds n waiting inbox calls of tok, then probes with short
// waits until one is refused; the holders must all have been admitted.
func (k *kit) waitsEnforced(tok string, n int) error {
	hold := min(k.limit("wait_max_seconds"), 10)
	if hold < 4 {
		return errSkip("wait_max_seconds %d is too short to hold waiting calls while probing", hold)
	}
	// Addressed turns only: nobody names this identity, so nothing wakes
	// its waits; the first read pages to the end of its inbox.
	cursor := ""
	for page := 0; page < 100; page++ {
		q := map[string]any{"addressed": true, "limit": k.limit("page_max")}
		if cursor != "" {
			q["since"] = cursor
		}
		r, err := k.b.Call(tok, "inbox", q)
		if err != nil {
			return err
		}
		if err := accepted(r); err != nil {
			return err
		}
		next := str(r.Body, "cursor")
		if len(list(r.Body, "items")) == 0 || next == cursor {
			cursor = next
			break
		}
		cursor = next
	}
	args := map[string]any{"since": cursor, "wait": hold, "addressed": true}
	// Each holder is a request of its own, on a connection of its own.
	probe := map[string]any{"since": cursor, "wait": 1, "addressed": true}
	call := func() (Reply, error) { return k.b.Call(tok, "inbox", args) }
	probeCall := func() (Reply, error) { return k.b.Call(tok, "inbox", probe) }
	if _, ok := k.b.(*mcpStdio); ok {
		// A stdio process may serve a few calls at a time (this
		// repository's, five): the token's waits are held over HTTP, and
		// the stdio command must count them, as it counts every process's.
		h := &httpBinding{base: k.base}
		call = func() (Reply, error) { return h.Call(tok, "inbox", args) }
	}
	start := time.Now()
	holders := make(chan Reply, n)
	for i := 0; i < n; i++ {
		go func() {
			r, err := call()
			if err != nil {
				r = Reply{Status: 599, Raw: []byte(err.Error())}
			}
			holders <- r
		}()
	}
	// The holders are under way; give them a moment to be counted.
	time.Sleep(time.Second)
	var refusal *Reply
	admitted := 0
	for time.Since(start) < time.Duration(hold-2)*time.Second {
		r, err := probeCall()
		if err != nil {
			return err
		}
		if r.Reason() == "rate_limited" {
			refusal = &r
			break
		}
		if !r.OK() {
			return fmt.Errorf("probe refused, not for its rate: %s", r)
		}
		admitted++
	}
	var errs []error
	for i := 0; i < n; i++ {
		r := <-holders
		if !r.OK() {
			if r.Reason() == "rate_limited" && admitted > 0 {
				return waitRace{fmt.Errorf("a waiting call of the first %d was refused after a probe was admitted: %s", n, r)}
			}
			errs = append(errs, fmt.Errorf("waiting call %d of %d (waits_per_token) was refused: %s", i+1, n, r))
		}
	}
	if err := all(errs...); err != nil {
		return err
	}
	if refusal == nil {
		return fmt.Errorf("with %d waiting calls held, %d more were admitted: waits_per_token is %d", n, admitted, n)
	}
	return k.rateRefusal(*refusal, max(60, k.limit("wait_max_seconds")+5))
}

// profile reports whether the manifest lists a profile.
func (k *kit) profile(name string) bool {
	for _, p := range list(k.manifest, "profiles") {
		if str(p, "name") == name {
			return true
		}
	}
	return false
}

// release ends the stdio processes of a check's own identity.
func (k *kit) release(token string) {
	if st, ok := k.b.(*mcpStdio); ok {
		st.drop(token)
	}
}
