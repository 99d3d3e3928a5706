package web

import (
	"encoding/json"
	"fmt"

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
