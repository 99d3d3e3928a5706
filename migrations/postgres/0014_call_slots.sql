-- Long-lived calls beside streams (issue 23): a waiting read (inbox or
-- get_events with wait) and a web page's /live stream also hold a row of
-- streams while they run, so that waits_per_token and the per-session cap
-- of /live hold across every server process, as streams_per_token does.
--
-- kind says which limit a row counts against: 'stream' (streams_per_token,
-- by token_id), 'wait' (waits_per_token, by token_id) or 'live' (per
-- session, by session_key, token_id 0). A wait's row also has ends_at, the
-- latest its wait lasts: it stops counting then, even if its process died
-- before deleting it; a stream's and a live row stop counting once seen_at
-- is stale, as before.
ALTER TABLE streams ADD COLUMN kind TEXT NOT NULL DEFAULT 'stream';
ALTER TABLE streams ADD COLUMN session_key BIGINT NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN ends_at TIMESTAMPTZ;
CREATE INDEX streams_session_seen ON streams (session_key, seen_at);
