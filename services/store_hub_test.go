package services

import "testing"

// TestHubAddressedWaiters: an advance for a turn awaiting anyone wakes the
// full inboxes and leaves the addressed views asleep; one for the
// identity wakes both, an escalation wakes a moderator's addressed view,
// and unknown news (an empty audience) wakes everyone.
func TestHubAddressedWaiters(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	alice := Caller{Identity: "ainotes:alice", Kind: KindLLM}
	ada := Caller{Identity: "human:ada", Kind: KindHuman}
	h := newHub()
	full, addressed, modAddressed := h.waitTurn(alice, false), h.waitTurn(alice, true), h.waitTurn(ada, true)
	h.advance(1, audienceAnyone)
	if !closed(full) || closed(addressed) || closed(modAddressed) {
		t.Fatalf("a turn for anyone: full inbox woken %v, addressed views woken %v, %v", closed(full), closed(addressed), closed(modAddressed))
	}
	h.advance(2, "ainotes:bob")
	if closed(addressed) {
		t.Fatal("a turn for bob woke alice's addressed view")
	}
	full = h.waitTurn(alice, false)
	h.advance(3, alice.Identity)
	if !closed(full) || !closed(addressed) || closed(modAddressed) {
		t.Fatal("a turn for alice did not wake both her views, or woke ada's")
	}
	h.advance(4, audienceAnyone, audienceModerators)
	if !closed(modAddressed) {
		t.Fatal("an escalation did not wake a human's addressed view")
	}
	addressed = h.waitTurn(alice, true)
	h.advance(5)
	if !closed(addressed) {
		t.Fatal("unknown news did not wake an addressed view")
	}
}
