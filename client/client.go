package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks Parley's HTTP binding (docs/http-api.md) as one token. It
// is safe for concurrent use.
type Client struct {
	base    string // the server's address, without /api/v1
	token   string
	http    *http.Client
	retry   Retry
	timeout time.Duration
}

// Option changes a Client made by New.
type Option func(*Client)

// WithHTTPClient sends requests through hc instead of a client of its own.
// Leave its Timeout unset: a waiting read holds a request open for as long
// as it waits; the client bounds each attempt itself (WithTimeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetry sets the retry policy (DefaultRetry otherwise).
func WithRetry(p Retry) Option { return func(c *Client) { c.retry = p.withDefaults() } }

// WithTimeout bounds one attempt of a request, beyond the wait of a
// waiting read; 30 s otherwise. The context given to each call bounds it
// all, retries included.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// New makes a client of the server at base (such as
// "http://127.0.0.1:8080") acting as token, a bearer token from `parley
// token create` or the web UI's tokens page; "" for none (the manifest
// needs none).
func New(base, token string, opts ...Option) *Client {
	c := &Client{
		base:    strings.TrimRight(strings.TrimSuffix(strings.TrimRight(base, "/"), "/api/v1"), "/"),
		token:   token,
		http:    &http.Client{},
		retry:   DefaultRetry,
		timeout: 30 * time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// request is one operation's call: its name (for errors), method, path
// under /api/v1, query and JSON body, and how long the server may hold it
// (a waiting read's wait).
type request struct {
	op     string
	method string
	path   string
	query  url.Values
	body   []byte
	wait   time.Duration
}

// call runs req with retries and decodes a success into out. A post's body
// carries its idempotency_key, so resending it is safe.
func (c *Client) call(ctx context.Context, req request, out any) error {
	return c.retry.do(ctx, func() error { return c.once(ctx, req, out) })
}

// once is one attempt of req.
func (c *Client) once(ctx context.Context, req request, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout+req.wait)
	defer cancel()
	target := c.base + "/api/v1" + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var rd io.Reader
	if req.body != nil {
		rd = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, target, rd)
	if err != nil {
		return fmt.Errorf("parley %s: %w", req.op, err)
	}
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	hr.Header.Set("Accept", "application/json")
	if req.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err // the caller's context ended: no retry
		}
		return &transportError{op: req.op, err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return &transportError{op: req.op, err: err}
	}
	if resp.StatusCode >= 400 {
		var w wireRefusal
		if json.Unmarshal(raw, &w) == nil {
			if r := w.refusal(); r != nil {
				if r.Status == 0 {
					r.Status = resp.StatusCode
				}
				if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); r.RetryAfter == 0 && err == nil && s > 0 {
					r.RetryAfter = time.Duration(s) * time.Second
				}
				return r
			}
		}
		return &transportError{op: req.op, status: resp.StatusCode, err: errors.New("an answer that is no refusal object")}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("parley %s: undecodable answer: %w", req.op, err)
	}
	return nil
}
