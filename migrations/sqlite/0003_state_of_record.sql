-- Errata 1 (PARLEY.md §5.2): the state of record, the last confirmed state
-- beneath any pending proposal. Admission, the inbox and the answer rule
-- read it; state_* keep showing the pending proposal, if any.

ALTER TABLE threads ADD COLUMN record_state        TEXT   NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN record_origin       TEXT   NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN record_label        TEXT   NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN record_confirmed_at DATETIME;
ALTER TABLE threads ADD COLUMN record_confirmed_by TEXT   NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN record_event_id     BIGINT NOT NULL DEFAULT 0;

-- Fill it from the log: the newest confirmed state event of each thread
-- (a confirmed proposal's event has confirmed_at filled too). Confirmation
-- only ever applied to the current state event, so the newest confirmed one
-- by position is the last state confirmed.
UPDATE threads SET record_event_id = COALESCE((
    SELECT e.id FROM events e
    WHERE e.thread_id = threads.id AND e.type = 'state' AND e.confirmed_at IS NOT NULL
    ORDER BY e.seq DESC LIMIT 1), 0);
UPDATE threads SET
    record_state        = COALESCE((SELECT e.to_state FROM events e WHERE e.id = threads.record_event_id), ''),
    record_origin       = COALESCE((SELECT e.origin FROM events e WHERE e.id = threads.record_event_id), ''),
    record_label        = COALESCE((SELECT e.label FROM events e WHERE e.id = threads.record_event_id), ''),
    record_confirmed_at = (SELECT e.confirmed_at FROM events e WHERE e.id = threads.record_event_id);
-- Who confirmed it: the first confirm event after it, else its own actor.
UPDATE threads SET record_confirmed_by = COALESCE((
    SELECT c.label FROM events c
    WHERE c.thread_id = threads.id AND c.type = 'confirm'
      AND c.seq > (SELECT e.seq FROM events e WHERE e.id = threads.record_event_id)
    ORDER BY c.seq LIMIT 1), record_label);

-- Under the old rules a model's proposal could lead back to the confirmed
-- state (e.g. reopen, then answer). A proposal equal to the state of record
-- is no proposal: the thread is confirmed at its state of record again.
UPDATE threads SET
    state_origin       = record_origin,
    state_label        = record_label,
    state_confirmed_at = record_confirmed_at,
    state_event_id     = record_event_id
WHERE state_confirmed_at IS NULL AND state = record_state;
