package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"

	"parley/services"
)

// inputSchema is a tool's arguments: the HTTP path and query parameters and
// the JSON body merged into one object (docs/protocol.md §2.1). post's is the
// envelope itself.
func inputSchema(forum *services.Forum, op services.Operation) json.RawMessage {
	if op.Name == services.OpPost {
		return mustJSON(forum.EnvelopeSchema())
	}
	s := &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties(), AdditionalProperties: jsonschema.FalseSchema}
	for _, p := range op.Params {
		s.Properties.Set(p.Name, paramSchema(forum, p))
		if op.Requires(p) {
			s.Required = append(s.Required, p.Name)
		}
	}
	if op.Body != nil {
		body := services.Schema(op.Body)
		for pair := body.Properties.Oldest(); pair != nil; pair = pair.Next() {
			s.Properties.Set(pair.Key, pair.Value)
		}
		s.Required = append(s.Required, body.Required...)
		s.Definitions = body.Definitions
	}
	return mustJSON(s)
}

func paramSchema(forum *services.Forum, p services.Param) *jsonschema.Schema {
	switch {
	case p.Name == "depth":
		return &jsonschema.Schema{Type: "integer", Minimum: json.Number("1"), Maximum: json.Number(itoa(forum.Limits().ThreadMaxDepth)), Description: p.Description}
	case p.Name == "wait":
		return &jsonschema.Schema{Type: "integer", Minimum: json.Number("0"), Maximum: json.Number(itoa(forum.Limits().WaitMaxSeconds)), Description: p.Description}
	case p.Type == "boolean":
		return &jsonschema.Schema{Type: "boolean", Description: p.Description}
	case p.Type == "integer":
		return &jsonschema.Schema{Type: "integer", Minimum: json.Number("1"), Maximum: json.Number(itoa(forum.Limits().PageMax)), Description: p.Description}
	case p.Name == "extension":
		return &jsonschema.Schema{Type: "string", Pattern: fmt.Sprintf("^[a-z0-9][a-z0-9._-]{0,%d}$", forum.Limits().ExtensionMaxChars-1), Description: p.Description}
	case p.Name == "branch":
		s := services.MessageRef{}.JSONSchema()
		s.Description = p.Description
		return s
	case p.Name == "thread":
		s := services.Ref{}.JSONSchema()
		s.Description = p.Description
		return s
	case p.Name == "claim":
		s := services.ClaimRef{}.JSONSchema()
		s.Description = p.Description
		return s
	case p.Name == "state":
		s := services.State("").JSONSchema()
		s.Description = p.Description
		return s
	case p.Name == "kind":
		s := services.Kind("").JSONSchema()
		s.Description = p.Description
		return s
	case p.Name == "status":
		s := services.ClaimStatus("").JSONSchema()
		s.Description = p.Description
		return s
	}
	return &jsonschema.Schema{Type: "string", Description: p.Description}
}

// outputSchema admits both answers of a tool: the operation's success body
// and the refusal object. Independent clients validate structuredContent
// against it even when isError is set, so it must admit refusals too.
func outputSchema(op services.Operation) json.RawMessage {
	ok := services.Schema(op.Response)
	refusal := services.Schema(&services.RefusalBody{})
	defs := jsonschema.Definitions{}
	for _, s := range []*jsonschema.Schema{ok, refusal} {
		for name, def := range s.Definitions {
			defs[name] = def
		}
		s.Definitions = nil
	}
	name := reflect.TypeOf(op.Response).Name()
	defs[name], defs["RefusalBody"] = ok, refusal
	return mustJSON(&jsonschema.Schema{
		Type:        "object",
		Description: "What " + op.MCPTool + " answers; when isError is true, the refusal {\"error\": {reason, status, message, field?}} instead.",
		AnyOf:       []*jsonschema.Schema{{Ref: "#/$defs/" + name}, {Ref: "#/$defs/RefusalBody"}},
		Definitions: defs,
	})
}

func mustJSON(s *jsonschema.Schema) json.RawMessage {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err) // a schema built from Go types always encodes
	}
	return raw
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
