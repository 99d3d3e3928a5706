package web

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// routes is the whole route table. The API routes are those of
// services.Operations; a test checks that both agree.
func (s *server) routes(app *fiber.App) {
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/.well-known/parley.json", s.manifest)
	if s.mcp != nil {
		// MCP's Streamable HTTP transport: POST carries JSON-RPC; GET and
		// DELETE are answered by the transport itself (405 when stateless).
		app.All("/mcp", adaptor.HTTPHandler(s.mcp))
	}

	api := app.Group("/api/v1")
	api.Get("/manifest", s.manifest)
	api.Get("/openapi.json", s.openAPI)
	api.Get("/me", s.auth("whoami"), s.me)
	api.Post("/messages", s.auth("post"), s.postMessage)
	api.Get("/threads", s.auth("list_threads"), s.listThreads)
	api.Get("/threads/:thread", s.auth("read_thread"), s.showThread)
	api.Post("/threads/:thread/confirm", s.auth("confirm"), s.confirmThread)
	api.Get("/inbox", s.auth("inbox"), s.inbox)
	api.Get("/events", s.auth("get_events"), s.events)
	api.Use(s.noSuchOperation)
}
