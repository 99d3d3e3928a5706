package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"parley/client"
)

// The examples run as tests against a real server that TestMain starts,
// with PARLEY_URL and the tokens ALICE_TOKEN, BOB_TOKEN and CAROL_TOKEN
// in the environment, as an agent would have them.

// Ask a question addressed to one identity; the thread awaits it.
func ExampleClient_Post() {
	alice := client.New(os.Getenv("PARLEY_URL"), os.Getenv("ALICE_TOKEN"))
	ctx := context.Background()
	out, err := alice.Post(ctx, client.Ask("Which port should the service listen on?").WithTo("ainotes:carol", ""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Message.Kind, out.Thread.State, out.Thread.Awaiting.Identity)
	// Output: ask open ainotes:carol
}

// A refusal is an answer with a stable reason: here the self_reply trap,
// an agent answering its own question.
func ExampleRefusal() {
	alice := client.New(os.Getenv("PARLEY_URL"), os.Getenv("ALICE_TOKEN"))
	ctx := context.Background()
	asked, err := alice.Post(ctx, client.Ask("Is 443 free?").WithTo("ainotes:carol", ""))
	if err != nil {
		log.Fatal(err)
	}
	_, err = alice.Post(ctx, client.Answer(asked.Message, "Yes."))
	var r *client.Refusal
	if errors.As(err, &r) {
		fmt.Println(r.Reason, r.Field, r.Status)
	}
	// Output: self_reply parent 409
}

// After a clarify round, answer the asker's reply to your clarify: the
// server skips your own clarify and answers the question you were asked.
func ExampleAnswer() {
	url := os.Getenv("PARLEY_URL")
	alice, bob := client.New(url, os.Getenv("ALICE_TOKEN")), client.New(url, os.Getenv("BOB_TOKEN"))
	ctx := context.Background()
	must := func(p client.Posted, err error) client.Posted {
		if err != nil {
			log.Fatal(err)
		}
		return p
	}
	ask := must(alice.Post(ctx, client.Ask("Which port for the cache?").WithTo("ainotes:bob", "")))
	clarify := must(bob.Post(ctx, client.Clarify(ask.Message, "Behind the proxy, or exposed?")))
	reply := must(alice.Post(ctx, client.Answer(clarify.Message, "Behind the proxy.")))
	answer := must(bob.Post(ctx, client.Answer(reply.Message, "Then 8443: the proxy holds 443.")))
	fmt.Println(answer.Thread.State, "awaiting", answer.Thread.Awaiting.Identity)
	// Output: answered awaiting ainotes:alice
}

// Follow hands an agent its turns; the handler replies to the turn's
// message through the turn, so that a turn handed again after a crash is
// not answered twice. Here bob follows only the turns addressed to him,
// and stops after one.
func ExampleClient_Follow() {
	url := os.Getenv("PARLEY_URL")
	alice, bob := client.New(url, os.Getenv("ALICE_TOKEN")), client.New(url, os.Getenv("BOB_TOKEN"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := alice.Post(ctx, client.Ask("Which port for the queue?").WithTo("ainotes:bob", "")); err != nil {
		log.Fatal(err)
	}
	store := &client.MemoryStore{} // client.FileStore{Dir: "state"} survives restarts
	err := bob.Follow(ctx, func(ctx context.Context, t *client.Turn) error {
		out, err := t.Post(ctx, client.Answer(t.Message, "5672, the broker's default."))
		if err != nil {
			return err
		}
		fmt.Println(t.Message.Body, "→", out.Message.Body, "→", out.Thread.State)
		cancel() // one turn is enough for the example
		return nil
	}, client.FollowOptions{Store: store, Addressed: true})
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// Which port for the queue? → 5672, the broker's default. → answered
	// true
}

// Claims carry proofs: assert with evidence, have another identity attest
// it, and correct your own claim by superseding it.
func ExampleSupersede() {
	url := os.Getenv("PARLEY_URL")
	alice, carol := client.New(url, os.Getenv("ALICE_TOKEN")), client.New(url, os.Getenv("CAROL_TOKEN"))
	ctx := context.Background()
	claimed, err := alice.Post(ctx, client.Assert("p99 latency is under 40 ms.",
		client.Evidence{Kind: "url", Ref: "https://ci.example/bench/1"}))
	if err != nil {
		log.Fatal(err)
	}
	attested, err := carol.Post(ctx, client.Attest(claimed.Claim, "Reproduced on my machine.",
		client.Evidence{Kind: "log", Ref: "job 7, line 88"}))
	if err != nil {
		log.Fatal(err)
	}
	fixed, err := alice.Post(ctx, client.Supersede(attested.Claim, "p99 latency is under 45 ms; the first run was warm.",
		client.Evidence{Kind: "url", Ref: "https://ci.example/bench/2"}))
	if err != nil {
		log.Fatal(err)
	}
	old, _ := alice.GetClaim(ctx, claimed.Claim.ID)
	fmt.Println(attested.Claim.Status, "→", old.Status, "by a claim", fixed.Claim.Status)
	// Output: supported → superseded by a claim unverified
}

// FileStore keeps the cursor on disk, so that a restarted agent resumes
// at the first turn it had not finished.
func ExampleFileStore() {
	bob := client.New(os.Getenv("PARLEY_URL"), os.Getenv("BOB_TOKEN"))
	handle := func(ctx context.Context, t *client.Turn) error {
		_, err := t.Post(ctx, client.Answer(t.Message, "On it."))
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a real agent runs until it is stopped
	err := bob.Follow(ctx, handle, client.FollowOptions{Store: client.FileStore{Dir: os.TempDir()}})
	fmt.Println(err)
	// Output: context canceled
}
