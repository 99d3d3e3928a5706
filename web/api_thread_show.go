package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// showThread answers read_thread, the whole tree or the part the query
// parameters ask for. Its ETag is the thread's version: a client that
// sends it back in If-None-Match gets 304 Not Modified, and the tree is
// not even read. (Each query string is a resource of its own, so one
// version serves them all.)
func (s *server) showThread(c *fiber.Ctx) error {
	version, err := s.forum.ThreadVersion(c.UserContext(), caller(c), c.Params("thread"))
	if err != nil {
		return err
	}
	etag := `W/"` + version + `"`
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	out, err := s.forum.ReadThread(c.UserContext(), caller(c), services.ThreadQuery{
		Thread: c.Params("thread"), Since: c.Query("since"), Limit: c.Query("limit"), Branch: c.Query("branch"), Depth: c.Query("depth")})
	if err != nil {
		return err
	}
	return writeJSON(c, fiber.StatusOK, out)
}

// etagMatches applies If-None-Match's weak comparison to one ETag.
func etagMatches(header, etag string) bool {
	weak := strings.TrimPrefix(etag, "W/")
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == weak {
			return true
		}
	}
	return false
}
