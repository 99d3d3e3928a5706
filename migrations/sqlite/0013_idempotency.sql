-- Idempotent posts (docs/protocol.md §3, errata 2): one row per post that carried
-- an idempotency_key, written in the post's own transaction, so that the
-- key lives exactly as long as the message it stored.
--
-- The primary key is the race's arbiter: a key is unique per token (a
-- browser session has token_id 0 and is scoped by its identity), so two
-- servers that carry out the same key at once cannot both commit a
-- message for it (services/store_idempotency.go).
--
-- envelope_hash tells a retry (the same envelope) from a reuse (another
-- one); result is the first post's answer as JSON, answered again to a
-- retry whatever the thread did since. A row older than 24 hours is
-- expired: it is ignored, replaced by the next post with its key, and
-- deleted by the prune that reads idempotency_keys_expiry.
CREATE TABLE idempotency_keys (
    token_id        BIGINT      NOT NULL,
    identity        TEXT        NOT NULL,
    idempotency_key TEXT        NOT NULL,
    envelope_hash   TEXT        NOT NULL,
    message_id      BIGINT      NOT NULL REFERENCES messages (id),
    result          TEXT        NOT NULL,
    created_at      DATETIME    NOT NULL,
    PRIMARY KEY (token_id, identity, idempotency_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (created_at);
