package web

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"parley/services"
)

// healthz says the process is alive.
func (s *server) healthz(c *fiber.Ctx) error { return c.SendString("ok") }

// readyTimeout bounds /readyz: a frozen database answers 503 within it.
const readyTimeout = time.Second

// readiness is /readyz in JSON: the verdict and each dependency's check.
// A dependency added later (read replicas) adds its key to Checks.
type readiness struct {
	Status string           `json:"status"` // ready, degraded or unavailable
	Checks map[string]check `json:"checks"`
	// Error is the refusal object when unavailable, as /readyz has
	// always answered then.
	Error *services.Refusal `json:"error,omitempty"`
}

type check struct {
	Status string `json:"status"` // ok, degraded, unavailable, or off (not used here: SQLite has no LISTEN)
	Detail string `json:"detail,omitempty"`
}

// readyz says the database answers; unavailable (503) otherwise, within
// readyTimeout. The driver's error is logged, never sent: it names the
// database's host and user. A server whose LISTEN connection is down or
// hears nothing answers "degraded: " and why (services.FeedProblem).
//
// It answers in plain text ("ready", "degraded: …") and the refusal
// object on 503, as it always has, unless the client asks for JSON
// (Accept: application/json, or ?format=json): then the readiness object,
// each dependency under checks.
//
// Reading: degraded is still 200, ready to serve: its waiting reads poll
// instead of being woken, correct but costlier, and a load balancer that
// took every such server out would turn a misconfiguration into an outage.
func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
	defer cancel()
	asJSON := c.Query("format") == "json" || strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
	ready := readiness{Status: "ready", Checks: map[string]check{"database": {Status: "ok"}, "listener": s.listenerCheck()}}
	if err := s.forum.Ping(ctx); err != nil {
		if !asJSON {
			return err
		}
		r, unexpected := services.AsRefusal(err)
		if unexpected {
			s.log.Error("readyz", "request_id", requestID(c), "err", err)
		}
		noteRefusal(c, r)
		ready.Status, ready.Error = "unavailable", r
		ready.Checks["database"] = check{Status: "unavailable", Detail: "the database does not answer (see the server's log)"}
		return writeJSON(c, r.Status, ready)
	}
	problem := s.forum.FeedProblem()
	if standbys := s.forum.Standbys(); standbys != nil {
		ready.Checks["replicas"] = replicasCheck(standbys)
		if p := s.forum.ReplicaProblem(); p != "" {
			problem = strings.TrimPrefix(problem+"; "+p, "; ")
		}
	}
	if problem != "" {
		ready.Status = "degraded"
	}
	if asJSON {
		return writeJSON(c, fiber.StatusOK, ready)
	}
	if problem != "" {
		return c.SendString("degraded: " + problem)
	}
	return c.SendString("ready")
}

// listenerCheck is the LISTEN connection's state (services.FeedHealth).
func (s *server) listenerCheck() check {
	f := s.forum.FeedHealth()
	switch {
	case !f.On:
		return check{Status: "off", Detail: "no LISTEN connection: on SQLite waiting reads watch the database file"}
	case f.Degraded:
		return check{Status: "degraded", Detail: s.forum.FeedProblem()}
	}
	return check{Status: "ok"}
}

// replicasCheck is the read replicas' state (services.Standbys): ok while
// every one is in rotation, degraded while reads fall back to the primary
// for some (correct, without their capacity), unavailable when none
// serves.
func replicasCheck(standbys []services.StandbyHealth) check {
	var out []string
	up := 0
	for _, s := range standbys {
		if s.InService {
			up++
			out = append(out, s.Name+": in rotation, lag "+s.Lag.Round(time.Millisecond).String())
		} else {
			out = append(out, s.Name+": out of rotation, "+s.Why)
		}
	}
	status := "ok"
	switch {
	case up == 0:
		status = "unavailable"
	case up < len(standbys):
		status = "degraded"
	}
	return check{Status: status, Detail: strings.Join(out, "; ")}
}
