-- Unread for humans in the web UI: the newest message of each thread a
-- human has seen, recorded when the thread page is shown. What is new is
-- what was posted after it by someone else. The primary key answers both
-- "my visit of this thread" and "my visits of these threads" (one query
-- for a page of the thread list).
CREATE TABLE thread_visits (
    identity        TEXT        NOT NULL,
    thread_id       BIGINT      NOT NULL REFERENCES threads (id),
    last_message_id BIGINT      NOT NULL,
    visited_at      DATETIME    NOT NULL,
    PRIMARY KEY (identity, thread_id)
);
