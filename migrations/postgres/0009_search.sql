-- Full-text search (the search operation). Each message is indexed with
-- its body and, for a thread's root message, the thread's title: the
-- root's first 80 characters, at weight A, so that a title ranks above
-- words further down (weight D).
--
-- Two configurations side by side: 'simple' keeps every word as written
-- (lower-cased), so identifiers match exactly; 'english' stems words and
-- drops stop words, so "running" finds "runs". A query term matches either.
--
-- ASCII punctuation is read as a space before parsing. PostgreSQL's parser
-- would keep "linkd.conf" or "api/v1" as one token, where SQLite's FTS5
-- sees two words; translate keeps every character in its place, so the
-- match ranges of a snippet still fall on the body as written.
--
-- SQLite builds the same index its own way, as an FTS5 table (see
-- sqlite/0006_search.sql); the schema comparison test knows both.

ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', CASE WHEN parent_id IS NULL
        THEN translate(left(body, 80), '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                ') ELSE '' END), 'A') ||
    setweight(to_tsvector('english', CASE WHEN parent_id IS NULL
        THEN translate(left(body, 80), '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                ') ELSE '' END), 'A') ||
    to_tsvector('simple', translate(body, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                ')) ||
    to_tsvector('english', translate(body, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                '))
) STORED;
CREATE INDEX messages_search ON messages USING GIN (search);
