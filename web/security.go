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

// secureHeaderFields are the headers secureHeaders sets, in order; a
// parked call's answer writes them itself (parked_answer.go).
var secureHeaderFields = [...][2]string{
	{"Content-Security-Policy", contentSecurityPolicy},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "same-origin"},
	{"X-Frame-Options", "DENY"},
}

// setSecureHeaders is secureHeaders on a header of its own.
func setSecureHeaders(h *fasthttp.ResponseHeader) {
	for _, f := range secureHeaderFields {
		h.Set(f[0], f[1])
	}
}
