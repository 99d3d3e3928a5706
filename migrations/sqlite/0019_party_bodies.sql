-- messages_owner holds only owned messages, as on PostgreSQL
-- (postgres/0019_party_bodies.sql): an ownerless post no longer writes to
-- it, and the owner's look-back says author_owner <> '' so that it may use
-- it. messages_author is as it was.
DROP INDEX messages_owner;
CREATE INDEX messages_owner ON messages (author_owner, id) WHERE author_owner <> '';
