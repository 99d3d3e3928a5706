-- The guard profile (PARLEY.md §14): what its four rules need, kept as
-- counters written at insert time so that every check is O(1) or
-- O(guard_recent_bodies), never a walk of the tree.
--
-- Rows stored before this migration start the counts afresh: their
-- chain_len and the threads' model_run are 0 and their body_hash empty, so
-- the guard counts from the upgrade on and never pauses an old thread on
-- a guess.

-- Rule 1: the message's body, case-folded and whitespace-collapsed, hashed.
ALTER TABLE messages ADD COLUMN body_hash TEXT    NOT NULL DEFAULT '';
-- Rule 2: how many unmarked model messages end here, this one included
-- (0 for a human's or a lock holder's message, or one that carries a mark).
ALTER TABLE messages ADD COLUMN chain_len INTEGER NOT NULL DEFAULT 0;
-- Rule 4: an ask's deadline.
ALTER TABLE messages ADD COLUMN reply_by  DATETIME;
-- Rule 1 looks back at one identity's last bodies in one thread.
CREATE INDEX messages_guard_bodies ON messages (thread_id, author_identity, id);

-- Rule 3: consecutive model messages since a human or a lock holder acted.
ALTER TABLE threads ADD COLUMN model_run    INTEGER NOT NULL DEFAULT 0;
-- Rule 4: the deadline of the open turn (its ask's reply_by, null when the
-- turn has none), and when that turn escalated.
ALTER TABLE threads ADD COLUMN reply_by     DATETIME;
ALTER TABLE threads ADD COLUMN escalated_at DATETIME;
-- Turns coming due, soonest first: what a read or the sweep escalates.
CREATE INDEX threads_due ON threads (reply_by) WHERE reply_by IS NOT NULL AND escalated_at IS NULL;
-- Escalated turns: in the inbox of humans and lock holders by turn position,
-- on the Overdue page by deadline.
CREATE INDEX threads_escalated ON threads (turn_seq) WHERE escalated_at IS NOT NULL;
CREATE INDEX threads_overdue ON threads (reply_by) WHERE escalated_at IS NOT NULL;

-- An ask escalates once, whichever server or read sees it first.
CREATE UNIQUE INDEX events_escalate_once ON events (message_id) WHERE type = 'escalate';
