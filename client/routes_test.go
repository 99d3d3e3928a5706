package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"parley/client"
	"parley/services"
)

// TestRoutesFollowTheOperationTable: each method of the client calls its
// operation's route as services.Operations declares it, with only the
// query parameters the operation takes. The client cannot import the
// table; this test holds its copy of the routes to it.
func TestRoutesFollowTheOperationTable(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := client.New(srv.URL, "prl_test")
	ctx := context.Background()
	msg := &client.Message{ID: "msg_2", Thread: "th_1"}
	calls := []struct {
		op   services.OpName
		call func() error
	}{
		{"get_manifest", func() error { _, err := c.Manifest(ctx); return err }},
		{"whoami", func() error { _, err := c.Whoami(ctx, "w1"); return err }},
		{"post", func() error { _, err := c.Post(ctx, client.Answer(msg, "8443.")); return err }},
		{"read_thread", func() error {
			_, err := c.ReadThread(ctx, "th_1", client.ThreadQuery{Since: "c1.x", Limit: 5, Branch: "msg_2", Depth: 2})
			return err
		}},
		{"inbox", func() error {
			_, err := c.Inbox(ctx, client.InboxQuery{Extension: "w1", Since: "c1.x", Limit: 1, Wait: 1, Addressed: true})
			return err
		}},
		{"get_events", func() error {
			_, err := c.Events(ctx, client.EventsQuery{Thread: "th_1", Since: "c1.x", Limit: 3, Wait: 1})
			return err
		}},
		{"confirm", func() error { _, err := c.Confirm(ctx, "th_1", client.Decided); return err }},
		{"get_claim", func() error { _, err := c.GetClaim(ctx, "cl_1"); return err }},
		{"list_identities", func() error { _, _, err := c.Identities(ctx, "x"); return err }},
	}
	for _, tc := range calls {
		got = nil
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		var op *services.Operation
		for i := range services.Operations {
			if services.Operations[i].Name == tc.op {
				op = &services.Operations[i]
			}
		}
		if op == nil || got == nil {
			t.Fatalf("%s: no operation, or no request", tc.op)
		}
		pattern := "^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(op.Path), "[^/]+") + "$"
		if got.Method != op.Method || !regexp.MustCompile(pattern).MatchString(got.URL.Path) {
			t.Errorf("%s: called %s %s, the table says %s %s", tc.op, got.Method, got.URL.Path, op.Method, op.Path)
		}
		known := map[string]bool{}
		for _, p := range op.Params {
			known[p.Name] = true
		}
		for k := range got.URL.Query() {
			if !known[k] {
				t.Errorf("%s: query parameter %s is none of the operation's", tc.op, k)
			}
		}
		if op.Right != services.NeedNothing && !strings.HasPrefix(got.Header.Get("Authorization"), "Bearer ") {
			t.Errorf("%s: no bearer token", tc.op)
		}
	}
}
