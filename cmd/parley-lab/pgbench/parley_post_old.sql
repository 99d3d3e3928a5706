-- OLD: the statements of Parley's post transaction before it was batched (a
-- note into one of the bench's threads, eight round trips), as raw SQL. Kept for
-- comparison only: `parley-lab bench --pgbench-script parley_post_old`. The limit
-- `--pgbench` measures against is minimal_post.sql.
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
