-- The directory (list_identities): each identity's newest message, its
-- last activity, without scanning every message.
CREATE INDEX messages_author ON messages (author_identity, id);
