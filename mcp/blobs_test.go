package mcp_test

import (
	"bytes"
	"encoding/base64"
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
		if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate.Raw() != "parley://blobs/sha256/{hex}" {
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
