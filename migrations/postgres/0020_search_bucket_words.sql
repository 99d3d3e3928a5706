-- The words of each full bucket of the search index (migration 0018: ids
-- 16,384 at a time, id >> 14): every lexeme found in its messages, filed
-- once every message of the bucket is known to have committed
-- (services/search_seal.go). A search for words absent from the newest
-- messages then asks this table, through its own GIN index, which older
-- buckets hold them all, and looks only in those and in the buckets not
-- yet sealed, instead of looking in every bucket (each look walks the
-- bucket's 16,384 entries in messages_search, whether or not the word is
-- there: services/store_search_sql.go).
--
-- A row goes through three steps: full_at, when a message past the
-- bucket's end was first seen committed; horizon, the transaction ids
-- then running or to come (pg_snapshot_xmax), taken once every writer
-- that took an id in the bucket has had its transaction id; words, once
-- every transaction below that horizon has ended. A row's words never
-- change: messages are never edited nor deleted.
CREATE TABLE search_buckets (
    bucket  integer PRIMARY KEY,
    full_at timestamptz NOT NULL,
    horizon xid8,
    words   tsvector
);
CREATE INDEX search_buckets_words ON search_buckets USING GIN (words) WITH (fastupdate = off);

-- The buckets whose words match q, read from the GIN index. The table is
-- a few pages of rows whose words are large (toasted: the words of 16,384
-- messages), and the planner, which prices a match by the rows rather
-- than by the bytes each row's words decompress to, would read every
-- bucket's words instead: a search statement cannot say so without
-- turning sequential scans off for all of it, whose cost penalty then
-- sets off JIT compilation (hundreds of milliseconds). A function keeps
-- the setting to this one query.
CREATE FUNCTION search_buckets_holding(q tsquery) RETURNS SETOF integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET enable_seqscan = off
    SET search_path FROM CURRENT
    AS $$ SELECT bucket FROM search_buckets WHERE words @@ q $$;
