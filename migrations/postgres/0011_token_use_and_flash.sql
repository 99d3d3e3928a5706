-- The tokens page (web UI): when each token was last used, and the secret
-- of a token just created, held for the one page that shows it.
--
-- last_used_at is written by authentication at most about once a minute
-- per token (only when the stored time is older), not on every request.
ALTER TABLE tokens ADD COLUMN last_used_at TIMESTAMPTZ;

-- A flash is what one signed-in page hands to the next (post/redirect/get):
-- sealed with a key derived from the session cookie, which the server never
-- stores, so the database alone cannot open it. It is deleted when read,
-- and dies after a few minutes if never read.
CREATE TABLE session_flashes (
    token_hash BYTEA       PRIMARY KEY,
    sealed     BYTEA       NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX session_flashes_expires ON session_flashes (expires_at);
