package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/internal/connect"
	"parley/oauth"
)

// oauthRoutes serves OAuth for MCP clients, when configured
// (Options.OAuth): the two metadata documents, the authorization server's
// endpoints (zitadel/oidc, through package oauth), and the MCP endpoint it
// protects, /mcp/oauth.
//
// Only /mcp/oauth has protected-resource metadata, at its path-specific
// address; /mcp has none and never answers with an OAuth challenge, so
// header clients (Cursor drops its configured headers once a server
// advertises OAuth discovery) keep working there. Both reach the same
// tools and the same services.
func (s *server) oauthRoutes(app *fiber.App) {
	if s.oauth == nil || s.mcpAuth == nil {
		return
	}
	app.Get(oauth.ResourceMetadata, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(s.oauth.ProtectedResourceMetadata())
	})
	app.Get(oauth.ServerMetadataPath, func(c *fiber.Ctx) error {
		doc, err := s.oauth.ServerMetadata(c.UserContext())
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(doc)
	})
	protocol := netHTTP(s.oauth.Handler())
	app.Get(oauth.AuthorizePath, protocol)
	app.Post(oauth.AuthorizePath, protocol)
	app.Post(oauth.TokenPath, protocol)
	app.Post(oauth.RevokePath, protocol)
	app.Get(oauth.KeysPath, protocol)
	app.All(oauth.ResourcePath, s.mcpRoute(s.mcpAuth))
}

// consentRoutes serve the consent page, a signed-in human's (s.human
// checks the session, and CSRF on the form).
func (s *server) consentRoutes(app *fiber.App) {
	if s.oauth == nil {
		return
	}
	app.Get(oauth.ConsentPath, s.human, s.consentForm)
	app.Post(oauth.ConsentPath, s.human, s.consentAnswer)
}

// oauthSnippets are the tokens page's configurations for OAuth, when the
// server offers it.
func (s *server) oauthSnippets(c *fiber.Ctx) []connect.Snippet {
	if s.oauth == nil || s.mcpAuth == nil {
		return nil
	}
	return connect.ForOAuth(s.oauth.Resource())
}
