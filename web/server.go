package web

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"

	"parley/services"
)

// Options configures the application.
type Options struct {
	Logger *slog.Logger // request and error log; slog.Default() when nil
	MCP    http.Handler // the MCP Streamable HTTP endpoint, served at /mcp
}

// server holds what the handlers share: the services and the logger.
type server struct {
	forum   *services.Forum
	log     *slog.Logger
	openapi []byte       // the OpenAPI document; it depends only on the code
	mcp     http.Handler // nil: no /mcp route
}

// New builds the Fiber application serving forum.
func New(forum *services.Forum, opts Options) (*fiber.App, error) {
	doc, err := openAPIDocument(forum)
	if err != nil {
		return nil, fmt.Errorf("web: openapi document: %w", err)
	}
	s := &server{forum: forum, log: opts.Logger, openapi: doc, mcp: opts.MCP}
	if s.log == nil {
		s.log = slog.Default()
	}
	app := fiber.New(fiber.Config{
		AppName:               "parley",
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		// Larger bodies are refused from their Content-Length, unread.
		BodyLimit: forum.Limits().RequestMaxBytes,
	})
	app.Use(secureHeaders)
	app.Use(requestid.New())
	app.Use(s.logRequests)
	app.Use(recover.New())
	s.routes(app)
	return app, nil
}
