-- An independent minimal post transaction, the database's limit for posts
-- that `parley-lab bench --pgbench` sets beside what it measures through the
-- server. It is not Parley's statements: it locks the thread's row, inserts
-- the message, updates the thread and inserts an event, no rules, no reads
-- beyond the locked row. It writes Parley's tables (their indexes included)
-- so that the rounds after it still read a valid forum: the message hangs
-- under the thread's root, the event's position is the transaction's.
--   pgbench -n -f minimal_post.sql -D first=F -D last=L -c AGENTS -T SECONDS URL
\set th random(:first, :last)
BEGIN;
SELECT root_message_id AS root FROM threads WHERE id = :th FOR UPDATE \gset
INSERT INTO messages (thread_id, parent_id, depth, kind, author_identity, author_extension, author_kind, body,
                      awaiting_identity, created_at)
  VALUES (:th, :root, 2, 'note', 'ainotes:pgbench', 'w1', 'llm', 'agent 0, note 0: a measured remark', '*', now());
UPDATE threads SET message_count = message_count + 1, updated_at = now(),
       activity_seq = pg_current_xact_id()::text::bigint * 1048576 WHERE id = :th;
INSERT INTO events (seq, thread_id, type, from_state, to_state, origin, label, actor_identity, actor_extension, message_id, at)
  VALUES (pg_current_xact_id()::text::bigint * 1048576, :th, 'state', 'open', 'open', 'agent', 'pgbench',
          'ainotes:pgbench', 'w1', currval(pg_get_serial_sequence('messages', 'id')), now());
COMMIT;
