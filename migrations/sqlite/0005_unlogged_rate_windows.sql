-- Rate-limit counters are written on every request. On PostgreSQL they
-- need no durability: a crash forgets at most a minute of counts, which
-- only lets a token through a little early. UNLOGGED tables write no WAL,
-- so counting a request costs no fsync. (SQLite keeps them as they are.)
SELECT 1;
