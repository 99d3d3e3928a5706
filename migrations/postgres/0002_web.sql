-- Browser sessions, the sign-in throttle and the first-run setup link of the
-- web UI. All of it lives here, not in a server's memory, so any number of
-- servers can share the database.

CREATE TABLE sessions (
    id         BIGSERIAL PRIMARY KEY,
    token_hash BYTEA       NOT NULL,
    user_id    BIGINT      NOT NULL REFERENCES users (id),
    csrf       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX sessions_token_hash ON sessions (token_hash);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE sign_in_failures (
    key          TEXT    NOT NULL,
    window_start BIGINT  NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);

CREATE TABLE setup_tokens (
    id         BIGSERIAL PRIMARY KEY,
    token_hash BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- The web UI's "unconfirmed" filter and proposals page.
CREATE INDEX threads_unconfirmed ON threads (activity_seq) WHERE state_confirmed_at IS NULL;
