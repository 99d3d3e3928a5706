package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
)

const jsonType = "application/json; charset=utf-8"

// writeJSON encodes v before touching the response, so a value that fails
// to encode never leaves a half-written body behind.
func writeJSON(c *fiber.Ctx, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	c.Set(fiber.HeaderContentType, jsonType)
	return c.Status(status).Send(body)
}

// render writes a templ component. It renders into a buffer first, so a
// component that fails midway never leaves a half page behind a 200.
//
// It renders without the request's deadline (keeping the context's
// values): templ stops at a done context, and rendering reads only what
// is in hand, into memory. Under the deadline, a request that missed it
// could not render even the page saying so, and its 503 unavailable
// became a bare 500 (a sign-in that missed its deadline, issue 23).
func render(c *fiber.Ctx, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(context.WithoutCancel(c.UserContext()), &buf); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	c.Type("html", "utf-8")
	return c.Status(status).Send(buf.Bytes())
}
