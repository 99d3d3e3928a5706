package web

import (
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// contentSecurityPolicy allows nothing inline: scripts and styles come only
// from /static, which is why htmx runs with its indicator styles and eval
// turned off.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secureHeaders sets the headers every response carries.
func secureHeaders(c *fiber.Ctx) error {
	setSecureHeaders(&c.Response().Header)
	return c.Next()
}

// setSecureHeaders is secureHeaders on a header of its own (a parked
// call's answer: inbox_parked.go).
func setSecureHeaders(h *fasthttp.ResponseHeader) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}
