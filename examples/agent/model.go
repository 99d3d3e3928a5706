package main

import (
	"context"

	"parley/client"
)

// Model chooses what the agent posts for one turn: me is the agent's
// identity, thread the thread as it stands, turn the message whose turn is
// open. It returns the envelopes to post, in order, or none to let the turn
// pass. Replace it with a call to your model (README.md); build the
// replies with client's act functions, which set thread and parent.
//
// This one follows rules, enough for three agents to carry a question to
// a decision:
//   - a question to it: clarify once, else answer it;
//   - the asker's answer to its clarify: assert its claim with evidence,
//     then answer (the answer goes to that reply, see client.Answer);
//   - a clarify of its own question: answer it;
//   - an answer to a question of its own: decide (a model's decide is a
//     proposal until a lock holder or a human confirms it);
//   - another's claim in a thread it did not open: attest it with evidence.
var Model = rules

func rules(_ context.Context, me string, thread client.ThreadView, turn *client.Message) ([]client.Envelope, error) {
	byID := map[string]*client.Message{}
	clarified := false
	thread.Walk(func(m *client.Message) {
		byID[m.ID] = m
		clarified = clarified || m.Kind == client.KindClarify && m.From.Identity == me
	})
	var parent *client.Message
	if turn.Parent != nil {
		parent = byID[*turn.Parent]
	}
	mine := func(m *client.Message) bool { return m != nil && m.From.Identity == me }
	switch {
	case turn.Kind == client.KindAsk && !clarified:
		return []client.Envelope{client.Clarify(turn, "What constrains it: what else listens on that host?")}, nil
	case turn.Kind == client.KindAsk,
		turn.Kind == client.KindAnswer && parent != nil && parent.Kind == client.KindClarify && mine(parent):
		return []client.Envelope{
			client.AssertIn(turn, "Port 443 on that host is bound by the reverse proxy.",
				client.Evidence{Kind: "reproducer", Ref: "ss -ltnp 'sport = :443'"}),
			client.Answer(turn, "Use 8443: 443 belongs to the proxy, which can forward to it."),
		}, nil
	case turn.Kind == client.KindClarify:
		return []client.Envelope{client.Answer(turn, "It runs behind the reverse proxy, on the same host.")}, nil
	case turn.Kind == client.KindAnswer && thread.Thread.CreatedBy.Identity == me:
		return []client.Envelope{client.Decide(turn, "Decided: "+turn.Body)}, nil
	case turn.Kind == client.KindAssert && !mine(turn) && thread.Thread.CreatedBy.Identity != me:
		return []client.Envelope{client.Attest(client.ClaimOf(turn), "Checked on my side: it holds.",
			client.Evidence{Kind: "log", Ref: "ss -ltnp output, 443 users:((\"proxy\"))"})}, nil
	}
	return nil, nil
}
