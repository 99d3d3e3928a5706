-- PostgreSQL files the words of each full bucket of its search index
-- (postgres/0020_search_bucket_words.sql); SQLite's FTS5 index reads a
-- word's matches newest first by itself, and needs no such table.
SELECT 1;
