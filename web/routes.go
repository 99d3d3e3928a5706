package web

import (
	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/static"
)

// routes is the whole route table. The API routes are those of
// services.Operations; a test checks that both agree.
func (s *server) routes(app *fiber.App) {
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/.well-known/parley.json", s.manifest)
	app.Get(services.KeysURL, s.keys)
	s.cardRoutes(app)
	if s.mcp != nil {
		// MCP's Streamable HTTP transport: POST carries JSON-RPC. Every
		// other method is answered 405 with Allow: POST, in JSON-RPC, by the
		// transport itself: it is stateless and opens no GET stream; only a
		// waiting call's answer is streamed, to carry its progress.
		app.All("/mcp", s.mcpRoute(s.mcp))
	}
	s.oauthRoutes(app)
	if s.scrape != nil {
		app.Get("/metrics", s.serveMetrics(*s.scrape))
	}

	api := app.Group("/api/v1")
	api.Get("/manifest", s.manifest)
	api.Get("/openapi.json", s.openAPI)
	api.Get("/me", s.auth(services.OpWhoami), s.me)
	api.Post("/messages", s.auth(services.OpPost), s.postMessage)
	api.Get("/threads", s.auth(services.OpListThreads), s.listThreads)
	api.Get("/threads/:thread", s.auth(services.OpReadThread), s.showThread)
	api.Post("/threads/:thread/confirm", s.auth(services.OpConfirm), s.confirmThread)
	api.Get("/inbox", s.auth(services.OpInbox), s.inbox)
	api.Get("/events", s.auth(services.OpGetEvents), s.events)
	api.Get("/stream", s.auth(services.OpStream), s.stream)
	api.Get("/claims", s.auth(services.OpListClaims), s.listClaims)
	api.Get("/claims/:claim", s.auth(services.OpGetClaim), s.showClaim)
	api.Get("/identities", s.auth(services.OpListIdentities), s.listIdentities)
	api.Get("/search", s.auth(services.OpSearch), s.search)
	api.Post("/blobs", s.auth(services.OpPutBlob), s.putBlob)
	api.Get("/blobs/:digest", s.auth(services.OpGetBlob), s.getBlob)
	api.Get("/statements/:id", s.auth(services.OpGetStatement), s.getStatement)
	api.Use(s.noSuchOperation)

	// The web UI for humans.
	app.Get(static.Prefix+":hash/*", s.staticFile)
	app.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/threads", fiber.StatusSeeOther) })
	app.Get("/signin", s.signInForm)
	app.Post("/signin", s.signIn)
	app.Get("/setup/:token", s.setupForm)
	app.Post("/setup/:token", s.setup)

	// The navigation of the pages below counts the pending proposals.
	app.Use(s.navCount)

	// Every page below needs a signed-in human (s.human also checks CSRF).
	app.Post("/signout", s.human, s.signOut)
	app.Get("/live", s.liveStream) // resolves its session itself (live_stream.go)
	app.Get("/threads", s.human, s.threadList)
	app.Get("/threads/new", s.human, s.threadNewForm)
	app.Post("/threads", s.human, s.threadCreate)
	app.Get("/threads/:thread", s.threadOutcome) // then the page itself, below
	app.Get("/threads/:thread", s.human, s.threadShow)
	app.Get("/threads/:thread/live", s.human, s.threadLive)
	app.Get("/threads/:thread/reply", s.human, s.threadReplyForm)
	app.Get("/threads/:thread/aside", s.human, s.threadAside)
	app.Post("/threads/:thread/messages", s.human, s.threadPost)
	app.Get("/threads/:thread/claim", s.human, s.threadClaimForm)
	app.Post("/threads/:thread/claim", s.human, s.threadClaimPost)
	app.Post("/threads/:thread/:action", s.human, s.moderate(false))
	app.Get("/proposals", s.human, s.proposalList)
	app.Get("/proposals/live", s.human, s.proposalList)
	app.Get("/proposals/pending", s.human, s.pendingCount)
	app.Post("/proposals/:thread/:action", s.human, s.moderate(true))
	app.Get("/overdue", s.human, s.overdueList)
	app.Get("/overdue/live", s.human, s.overdueList)
	app.Get("/claims", s.human, s.claimList)
	app.Get("/claims/live", s.human, s.claimList)
	app.Get("/claims/:claim", s.human, s.claimShow)
	app.Get("/blobs/:digest", s.human, s.getBlob) // evidence downloaded from a claim, as an attachment
	app.Get("/search", s.human, s.searchShow)
	app.Get("/tokens", s.human, s.tokenList)
	app.Post("/tokens", s.human, s.tokenCreate)
	app.Post("/tokens/:id/revoke", s.human, s.tokenRevoke)
	s.consentRoutes(app)
}
