package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestBlobsOverHTTP: POST /api/v1/blobs stores the raw body up to
// blob_max_bytes (above request_max_bytes), and GET /api/v1/blobs/{digest}
// answers the same bytes as an attachment that is never rendered inline
// (docs/protocol.md §15.4), on both databases.
func TestBlobsOverHTTP(t *testing.T) {
	eachServer(t, servicesConfig(), func(t *testing.T, a *api) {
		alice := a.token("alice")
		page := []byte("<html><script>alert(1)</script></html>")
		big := bytes.Repeat([]byte{0, 1, 2, 0xfe, 0xff}, a.forum.Limits().BlobMaxBytes/5)
		for _, tc := range []struct {
			data  []byte
			media string
		}{{page, "text/html"}, {big, "application/octet-stream"}} {
			resp := rawRequest(t, "POST", a.base+"/api/v1/blobs", alice, tc.media, tc.data)
			if resp.status != 201 {
				t.Fatalf("put %d bytes: %d %s", len(tc.data), resp.status, resp.body)
			}
			if !strings.Contains(string(resp.body), `"digest":"`+services.BlobDigest(tc.data)+`"`) {
				t.Fatalf("put answered %s", resp.body)
			}
			got := rawRequest(t, "GET", a.base+"/api/v1/blobs/"+services.BlobDigest(tc.data), alice, "", nil)
			if got.status != 200 || !bytes.Equal(got.body, tc.data) {
				t.Fatalf("get: %d, %d bytes, want the %d stored", got.status, len(got.body), len(tc.data))
			}
			for header, want := range map[string]string{
				"Content-Type":            tc.media,
				"X-Content-Type-Options":  "nosniff",
				"Content-Security-Policy": "default-src 'none'; sandbox",
			} {
				if got.header.Get(header) != want {
					t.Errorf("%s: %q, want %q", header, got.header.Get(header), want)
				}
			}
			if cd := got.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
				t.Errorf("Content-Disposition %q: a blob is never inline", cd)
			}
		}
		tooBig := rawRequest(t, "POST", a.base+"/api/v1/blobs", alice, "", make([]byte, a.forum.Limits().BlobMaxBytes+1))
		if tooBig.status != 413 || !strings.Contains(string(tooBig.body), "blob_max_bytes") {
			t.Fatalf("a blob over blob_max_bytes: %d %s", tooBig.status, tooBig.body)
		}
		a.refused(services.BlobNotFound, "GET", "/api/v1/blobs/"+services.BlobDigest([]byte("none")), alice, nil)
		a.refused(services.TokenMissing, "GET", "/api/v1/blobs/"+services.BlobDigest(page), "", nil)
		a.refused(services.BlobNotFound, "POST", "/api/v1/messages", alice, map[string]any{"kind": "assert", "body": "x",
			"evidence": []map[string]any{{"kind": "artifact", "ref": services.BlobDigest([]byte("none"))}}})
		a.ok(201, "POST", "/api/v1/messages", alice, map[string]any{"kind": "assert", "body": "x",
			"evidence": []map[string]any{{"kind": "artifact", "ref": services.BlobDigest(page)}}})
	})
}

type rawReply struct {
	status int
	header http.Header
	body   []byte
}

func rawRequest(t *testing.T, method, url, token, contentType string, body []byte) rawReply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return rawReply{resp.StatusCode, resp.Header, raw}
}

func servicesConfig() services.Config { return services.Config{} }

// TestStatementsOverHTTP: a confirmed closed thread has a signed
// statement at GET /api/v1/statements/{id}, and its key is published at
// /.well-known/parley-keys.json without a token; the statement verifies
// against that document alone.
func TestStatementsOverHTTP(t *testing.T) {
	eachServer(t, servicesConfig(), func(t *testing.T, a *api) {
		alice, ada := a.token("alice"), a.humanToken("ada")
		th := a.post(alice, map[string]any{"kind": "ask", "body": "Ship it?"}).str("thread", "id")
		a.ok(404, "GET", "/api/v1/statements/"+th, alice, nil)
		a.post(ada, map[string]any{"kind": "mark", "thread": th, "state": "closed", "body": "Done."})
		st := a.ok(200, "GET", "/api/v1/statements/"+th, alice, nil)
		keys := rawRequest(t, "GET", a.base+"/.well-known/parley-keys.json", "", "", nil)
		if keys.status != 200 {
			t.Fatalf("keys: %d %s", keys.status, keys.body)
		}
		var set services.KeySet
		if err := json.Unmarshal(keys.body, &set); err != nil || len(set.Keys) != 1 {
			t.Fatalf("keys %s: %v", keys.body, err)
		}
		env, err := services.ReadEnvelope(st.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := services.VerifyStatement(t.Context(), set.Keys, env)
		if err != nil || got.Verdict != "closed" || got.KeyID != set.Keys[0].KeyID {
			t.Fatalf("verify: %+v %v", got, err)
		}
	})
}

// TestAttestationAcrossForumsOverHTTP: a statement fetched from one forum
// over HTTP, stored in another with POST /api/v1/blobs and cited as
// attestation evidence, reads "signed by north: valid" in get_claim where
// north's published keys are trusted (docs/protocol.md §15.6).
func TestAttestationAcrossForumsOverHTTP(t *testing.T) {
	north := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	alice, ada := north.token("alice"), north.humanToken("ada")
	th := north.post(alice, map[string]any{"kind": "ask", "body": "Ship it?"}).str("thread", "id")
	north.post(ada, map[string]any{"kind": "decide", "thread": th, "body": "Yes."})
	statement := north.ok(200, "GET", "/api/v1/statements/"+th, alice, nil).raw
	keys := rawRequest(t, "GET", north.base+"/.well-known/parley-keys.json", "", "", nil).body
	trust, err := services.ParseTrustedKey("north", keys)
	if err != nil {
		t.Fatal(err)
	}
	eachServer(t, services.Config{TrustedKeys: []services.TrustedKey{trust}}, func(t *testing.T, south *api) {
		carol := south.token("carol")
		put := rawRequest(t, "POST", south.base+"/api/v1/blobs", carol, "application/json", statement)
		var blob services.Blob
		if err := json.Unmarshal(put.body, &blob); err != nil || put.status != 201 {
			t.Fatalf("put: %d %s", put.status, put.body)
		}
		cl := south.post(carol, map[string]any{"kind": "assert", "body": "North decided to ship.",
			"evidence": []map[string]any{{"kind": "attestation", "ref": blob.Digest}}}).str("claim", "id")
		got := south.ok(200, "GET", "/api/v1/claims/"+cl, carol, nil)
		if s := got.str("claim", "evidence", 0, "signature"); s != "signed by north: valid" {
			t.Fatalf("signature %q", s)
		}
	})
}
