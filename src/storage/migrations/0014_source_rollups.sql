-- signupd schema, version 14: the status page's confirmation rate by source
-- (`docs/operations.md`, "The status page").
--
-- Counts only, like `rollups`: one row per clock hour (Unix seconds / 3600), list and source,
-- with the accepted signups that carried the source and the confirmations of rows whose first
-- signup did. `source` is a signup's `source` (1-64 characters of a-z, 0-9, '.', '_', '-'), ''
-- for signups that carried none, or '(other)' for the sources past the 100 an hour and list
-- keeps by name: a source is whatever a form sent, so the table is bounded by that rule, not by
-- the configuration. The hourly cleanup deletes rows older than 31 days (the page's longest
-- range).
CREATE TABLE source_rollups (
    hour          INTEGER NOT NULL,
    list          TEXT    NOT NULL,
    source        TEXT    NOT NULL,
    signups       INTEGER NOT NULL,
    confirmations INTEGER NOT NULL,
    PRIMARY KEY (hour, list, source)
) STRICT, WITHOUT ROWID;
