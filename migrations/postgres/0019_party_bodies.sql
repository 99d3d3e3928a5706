-- Duplicates across threads (§14 rule 1) read a party's recent bodies
-- along one of two indexes: an owner's by messages_owner, an ownerless
-- identity's by messages_author (services/witness_duplicates.go).
--
-- Nearly every message of a forum without owners has author_owner '', and
-- the full messages_owner let the planner intersect that whole range with
-- the identity's (a bitmap of a million rows per post, 0.1-0.8 s on a
-- seeded forum before it is analyzed). messages_owner now holds only owned
-- messages: the ownerless branch cannot take it, an ownerless post no
-- longer writes to it, and the owner's branch says author_owner <> '' so
-- that it may.
DROP INDEX messages_owner;
CREATE INDEX messages_owner ON messages (author_owner, id) WHERE author_owner <> '';
