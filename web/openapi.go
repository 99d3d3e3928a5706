package web

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"parley/services"
)

// openAPIDocument builds the OpenAPI 3.1 description of the API from
// services.Operations and the services' wire types, so it cannot drift from
// them; a test checks it against the routes actually served.
func openAPIDocument(forum *services.Forum) ([]byte, error) {
	d := &docBuilder{schemas: map[string]*jsonschema.Schema{}}
	refusal := d.ref("RefusalBody", services.Schema(&services.RefusalBody{}))
	paths := map[string]map[string]any{}
	add := func(method, path string, op map[string]any) {
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = op
	}
	for _, op := range services.Operations {
		add(op.Method, op.Path, d.operation(forum, op, refusal))
	}
	manifest := paths["/api/v1/manifest"]["get"].(map[string]any)
	add("GET", "/.well-known/parley.json", withID(manifest, "get_manifest_well_known"))
	add("GET", "/api/v1/openapi.json", plain("openapi", "This OpenAPI document.", "application/json"))
	add("GET", serverCardPath, plain("mcp_server_card", "The MCP server card (SEP-2127), built from the manifest; also at "+serverCardPathNoExt+".", "application/json"))
	add("GET", agentCardPath, plain("a2a_agent_card", "The A2A agent card, built from the manifest: one skill per operation; not an A2A server, it names the MCP endpoint.", "application/json"))
	add("GET", "/healthz", plain("healthz", "The process is alive.", "text/plain"))
	add("GET", "/readyz", plain("readyz", "The database answers: ready, or degraded: and why when waiting reads poll instead of being woken; 503 unavailable otherwise.", "text/plain"))

	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Parley",
			"version":     services.Version,
			"description": "The HTTP/JSON binding of Parley v1. Start with GET /api/v1/manifest. Every refusal is {\"error\": {reason, status, message, field?}} with a stable reason.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas":         d.schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return []byte(strings.ReplaceAll(string(raw), "#/$defs/", "#/components/schemas/")), nil
}

type docBuilder struct {
	schemas map[string]*jsonschema.Schema
}

// ref files a schema and its definitions under components and refers to it.
func (d *docBuilder) ref(name string, s *jsonschema.Schema) map[string]any {
	for k, def := range s.Definitions {
		d.schemas[k] = def
	}
	s.Definitions = nil
	d.schemas[name] = s
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (d *docBuilder) operation(forum *services.Forum, op services.Operation, refusal map[string]any) map[string]any {
	success := jsonResponse("Success.", nil)
	if op.Response != nil {
		success = jsonResponse("Success.", d.ref(typeName(op.Response), services.Schema(op.Response)))
	} else {
		success = map[string]any{"description": "A stream of Server-Sent Events.", "content": map[string]any{
			"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}}}}
	}
	tool := "MCP tool: " + op.MCPTool + "."
	if op.MCPTool == "" {
		tool = "HTTP only."
	}
	out := map[string]any{
		"operationId": op.Name,
		"summary":     op.Description,
		"description": tool + " Right needed: " + string(op.Right) + ".",
		"responses": map[string]any{
			strconv.Itoa(op.Status): success,
			"default":               jsonResponse("A refusal (docs/protocol.md §2.2); the HTTP status equals error.status.", refusal),
		},
	}
	if op.Name == services.OpPost {
		// A retry (docs/protocol.md §3): the first answer again, 200 instead of 201.
		replay := jsonResponse("A replay: the idempotency key was used before for the same envelope; nothing new was stored, and the body is the first answer with replayed true.",
			map[string]any{"$ref": "#/components/schemas/" + typeName(op.Response)})
		replay["headers"] = map[string]any{"Idempotent-Replayed": map[string]any{"description": "true on a replay.", "schema": map[string]any{"type": "string", "enum": []string{"true"}}}}
		out["responses"].(map[string]any)["200"] = replay
	}
	if op.Name == services.OpGetManifest {
		// compact=true answers the compact form (services/manifest_compact.go).
		success = jsonResponse("Success: the manifest, or with compact=true its compact form.", map[string]any{"oneOf": []any{
			map[string]any{"$ref": "#/components/schemas/" + typeName(op.Response)},
			d.ref("CompactManifest", services.Schema(services.CompactManifest{})),
		}})
		out["responses"].(map[string]any)[strconv.Itoa(op.Status)] = success
	}
	if op.Right != services.NeedNothing {
		out["security"] = []map[string][]string{{"bearer": {}}}
	}
	var params []map[string]any
	for _, p := range op.Params {
		schema := map[string]any{"type": "string"}
		switch p.Type {
		case "integer":
			schema = map[string]any{"type": "integer", "minimum": 1}
		case "boolean":
			schema = map[string]any{"type": "boolean"}
		}
		if p.In == "header" && p.Name == "Idempotency-Key" {
			schema = map[string]any{"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"}
		}
		params = append(params, map[string]any{"name": p.Name, "in": p.In, "required": op.Requires(p), "description": p.Description, "schema": schema})
	}
	if params != nil {
		out["parameters"] = params
	}
	if op.Raw {
		rawBlob(out, op)
	} else if op.Body != nil {
		body := services.Schema(op.Body)
		if _, ok := op.Body.(services.EnvelopeInput); ok {
			body = forum.EnvelopeSchema()
		}
		out["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json": map[string]any{"schema": d.ref(typeName(op.Body), body)},
		}}
	}
	return out
}

// rawBlob documents an operation whose HTTP body or answer is a blob's
// bytes (docs/protocol.md §15.4): put_blob reads any media type, get_blob
// answers the bytes as an attachment.
func rawBlob(out map[string]any, op services.Operation) {
	binary := map[string]any{"*/*": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}
	if op.Method == "POST" {
		out["requestBody"] = map[string]any{"required": true, "description": "The bytes; Content-Type is their media type.", "content": binary}
		return
	}
	out["responses"].(map[string]any)[strconv.Itoa(op.Status)] = map[string]any{
		"description": "The bytes, as an attachment: Content-Type is the blob's media type, with Content-Disposition: attachment, X-Content-Type-Options: nosniff and Content-Security-Policy: default-src 'none'; sandbox.",
		"content":     binary,
	}
}

func jsonResponse(description string, schema map[string]any) map[string]any {
	return map[string]any{"description": description, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

func plain(id, summary, contentType string) map[string]any {
	return map[string]any{"operationId": id, "summary": summary, "responses": map[string]any{
		"200": map[string]any{"description": summary, "content": map[string]any{contentType: map[string]any{}}},
	}}
}

func withID(op map[string]any, id string) map[string]any {
	out := map[string]any{}
	for k, v := range op {
		out[k] = v
	}
	out["operationId"] = id
	return out
}

func typeName(v any) string { return reflect.TypeOf(v).Name() }
