-- The inbox reads two ranges of this index, the turns awaiting the caller
-- and those awaiting anyone, each in turn order, and stops after a page
-- (services/inbox_turns.go). Threads whose state of record is terminal
-- are never in an inbox, so they are left out of it; the services write
-- the same list as literals, so both databases match the predicate.
CREATE INDEX threads_inbox ON threads (awaiting_identity, turn_seq)
    WHERE record_state NOT IN ('closed', 'deferred', 'obsolete', 'rejected');
-- It replaces the full index on the same columns, which nothing else reads.
DROP INDEX threads_awaiting_turn;
