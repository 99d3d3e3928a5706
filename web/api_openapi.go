package web

import "github.com/gofiber/fiber/v2"

// openAPI serves the OpenAPI document, built once at start.
func (s *server) openAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, jsonType)
	return c.Send(s.openapi)
}
