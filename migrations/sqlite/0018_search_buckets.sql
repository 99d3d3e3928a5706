-- PostgreSQL's search index files each message under its id's bucket too
-- (postgres/0018_search_buckets.sql). FTS5 reads a word's matches newest
-- first by itself (ORDER BY rowid DESC walks the doclist backwards), so
-- SQLite's index is as it was.
SELECT 1;
