-- The search index also files each message under its id's bucket (ids
-- 16,384 at a time, id >> 14) as a lexeme "~<bucket>", which no query term
-- can spell (a term's punctuation is read as a space): a search can then
-- ask the index for a word's matches in one bucket, newest bucket first,
-- and stop when it has enough, instead of reading the newest messages
-- backwards one by one hoping to meet a word that is only in old ones
-- (services/store_search_sql.go). The column is unchanged; the index is
-- on the column with the bucket's lexeme appended, and the search states
-- the same expression (searchIndexed), so that the planner uses it.
DROP INDEX messages_search;
CREATE INDEX messages_search ON messages USING GIN ((search || array_to_tsvector(ARRAY['~' || (id >> 14)::text])));
