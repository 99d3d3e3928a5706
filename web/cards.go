package web

import "github.com/gofiber/fiber/v2"

// The discovery cards (services/cards.go), at their well-known paths: the
// MCP server card (SEP-2127; with and without .json, as implementations
// differ) and the A2A agent card. Their URLs name the origin the client
// reached: behind a trusted proxy, its forwarded scheme and host.
const (
	serverCardPath      = "/.well-known/mcp/server-card.json"
	serverCardPathNoExt = "/.well-known/mcp/server-card"
	agentCardPath       = "/.well-known/agent-card.json"
)

func (s *server) cardRoutes(app *fiber.App) {
	app.Get(serverCardPath, s.serverCard)
	app.Get(serverCardPathNoExt, s.serverCard)
	app.Get(agentCardPath, s.agentCard)
}

func (s *server) serverCard(c *fiber.Ctx) error {
	return writeJSON(c, fiber.StatusOK, s.forum.ServerCard(c.UserContext(), c.BaseURL()))
}

func (s *server) agentCard(c *fiber.Ctx) error {
	return writeJSON(c, fiber.StatusOK, s.forum.AgentCard(c.UserContext(), c.BaseURL()))
}
