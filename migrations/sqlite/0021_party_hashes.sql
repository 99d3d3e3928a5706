-- The party's bodies by hash, as on PostgreSQL
-- (postgres/0021_party_hashes.sql): the rule across threads asks this
-- index whether the party posted the body within the window before it
-- walks the party's last bodies.
CREATE INDEX messages_party_bodies ON messages ((COALESCE(NULLIF(author_owner, ''), author_identity)), body_hash, created_at);
