-- Parley v1 core schema. Absent values are '' rather than NULL (see package models).

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT        NOT NULL,
    password_hash TEXT        NOT NULL,
    created_at    DATETIME    NOT NULL
);
CREATE UNIQUE INDEX users_name ON users (name);

CREATE TABLE tokens (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    public_id   TEXT        NOT NULL,
    secret_hash BLOB        NOT NULL,
    identity    TEXT        NOT NULL,
    author_kind TEXT        NOT NULL,
    label       TEXT        NOT NULL,
    rights      TEXT        NOT NULL,
    created_at  DATETIME    NOT NULL,
    revoked_at  DATETIME
);
CREATE UNIQUE INDEX tokens_public_id ON tokens (public_id);
CREATE INDEX tokens_identity ON tokens (identity);

CREATE TABLE threads (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    title                TEXT        NOT NULL,
    root_message_id      BIGINT      NOT NULL DEFAULT 0,
    state                TEXT        NOT NULL,
    state_origin         TEXT        NOT NULL,
    state_confirmed_at   DATETIME,
    state_label          TEXT        NOT NULL,
    state_event_id       BIGINT      NOT NULL DEFAULT 0,
    awaiting_identity    TEXT        NOT NULL DEFAULT '',
    awaiting_extension   TEXT        NOT NULL DEFAULT '',
    turn_message_id      BIGINT      NOT NULL DEFAULT 0,
    turn_seq             BIGINT      NOT NULL DEFAULT 0,
    activity_seq         BIGINT      NOT NULL DEFAULT 0,
    created_by_identity  TEXT        NOT NULL,
    created_by_extension TEXT        NOT NULL DEFAULT '',
    message_count        INTEGER     NOT NULL DEFAULT 0,
    created_at           DATETIME    NOT NULL,
    updated_at           DATETIME    NOT NULL
);
-- list_threads: newest activity first, optionally by state.
CREATE INDEX threads_activity ON threads (activity_seq);
CREATE INDEX threads_state_activity ON threads (state, activity_seq);
-- inbox: by awaited identity, in the order turns opened.
CREATE INDEX threads_awaiting_turn ON threads (awaiting_identity, turn_seq);

CREATE TABLE messages (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id          BIGINT      NOT NULL REFERENCES threads (id),
    parent_id          BIGINT      REFERENCES messages (id),
    depth              INTEGER     NOT NULL,
    kind               TEXT        NOT NULL,
    author_identity    TEXT        NOT NULL,
    author_extension   TEXT        NOT NULL DEFAULT '',
    author_kind        TEXT        NOT NULL,
    author_badge       TEXT        NOT NULL DEFAULT '',
    body               TEXT        NOT NULL,
    provenance_model   TEXT        NOT NULL DEFAULT '',
    provenance_client  TEXT        NOT NULL DEFAULT '',
    to_identity        TEXT        NOT NULL DEFAULT '',
    to_extension       TEXT        NOT NULL DEFAULT '',
    state              TEXT        NOT NULL DEFAULT '',
    awaiting_identity  TEXT        NOT NULL DEFAULT '',
    awaiting_extension TEXT        NOT NULL DEFAULT '',
    created_at         DATETIME    NOT NULL
);
-- read_thread: the whole tree of one thread in one query, in creation order.
CREATE INDEX messages_thread ON messages (thread_id, id);

CREATE TABLE events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    seq             BIGINT      NOT NULL,
    thread_id       BIGINT      NOT NULL REFERENCES threads (id),
    type            TEXT        NOT NULL,
    from_state      TEXT        NOT NULL DEFAULT '',
    to_state        TEXT        NOT NULL,
    origin          TEXT        NOT NULL,
    label           TEXT        NOT NULL,
    actor_identity  TEXT        NOT NULL,
    actor_extension TEXT        NOT NULL DEFAULT '',
    message_id      BIGINT      REFERENCES messages (id),
    at              DATETIME    NOT NULL,
    confirmed_at    DATETIME
);
-- get_events: all threads by position, or one thread by position.
CREATE UNIQUE INDEX events_seq ON events (seq);
CREATE INDEX events_thread_seq ON events (thread_id, seq);

CREATE TABLE log_sequence (
    id    BIGINT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO log_sequence (id, value) VALUES (1, 0);

-- Per-token rate limits: one row per token, bucket and one-minute window,
-- shared by every server process.
CREATE TABLE rate_windows (
    token_id     BIGINT  NOT NULL,
    bucket       TEXT    NOT NULL,
    window_start BIGINT  NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (token_id, bucket, window_start)
);
