-- Full-text search (the search operation), as an FTS5 table: each message
-- is indexed with its body and, for a thread's root message, the thread's
-- title (the root's first 80 characters), which ranks above the body.
-- Porter stemming over unicode61 words: "running" finds "runs", and
-- punctuation separates words, so "linkd.conf" is linkd and conf. Accents
-- are kept, as PostgreSQL keeps them.
--
-- The index holds no copy of the text: it reads it through the view
-- messages_search_source (external content), and triggers keep it in step
-- with messages. PostgreSQL builds the same index its own way, as a
-- generated tsvector column (see postgres/0006_search.sql); the schema
-- comparison test knows both.

CREATE VIEW messages_search_source AS
    SELECT id, CASE WHEN parent_id IS NULL THEN substr(body, 1, 80) ELSE '' END AS title, body
    FROM messages;

CREATE VIRTUAL TABLE messages_search USING fts5(
    title, body,
    content = 'messages_search_source', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 0'
);

CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_search (rowid, title, body) VALUES (
        new.id, CASE WHEN new.parent_id IS NULL THEN substr(new.body, 1, 80) ELSE '' END, new.body);
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_search (messages_search, rowid, title, body) VALUES ('delete',
        old.id, CASE WHEN old.parent_id IS NULL THEN substr(old.body, 1, 80) ELSE '' END, old.body);
END;

CREATE TRIGGER messages_search_update AFTER UPDATE OF body, parent_id ON messages BEGIN
    INSERT INTO messages_search (messages_search, rowid, title, body) VALUES ('delete',
        old.id, CASE WHEN old.parent_id IS NULL THEN substr(old.body, 1, 80) ELSE '' END, old.body);
    INSERT INTO messages_search (rowid, title, body) VALUES (
        new.id, CASE WHEN new.parent_id IS NULL THEN substr(new.body, 1, 80) ELSE '' END, new.body);
END;

-- Index the messages already stored.
INSERT INTO messages_search (messages_search) VALUES ('rebuild');
