-- The core of Parley's post transaction (a note into one of the bench's
-- threads), statement for statement, as raw SQL: the database's own limit
-- for posts, to set beside what `parley-lab bench` measures through the
-- server. `parley-lab bench --pgbench` runs it with
--   pgbench -n -f post.sql -D first=F -D last=L -c AGENTS -T SECONDS URL
\set th random(:first, :last)
BEGIN;
SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, :th);
SELECT * FROM threads WHERE id = :th;
SELECT * FROM messages WHERE id = (SELECT root_message_id FROM threads WHERE id = :th);
INSERT INTO messages (thread_id, parent_id, depth, kind, author_identity, author_extension, author_kind, body,
                      awaiting_identity, created_at)
  SELECT :th, root_message_id, 2, 'note', 'ainotes:pgbench', 'w1', 'llm', 'agent 0, note 0: a measured remark', '*', now()
  FROM threads WHERE id = :th RETURNING id;
SELECT pg_current_xact_id()::text::bigint * 1048576 + 0;
UPDATE threads SET message_count = message_count + 1, updated_at = now(),
       activity_seq = pg_current_xact_id()::text::bigint * 1048576 WHERE id = :th;
COMMIT;
