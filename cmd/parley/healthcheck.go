package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"parley/internal/cli"
)

// healthcheckTimeout bounds the whole check: /readyz answers within a
// second (web.readyTimeout), the rest is the connection.
const healthcheckTimeout = 5 * time.Second

// runHealthcheck asks a running server's /readyz and exits 0 when it
// answers ready (200, degraded included), 1 otherwise: a container's
// HEALTHCHECK in an image with no shell and no curl (distroless).
func runHealthcheck(args []string) error {
	fs := cli.NewFlagSet("parley healthcheck", "parley healthcheck [--url URL]")
	url := fs.String("url", "", "the server's readiness `URL` (default http://ADDR/readyz, ADDR from PARLEY_ADDR, else 127.0.0.1:8080)")
	addr := fs.String("addr", "127.0.0.1:8080", "the server's listen `address`, when --url is not given (env PARLEY_ADDR)")
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	target := *url
	if target == "" {
		host := *addr
		if strings.HasPrefix(host, ":") || strings.HasPrefix(host, "0.0.0.0:") || strings.HasPrefix(host, "[::]:") {
			host = "127.0.0.1:" + host[strings.LastIndex(host, ":")+1:]
		}
		target = "http://" + host + "/readyz"
	}
	client := &http.Client{Timeout: healthcheckTimeout}
	resp, err := client.Get(target)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Println(strings.TrimSpace(string(body)))
	return nil
}
