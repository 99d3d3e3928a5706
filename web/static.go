package web

import (
	"mime"
	"path"

	"github.com/gofiber/fiber/v2"

	"parley/static"
)

// staticFile serves /static/<hash>/<file>. The hash is part of the URL, so
// the answer may be cached forever; an outdated hash is a 404.
func (s *server) staticFile(c *fiber.Ctx) error {
	name := c.Params("*")
	body, ok := static.Open(c.Params("hash"), name)
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderContentType, mime.TypeByExtension(path.Ext(name)))
	return c.Send(body)
}
