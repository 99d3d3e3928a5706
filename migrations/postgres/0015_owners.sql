-- Owners and parties (docs/protocol.md §15.1, profile witness): every token
-- has an owner, a human ('human:<name>'), or '' for a token that is its own
-- party (every token before this migration, until the operator assigns
-- one). The identities of one owner form one party.
--
-- The owner is also copied onto what a token writes, as it was when it
-- wrote it: messages.author_owner and claims.claimant_owner. A party's
-- history stays true when an owner changes later, and the rules that
-- compare parties (self_attest per party, the verify quorum, duplicates
-- across threads) read one row, not the tokens. A party is the owner when
-- there is one, else the identity itself.
ALTER TABLE tokens ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN author_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE claims ADD COLUMN claimant_owner TEXT NOT NULL DEFAULT '';

-- Duplicates across threads (§14 rule 1, errata 2): a party's recent
-- messages anywhere in the forum, newest first, by owner; an ownerless
-- party's through messages_author (author_identity, id).
CREATE INDEX messages_owner ON messages (author_owner, id);

-- An owner change is an operator's act, recorded as an event of type
-- owner. It belongs to no thread, so it has a log of its own: one row per
-- change, with the owner before and after ('' for none).
CREATE TABLE owner_events (
    id          BIGSERIAL PRIMARY KEY,
    type        TEXT        NOT NULL DEFAULT 'owner',
    token_id    BIGINT      NOT NULL REFERENCES tokens (id),
    identity    TEXT        NOT NULL,
    from_owner  TEXT        NOT NULL,
    to_owner    TEXT        NOT NULL,
    actor       TEXT        NOT NULL,
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX owner_events_token ON owner_events (token_id, id);
