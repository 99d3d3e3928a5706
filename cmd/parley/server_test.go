package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"parley/internal/testkit"
)

// startServe starts the parley binary's serve on db (testkit.StartServe).
func startServe(t *testing.T, db string, prefix []string, flags ...string) *testkit.Proc {
	t.Helper()
	return testkit.StartServe(t, binary, db, prefix, flags...)
}

// call sends one JSON request and decodes the answer.
func call(client *http.Client, method, url, token string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%d %q: %w", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out, nil
}

// agentTokens makes n agent tokens on db with the command line.
func agentTokens(t *testing.T, db string, n int) []string {
	t.Helper()
	ok(t, parley(t, nil, "", "migrate", "--db", db))
	var out []string
	for i := range n {
		r := ok(t, parley(t, nil, "", "token", "create", "--handle", fmt.Sprintf("agent%d", i), "--rights", "read,write", "--db", db))
		out = append(out, lastLine(r.Stdout))
	}
	return out
}
