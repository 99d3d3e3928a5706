package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// getJSON fetches a path of the running server and decodes it.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s %.200s", url, res.StatusCode, res.Header.Get("Content-Type"), raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestCardsFollowTheManifest reads the MCP server card and the A2A agent
// card at their well-known paths and holds them to the manifest the same
// server serves: its version and digest, every operation as a skill with
// its description and right, every MCP tool in the server card, and
// endpoints on the origin the client reached. The compact manifest is
// served on the same route.
func TestCardsFollowTheManifest(t *testing.T) {
	a := startServer(t, dbtest.Fresh(t, "sqlite"), services.Config{})
	var m services.Manifest
	getJSON(t, a.base+"/api/v1/manifest", &m)
	digest := a.forum.ManifestDigest()

	for _, path := range []string{"/.well-known/mcp/server-card.json", "/.well-known/mcp/server-card"} {
		var card services.ServerCard
		getJSON(t, a.base+path, &card)
		if card.Schema != services.ServerCardSchema || card.Version != m.Server.Version || !strings.Contains(card.Description, m.Profiles[0].Name) ||
			!strings.HasSuffix(card.Name, "/"+m.Realm) {
			t.Errorf("%s: %+v does not describe the manifest's server", path, card)
		}
		if len(card.Remotes) != 1 || card.Remotes[0].Type != "streamable-http" || card.Remotes[0].URL != a.base+"/mcp" ||
			len(card.Remotes[0].Headers) != 1 || card.Remotes[0].Headers[0].Name != "Authorization" || !card.Remotes[0].Headers[0].IsSecret {
			t.Errorf("%s: remotes %+v", path, card.Remotes)
		}
		meta, _ := card.Meta[services.CardManifestKey].(map[string]any)
		var tools []string
		for _, op := range m.Operations {
			if op.MCPTool != "" {
				tools = append(tools, op.MCPTool)
			}
		}
		got, _ := json.Marshal(meta["tools"])
		want, _ := json.Marshal(tools)
		if meta["digest"] != digest || meta["url"] != a.base+"/api/v1/manifest" || string(got) != string(want) {
			t.Errorf("%s: _meta %v, want the manifest's digest %s and tools %s", path, meta, digest, want)
		}
	}

	var agent services.AgentCard
	getJSON(t, a.base+"/.well-known/agent-card.json", &agent)
	if agent.Version != m.Server.Version || agent.DocumentationURL != a.base+"/api/v1/openapi.json" || len(agent.Skills) != len(m.Operations) {
		t.Fatalf("agent card %+v does not follow the manifest (%d operations)", agent, len(m.Operations))
	}
	for i, op := range m.Operations {
		s := agent.Skills[i]
		if s.ID != string(op.Name) || s.Description != op.Description || !slices.Contains(s.Tags, "right:"+string(op.Right)) ||
			(op.MCPTool != "") != slices.Contains(s.Tags, "mcp:"+op.MCPTool) {
			t.Errorf("skill %d %+v is not the operation %s", i, s, op.Name)
		}
	}
	ext := agent.Capabilities.Extensions
	if len(ext) != 1 || ext[0].URI != services.CardMCPExtension || ext[0].Params["url"] != a.base+"/mcp" || ext[0].Params["digest"] != digest {
		t.Errorf("the agent card does not name the MCP endpoint: %+v", ext)
	}
	if agent.SecuritySchemes["bearer"] == nil || len(agent.Security) != 1 || agent.SupportedInterfaces == nil || len(agent.SupportedInterfaces) != 0 {
		t.Errorf("security %v %v, interfaces %v", agent.SecuritySchemes, agent.Security, agent.SupportedInterfaces)
	}

	var compact services.CompactManifest
	getJSON(t, a.base+"/api/v1/manifest?compact=true", &compact)
	if compact.Digest != digest || len(compact.Reasons) != len(m.Reasons) {
		t.Errorf("compact manifest over HTTP: digest %s, %d reasons", compact.Digest, len(compact.Reasons))
	}
	a.refused(services.InvalidBody, "GET", "/api/v1/manifest?compact=maybe", "", nil)
}
