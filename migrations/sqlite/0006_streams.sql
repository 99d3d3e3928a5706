-- Open event streams (PARLEY.md §13), so that streams_per_token holds across
-- every server process on the database. A stream refreshes seen_at while it
-- runs and deletes its row when it ends; a row whose process died stops
-- counting once seen_at is older than a minute.
CREATE TABLE streams (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    token_id  BIGINT      NOT NULL,
    opened_at DATETIME    NOT NULL,
    seen_at   DATETIME    NOT NULL
);
CREATE INDEX streams_token_seen ON streams (token_id, seen_at);
