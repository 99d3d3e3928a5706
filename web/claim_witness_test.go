package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// northStatement has another forum ("north", on SQLite) verify a claim and
// answers its signed statement, as bytes to store here, and its keys, to
// trust (docs/protocol.md §15.6).
func northStatement(t *testing.T) ([]byte, services.TrustedKey) {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Fresh(t, "sqlite")
	north := services.New(db, services.Config{Realm: "north"})
	as := func(handle string, rights ...services.Right) services.Caller {
		tok, err := north.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: append([]services.Right{services.RightRead, services.RightWrite}, rights...)})
		if err != nil {
			t.Fatal(err)
		}
		who, err := north.Authenticate(ctx, tok.Secret)
		if err != nil {
			t.Fatal(err)
		}
		return who
	}
	post := func(who services.Caller, env map[string]any) services.Posted {
		raw, _ := json.Marshal(env)
		p, err := north.Post(ctx, who, raw)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ev := []map[string]any{{"kind": "log", "ref": "job 1"}}
	p := post(as("alice"), map[string]any{"kind": "assert", "body": "The cache halves p99.", "evidence": ev})
	th, cl := p.Thread.ID, p.Claim.ID
	post(as("bob"), map[string]any{"kind": "attest", "thread": th, "claim": cl, "body": "Reproduced.", "evidence": ev})
	post(as("vera", services.RightVerify), map[string]any{"kind": "verify", "thread": th, "claim": cl, "body": "Checked.", "evidence": ev})
	reader := as("vic", services.RightVerify)
	post(reader, map[string]any{"kind": "verify", "thread": th, "claim": cl, "body": "Checked too.", "evidence": ev})
	st, err := north.GetStatement(ctx, reader, cl)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := north.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rawKeys, _ := json.Marshal(keys)
	trust, err := services.ParseTrustedKey("north", rawKeys)
	if err != nil {
		t.Fatal(err)
	}
	envelope, _ := json.Marshal(st.Statement.Envelope)
	return envelope, trust
}

// putBlob stores bytes as token and answers their digest.
func putBlob(t *testing.T, a *api, token, media string, data []byte) string {
	t.Helper()
	resp := rawRequest(t, "POST", a.base+"/api/v1/blobs", token, media, data)
	if resp.status != http.StatusCreated {
		t.Fatalf("put blob: %d %s", resp.status, resp.body)
	}
	return services.BlobDigest(data)
}

// TestClaimEvidenceForPeople: a claim page shows blob evidence with its size
// and type as a download, never inline, and a statement cited as evidence
// with its signature's status, for the claim's own evidence and for a
// verification's; the blob downloads as an attachment for a signed-in
// human (docs/protocol.md §15.4, §15.6; issue 25 item 7).
func TestClaimEvidenceForPeople(t *testing.T) {
	statement, north := northStatement(t)
	eachServer(t, services.Config{TrustedKeys: []services.TrustedKey{north}}, func(t *testing.T, a *api) {
		b := signedIn(t, a)
		alice := a.token("alice")
		vera := a.token("vera", services.RightRead, services.RightWrite, services.RightVerify)
		log := []byte("p99 0.79 ms over 10 min\n<script>alert(1)</script>\n")
		logDigest := putBlob(t, a, alice, "text/plain", log)
		signed := putBlob(t, a, alice, "application/json", statement)
		forged := putBlob(t, a, alice, "application/json", []byte(`{"payloadType":"x","payload":"","signatures":[]}`))
		p := a.post(alice, map[string]any{"kind": "assert", "body": "North verified that the cache halves p99.", "evidence": []map[string]any{
			{"kind": "artifact", "ref": logDigest}, {"kind": "attestation", "ref": signed}}})
		th, cl := p.str("thread", "id"), p.str("claim", "id")
		a.post(a.token("bob"), map[string]any{"kind": "attest", "thread": th, "claim": cl, "body": "Seen.", "evidence": []map[string]any{{"kind": "log", "ref": "job 2"}}})
		a.post(vera, map[string]any{"kind": "verify", "thread": th, "claim": cl, "body": "Forged?", "evidence": []map[string]any{{"kind": "attestation", "ref": forged}}})

		for _, path := range []string{"/claims/" + cl, "/threads/" + th, "/claims"} {
			doc := b.page("GET", path, nil, 200)
			card := doc.Find(`[data-testid="claim"][data-claim="` + cl + `"]`).First()
			blob := card.Find(`[data-testid="proof"][data-kind="artifact"]`)
			link := blob.Find(`[data-testid="blob-link"]`)
			if _, download := link.Attr("download"); !download || link.AttrOr("href", "") != "/blobs/"+logDigest || link.AttrOr("title", "") != logDigest {
				t.Fatalf("%s: the blob is not a download: %v", path, link.Nodes)
			}
			if meta := blob.Find(`[data-testid="blob-meta"]`).Text(); meta != fmt.Sprintf("%d B · text/plain · download", len(log)) {
				t.Fatalf("%s: blob meta %q", path, meta)
			}
			if strings.Contains(doc.Text(), "p99 0.79 ms") {
				t.Fatalf("%s: the blob's bytes are shown inline", path)
			}
			if sig := card.Find(`[data-testid="proof"][data-kind="attestation"] [data-testid="signature"]`).First(); sig.AttrOr("data-valid", "") != "true" || sig.Text() != "signed by north: valid" {
				t.Fatalf("%s: the signed statement shows %q", path, sig.Text())
			}
			if sig := card.Find(`[data-testid="verification"] [data-testid="signature"]`); sig.AttrOr("data-valid", "") != "false" || sig.Text() != services.SignatureUnverified {
				t.Fatalf("%s: the verification's forged statement shows %q", path, sig.Text())
			}
		}
		resp, err := b.http.Get(a.base + "/blobs/" + logDigest)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Length") != fmt.Sprint(len(log)) {
			t.Fatalf("download: %d %v", resp.StatusCode, resp.Header)
		}
		if resp, _ := http.Get(a.base + "/blobs/" + logDigest); resp.Request.URL.Path != "/signin" && resp.StatusCode == 200 {
			t.Fatalf("a blob downloads without signing in: %s", resp.Request.URL)
		}
	})
}
