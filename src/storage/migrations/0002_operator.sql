-- signupd schema, version 2: what the operator's `signupd stats` reports.

-- Which list a suppression belongs to, for per-list counts. A list id is not personal data; the
-- address stays hashed. NULL for suppressions recorded before this version.
ALTER TABLE suppressions ADD COLUMN list_id TEXT;

-- When each periodic job last finished (`cleanup`).
CREATE TABLE service_runs (
    name        TEXT    PRIMARY KEY NOT NULL,
    last_run_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
