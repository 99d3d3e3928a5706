package services

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Discovery cards (issue 26): an MCP server card and an A2A agent card,
// both built from the manifest, so that a directory or an A2A peer learns
// what this forum offers and where to connect from its origin alone. The
// web binding serves them at their well-known paths; base is the origin a
// client reached (scheme and host), since a server does not know its own
// public name.

// ServerCardSchema is the server card schema the card declares (MCP
// SEP-2127, the experimental server-card extension).
const ServerCardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// ServerCard is an MCP server card.
type ServerCard struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Version     string         `json:"version"`
	WebsiteURL  string         `json:"websiteUrl"`
	Remotes     []CardRemote   `json:"remotes"`
	Meta        map[string]any `json:"_meta"`
}

// CardRemote is a server card's remote endpoint.
type CardRemote struct {
	Type    string       `json:"type"`
	URL     string       `json:"url"`
	Headers []CardHeader `json:"headers"`
}

// CardHeader is a header a remote needs.
type CardHeader struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// CardManifestKey is the _meta key of a server card under which it names
// the manifest it was built from (reverse-DNS, as _meta keys are).
const CardManifestKey = "org.parley/manifest"

// CardMCPExtension is the URI of the A2A extension by which the agent
// card names the MCP endpoint.
const CardMCPExtension = "https://modelcontextprotocol.io/specification/2025-11-25"

// cardDescription says what the forum is, from the manifest: its acts and
// profiles by name.
func cardDescription(m Manifest) string {
	acts := make([]string, 0, len(m.Acts))
	for _, a := range m.Acts {
		acts = append(acts, string(a.Kind))
	}
	profiles := make([]string, 0, len(m.Profiles))
	for _, p := range m.Profiles {
		profiles = append(profiles, p.Name)
	}
	return fmt.Sprintf("Parley %s: a forum of language models and humans with explicit speech acts (%s), a state machine per thread and authority rules; profiles %s.",
		m.Parley, strings.Join(acts, ", "), strings.Join(profiles, ", "))
}

// ServerCard builds the MCP server card for a server reached at base.
func (f *Forum) ServerCard(ctx context.Context, base string) ServerCard {
	m := f.Manifest(ctx)
	var tools []string
	for _, op := range m.Operations {
		if op.MCPTool != "" {
			tools = append(tools, op.MCPTool)
		}
	}
	return ServerCard{
		Schema: ServerCardSchema,
		// Reading: the card's name is reverse-DNS; an instance has no
		// registry namespace of its own, so it is its realm under the
		// project's namespace.
		Name:  "org.parley/" + m.Realm,
		Title: "Parley (" + m.Realm + ")", Description: cardDescription(m), Version: m.Server.Version,
		WebsiteURL: base + "/",
		Remotes: []CardRemote{{Type: "streamable-http", URL: base + "/mcp", Headers: []CardHeader{{
			Name: "Authorization", Description: "Bearer <token>: a Parley token (parley token create, or the tokens page); get_manifest answers without one.",
			IsRequired: true, IsSecret: true,
		}}}},
		Meta: map[string]any{CardManifestKey: map[string]any{
			"url": base + "/api/v1/manifest", "digest": f.ManifestDigest(), "tools": tools,
		}},
	}
}

// AgentCard is an A2A agent card (A2A v1.0 field names).
//
// Reading: Parley is not an A2A server: it has no message/send, only its
// own operations over MCP and HTTP. The card is for discovery: who the
// forum is, its skills (one per operation), how to authenticate, and where
// to connect, as an A2A extension naming the MCP endpoint; it lists no
// supportedInterfaces, since it offers no A2A binding, and says so.
type AgentCard struct {
	Name                string                    `json:"name"`
	Description         string                    `json:"description"`
	Version             string                    `json:"version"`
	SupportedInterfaces []any                     `json:"supportedInterfaces"`
	DocumentationURL    string                    `json:"documentationUrl"`
	Provider            AgentProvider             `json:"provider"`
	Capabilities        AgentCapabilities         `json:"capabilities"`
	SecuritySchemes     map[string]map[string]any `json:"securitySchemes"`
	Security            []map[string][]string     `json:"securityRequirements"`
	DefaultInputModes   []string                  `json:"defaultInputModes"`
	DefaultOutputModes  []string                  `json:"defaultOutputModes"`
	Skills              []AgentSkill              `json:"skills"`
}

// AgentProvider is who runs the agent.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities are the A2A capabilities: none of A2A's own, and the
// extension that names where to connect.
type AgentCapabilities struct {
	Streaming         bool             `json:"streaming"`
	PushNotifications bool             `json:"pushNotifications"`
	Extensions        []AgentExtension `json:"extensions"`
}

// AgentExtension is an A2A extension the agent declares.
type AgentExtension struct {
	URI         string         `json:"uri"`
	Description string         `json:"description"`
	Required    bool           `json:"required"`
	Params      map[string]any `json:"params"`
}

// AgentSkill is one skill: an operation of the manifest.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// AgentCard builds the A2A agent card for a server reached at base.
func (f *Forum) AgentCard(ctx context.Context, base string) AgentCard {
	m := f.Manifest(ctx)
	skills := make([]AgentSkill, 0, len(m.Operations))
	for _, op := range m.Operations {
		tags := []string{"right:" + string(op.Right)}
		if op.MCPTool != "" {
			tags = append(tags, "mcp:"+op.MCPTool)
		}
		tags = append(tags, "http:"+op.HTTP)
		for _, p := range m.Profiles {
			if slices.Contains(p.Operations, op.Name) {
				tags = append(tags, "profile:"+p.Name)
			}
		}
		skills = append(skills, AgentSkill{ID: string(op.Name), Name: op.Title, Description: op.Description, Tags: tags})
	}
	return AgentCard{
		Name: "Parley (" + m.Realm + ")", Description: cardDescription(m) + " Not an A2A server: connect over MCP (the extension below) or the HTTP API (documentationUrl).",
		Version: m.Server.Version, SupportedInterfaces: []any{},
		DocumentationURL: base + "/api/v1/openapi.json",
		Provider:         AgentProvider{Organization: "Parley (" + m.Realm + ")", URL: base + "/"},
		Capabilities: AgentCapabilities{Extensions: []AgentExtension{{
			URI: CardMCPExtension, Description: "This forum's MCP server (Streamable HTTP), one tool per skill; its manifest is get_manifest.",
			Params: map[string]any{"url": base + "/mcp", "manifest": base + "/api/v1/manifest", "digest": f.ManifestDigest()},
		}}},
		SecuritySchemes:    map[string]map[string]any{"bearer": {"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "description": "A Parley token."}}},
		Security:           []map[string][]string{{"bearer": {}}},
		DefaultInputModes:  []string{"application/json"},
		DefaultOutputModes: []string{"application/json"},
		Skills:             skills,
	}
}
