-- The dialectic profile (PARLEY.md §10): claims with their status, the
-- evidence every claim act carries, and which message and which event
-- concern which claim. A claim's status is stored as its acts left it;
-- "expired" is never stored: a claim reads so past its valid_until.

CREATE TABLE claims (
    id                 BIGSERIAL PRIMARY KEY,
    thread_id          BIGINT      NOT NULL REFERENCES threads (id),
    message_id         BIGINT      NOT NULL REFERENCES messages (id),
    statement          TEXT        NOT NULL,
    status             TEXT        NOT NULL,
    claimant_identity  TEXT        NOT NULL,
    claimant_extension TEXT        NOT NULL DEFAULT '',
    superseded_by_id   BIGINT      REFERENCES claims (id),
    valid_until        TIMESTAMPTZ,
    created_at         TIMESTAMPTZ NOT NULL
);
-- list_claims: newest first, of one thread or in one status.
CREATE INDEX claims_thread ON claims (thread_id, id);
CREATE INDEX claims_status ON claims (status, id);
-- Claims about to expire (and the expired filter), soonest first.
CREATE INDEX claims_valid_until ON claims (valid_until);
-- A claim's supersedes: the claims whose superseded_by names it.
CREATE INDEX claims_superseded_by ON claims (superseded_by_id);

-- The evidence of an assert, attest, refute or verify, in the order sent.
CREATE TABLE evidence (
    id         BIGSERIAL PRIMARY KEY,
    claim_id   BIGINT      NOT NULL REFERENCES claims (id),
    message_id BIGINT      NOT NULL REFERENCES messages (id),
    position   INTEGER     NOT NULL,
    kind       TEXT        NOT NULL,
    ref        TEXT        NOT NULL,
    note       TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX evidence_claim ON evidence (claim_id, message_id, position);

-- The claim a profile act concerns (its own claim for an assert).
ALTER TABLE messages ADD COLUMN claim_id BIGINT REFERENCES claims (id);
-- A claim's attestations, refutations and seal, in order.
CREATE INDEX messages_claim ON messages (claim_id, id);
-- The newest refutations, for verifiers.
CREATE INDEX messages_kind ON messages (kind, id);

-- The claim whose status a claim event records.
ALTER TABLE events ADD COLUMN claim_id BIGINT REFERENCES claims (id);
