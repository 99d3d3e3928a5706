package web

import "github.com/gofiber/fiber/v2"

// isFragment reports whether htmx asked for a fragment: an htmx request
// that is not a boosted navigation gets only the part it swaps.
func isFragment(c *fiber.Ctx) bool {
	return c.Get("HX-Request") == "true" && c.Get("HX-Boosted") != "true"
}

// changedEvent tells the thread page's live region to refresh at once.
const changedEvent = "parley:changed"

// redirect sends the browser elsewhere: htmx follows HX-Redirect, a plain
// form follows 303 See Other.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusOK)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}
