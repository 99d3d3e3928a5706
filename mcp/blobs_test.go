package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestBlobResource: a blob stored with put_blob reads back byte for byte
// with get_blob and as the resource parley://blobs/sha256/<hex>, which the
// server lists as a template (docs/protocol.md §15.4); an unknown blob is
// an error naming blob_not_found.
func TestBlobResource(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := start(t, db, services.Config{})
		c := httpClient(t, srv.base+"/mcp", srv.token(t, "alice"))
		data := []byte("\x00\xffbytes of a log\n")
		failed, put := callTool(t, c, "put_blob", map[string]any{"data": base64.StdEncoding.EncodeToString(data), "media_type": "text/plain"})
		if failed || put["digest"] != services.BlobDigest(data) {
			t.Fatalf("put_blob: %v", put)
		}
		failed, got := callTool(t, c, "get_blob", map[string]any{"digest": put["digest"]})
		if raw, _ := base64.StdEncoding.DecodeString(got["data"].(string)); failed || !bytes.Equal(raw, data) {
			t.Fatalf("get_blob: %v", got)
		}
		templates, err := c.ListResourceTemplates(t.Context(), mcpgo.ListResourceTemplatesRequest{})
		blobTemplate := false
		for _, tpl := range templates.ResourceTemplates {
			blobTemplate = blobTemplate || tpl.URITemplate.Raw() == "parley://blobs/sha256/{hex}"
		}
		if err != nil || !blobTemplate {
			t.Fatalf("templates: %+v %v", templates, err)
		}
		uri := "parley://blobs/sha256/" + services.BlobDigest(data)[len("sha256:"):]
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(t.Context(), req)
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("read %s: %+v %v", uri, res, err)
		}
		blob, ok := res.Contents[0].(mcpgo.BlobResourceContents)
		if raw, _ := base64.StdEncoding.DecodeString(blob.Blob); !ok || !bytes.Equal(raw, data) || blob.MIMEType != "text/plain" || blob.URI != uri {
			t.Fatalf("resource %+v", res.Contents[0])
		}
		req.Params.URI = "parley://blobs/sha256/" + services.BlobDigest([]byte("none"))[len("sha256:"):]
		if _, err := c.ReadResource(t.Context(), req); err == nil || !bytes.Contains([]byte(err.Error()), []byte("blob_not_found")) {
			t.Fatalf("an unknown blob read: %v", err)
		}
	})
}

// TestAttestationAcrossForumsOverMCP: another forum's signed statement,
// stored with put_blob and cited as attestation evidence, reads "signed
// by north: valid" in get_claim where north's keys are trusted, and
// "signature not verified" in a forum that trusts nobody.
func TestAttestationAcrossForumsOverMCP(t *testing.T) {
	northDB := dbtest.Fresh(t, "sqlite")
	north := start(t, northDB, services.Config{})
	ctx := t.Context()
	who := func(secret string) services.Caller { c, _ := north.forum.Authenticate(ctx, secret); return c }
	alice, ada := who(north.token(t, "alice")), who(north.humanToken(t, "ada"))
	p, err := north.forum.Post(ctx, alice, []byte(`{"kind":"ask","body":"Ship it?"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := north.forum.Post(ctx, ada, []byte(`{"kind":"decide","thread":"`+p.Thread.ID+`","body":"Yes."}`)); err != nil {
		t.Fatal(err)
	}
	st, err := north.forum.GetStatement(ctx, alice, p.Thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := north.forum.Keys(ctx)
	envelope, _ := json.Marshal(st.Statement.Envelope)
	for name, cfg := range map[string]services.Config{
		"signed by north: valid":     {TrustedKeys: []services.TrustedKey{{Name: "north", Keys: keys.Keys}}},
		services.SignatureUnverified: {},
	} {
		dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
			srv := start(t, db, cfg)
			c := httpClient(t, srv.base+"/mcp", srv.token(t, "carol"))
			_, put := callTool(t, c, "put_blob", map[string]any{"data": base64.StdEncoding.EncodeToString(envelope), "media_type": "application/json"})
			failed, posted := callTool(t, c, "post", map[string]any{"kind": "assert", "body": "North decided.", "evidence": []any{map[string]any{"kind": "attestation", "ref": put["digest"]}}})
			if failed {
				t.Fatalf("post: %v", posted)
			}
			_, got := callTool(t, c, "get_claim", map[string]any{"claim": dig(posted, "claim", "id")})
			if s := dig(got, "claim", "evidence", 0, "signature"); s != name {
				t.Fatalf("signature %v, want %q", s, name)
			}
		})
	}
}
