-- Profile witness (docs/protocol.md §15.4–15.6): content-addressed
-- evidence and signed statements, kept in the database itself (no local
-- files), so that any number of stateless servers share them.
--
-- blobs: immutable bytes named by their sha256 ("sha256:<64 hex>"); the
-- primary key stores the same bytes once, whoever sends them again.
CREATE TABLE blobs (
    digest      TEXT        PRIMARY KEY,
    media_type  TEXT        NOT NULL,
    size        BIGINT      NOT NULL,
    data        BLOB       NOT NULL,
    created_by  TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL
);
-- instance_keys: the forum's Ed25519 signing keys. The highest generation
-- signs; older ones stay, so that statements signed before a rotation
-- still verify against the published keys. The primary key is the race's
-- arbiter: two servers starting at once insert generation 1, one wins,
-- both then read the same key.
CREATE TABLE instance_keys (
    generation  BIGINT      PRIMARY KEY,
    key_id      TEXT        NOT NULL,
    public_key  BLOB       NOT NULL,
    private_key BLOB       NOT NULL,
    created_at  DATETIME    NOT NULL
);
CREATE UNIQUE INDEX instance_keys_key_id ON instance_keys (key_id);
-- statements: one DSSE envelope per verdict, written in the transaction
-- of the act that reached it. subject is "cl_N" or "th_N".
CREATE TABLE statements (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    subject     TEXT        NOT NULL,
    verdict     TEXT        NOT NULL,
    key_id      TEXT        NOT NULL,
    envelope    TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL
);
CREATE INDEX statements_subject ON statements (subject, id);
