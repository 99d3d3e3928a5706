package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
// and the refusal object {"error": {…}}, as one object whose fields are
// both's. Independent clients validate structuredContent
// against it even when isError is set, so it must admit refusals too.
//
// It is shallow: the top-level fields with their JSON types, nested
// objects only as "object" or "array". The full
// schemas of every tool repeated Message, Thread and their definitions
// (15 tools, 70k characters, most of tools/list); a model reads the
// fields in the result itself, and a client that wants the whole shape
// reads it once, as the resource parley://schemas/<tool> (fullOutputSchema).
func outputSchema(op services.Operation) json.RawMessage {
	var out bytes.Buffer
	shallow(&out, append(responses(op), services.Schema(&services.RefusalBody{}))...)
	return out.Bytes()
}

// responses are the types a tool may answer with: get_manifest's compact
// form besides the manifest.
func responses(op services.Operation) []*jsonschema.Schema {
	out := []*jsonschema.Schema{services.Schema(op.Response)}
	if op.Name == services.OpGetManifest {
		out = append(out, services.Schema(services.CompactManifest{}))
	}
	return out
}

// shallow writes the top level of the schemas as one: every field any of
// them has, with every JSON type any gives it. Which fields are always
// there the result shows; the full schema says it too.
func shallow(w *bytes.Buffer, schemas ...*jsonschema.Schema) {
	var names []string
	types := map[string][]string{}
	for _, s := range schemas {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			if _, seen := types[pair.Key]; !seen {
				names = append(names, pair.Key)
				types[pair.Key] = nil
			}
			for _, t := range jsonTypes(pair.Value, s.Definitions) {
				if !slices.Contains(types[pair.Key], t) {
					types[pair.Key] = append(types[pair.Key], t)
				}
			}
		}
	}
	w.WriteString(`{"type":"object","properties":{`)
	for i, n := range names {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSON(w, n)
		switch t := types[n]; len(t) {
		case 0:
			w.WriteString(`:{}`)
		case 1:
			w.WriteString(`:{"type":`)
			writeJSON(w, t[0])
			w.WriteByte('}')
		default:
			w.WriteString(`:{"type":`)
			writeJSON(w, t)
			w.WriteByte('}')
		}
	}
	w.WriteString(`}}`)
}

// jsonTypes are the JSON types a schema admits, following references;
// none when it does not say (any value).
func jsonTypes(s *jsonschema.Schema, defs jsonschema.Definitions) []string {
	switch {
	case s == nil:
		return nil
	case s.Ref != "":
		return jsonTypes(defs[strings.TrimPrefix(s.Ref, "#/$defs/")], defs)
	case s.Type != "":
		return []string{s.Type}
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		var out []string
		for _, alt := range slices.Concat(s.OneOf, s.AnyOf) {
			ts := jsonTypes(alt, defs)
			if ts == nil {
				return nil
			}
			for _, t := range ts {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
		return out
	case s.Properties != nil && s.Properties.Len() > 0:
		return []string{"object"}
	}
	return nil
}

// fullOutputSchema is what outputSchema leaves out: the success body's
// whole schema with its definitions, as the resource parley://schemas/<tool>
// gives it.
func fullOutputSchema(op services.Operation) json.RawMessage {
	all := responses(op)
	if len(all) == 1 {
		return mustJSON(all[0])
	}
	defs := jsonschema.Definitions{}
	var alts []*jsonschema.Schema
	for _, s := range all {
		for name, def := range s.Definitions {
			defs[name] = def
		}
		s.Definitions = nil
		alts = append(alts, s)
	}
	return mustJSON(&jsonschema.Schema{OneOf: alts, Definitions: defs})
}

func writeJSON(w *bytes.Buffer, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and lists of strings always encode
	}
	w.Write(raw)
}

func mustJSON(s *jsonschema.Schema) json.RawMessage {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err) // a schema built from Go types always encodes
	}
	return raw
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
