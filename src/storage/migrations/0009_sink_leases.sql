-- signupd schema, version 9: one lease per webhook endpoint or destination instead of one per
-- queued event (`storage::webhooks`).
--
-- Each sink has one delivery worker, which took its events in batches by writing a lease into
-- every row it claimed, and wrote each row again when it settled it: a write of every event
-- twice over, on the writer the confirm pages wait for (BENCHMARKS.md). The worker now takes the
-- sink's lease, one row, and reads its due events; a row is written only when it is settled.

CREATE TABLE sink_leases (
    sink        TEXT    PRIMARY KEY,                -- webhooks[].name or destinations[].name
    holder      TEXT    NOT NULL,                   -- the worker holding it, a random id per start
    lease_until INTEGER NOT NULL                    -- free from then on (Unix seconds)
) STRICT, WITHOUT ROWID;

-- Leases of events are no longer written; one still running out (a kill -9 of the previous
-- version) is dropped with the column: the event is delivered again, as at least once allows.
ALTER TABLE webhook_deliveries DROP COLUMN lease_until;
