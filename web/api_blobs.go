package web

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// blobPolicy is the Content-Security-Policy of a blob's bytes: nothing may
// load or run, even if a browser were to render them (docs/protocol.md
// §15.4: never inline as HTML).
const blobPolicy = "default-src 'none'; sandbox"

// putBlob answers put_blob: the body is the bytes, Content-Type their
// media type.
func (s *server) putBlob(c *fiber.Ctx) error {
	out, err := s.forum.PutBlob(c.UserContext(), caller(c), c.Body(), c.Get(fiber.HeaderContentType))
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusCreated, out)
}

// getBlob answers get_blob with the bytes themselves, as an attachment
// that a browser downloads and never renders or sniffs.
func (s *server) getBlob(c *fiber.Ctx) error {
	digest, err := url.PathUnescape(c.Params("digest"))
	if err != nil {
		digest = c.Params("digest")
	}
	out, err := s.forum.GetBlob(c.UserContext(), caller(c), digest)
	if err != nil {
		return err
	}
	hex := out.Digest[len("sha256:"):]
	c.Set(fiber.HeaderContentType, out.MediaType)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="sha256-`+hex+`"`)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, blobPolicy)
	c.Set(fiber.HeaderContentLength, strconv.Itoa(len(out.Data)))
	c.Set(fiber.HeaderETag, `"`+out.Digest+`"`)
	c.Set(fiber.HeaderCacheControl, "private, max-age=31536000, immutable")
	return c.Status(fiber.StatusOK).Send(out.Data)
}
