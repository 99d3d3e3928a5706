package mcp

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// goUnmarshal matches what encoding/json says when a message's params do
// not fit the MCP library's Go types.
var goUnmarshal = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field \w+\.([\w.]+) |value )of type \S+`)

// tidy rewrites the message of a JSON-RPC error from the MCP library that
// speaks of Go (`json: cannot unmarshal number into Go struct field
// CallToolRequest.params.name of type string`) in the words a model reads
// (`params.name must not be a number`). Any other message passes as it is.
func tidy(msg []byte) []byte {
	if !bytes.Contains(msg, []byte("json: cannot unmarshal")) {
		return msg
	}
	var m map[string]any
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	e, ok := m["error"].(map[string]any)
	text, _ := e["message"].(string)
	if !ok || text == "" {
		return msg
	}
	e["message"] = goUnmarshal.ReplaceAllStringFunc(text, func(s string) string {
		parts := goUnmarshal.FindStringSubmatch(s)
		what := parts[1]
		switch what {
		case "array":
			what = "a list"
		case "object":
			what = "an object"
		case "bool":
			what = "true or false"
		default:
			what = "a " + what
		}
		if parts[2] == "" {
			return "the message does not have the shape this method takes (" + what + " where something else belongs)"
		}
		return parts[2] + " must not be " + what
	})
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}
