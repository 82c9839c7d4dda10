-- signupd schema, version 12: the audit log (issue "The people on the list").
--
-- One row per operator action: when, who (`cli`, or an API token's name), what (`lookup`,
-- `remove`, `import`, `export`, …), on which list (NULL: every list, or none), how many
-- addresses or rows it concerned, and the address's keyed hash when it was about one address
-- (the every-list key, `suppressions`' hash with the list `*`) — never the address. The hourly
-- cleanup deletes rows older than `cleanup.audit_days`.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY,
    at           INTEGER NOT NULL,
    actor        TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    list_id      TEXT,
    count        INTEGER,
    address_hash TEXT
) STRICT;

CREATE INDEX audit_log_by_time ON audit_log (at);
