-- signupd schema, version 11: what the relays' events leave behind (issue "Hear back").
--
-- `relay_receipts`: the events already acted on, so a relay's retry (or a replay) acts once.
-- `key` is the SHA-256 of the relay's name and its event id (or Mailgun's token), never the
-- event; a row is deleted by the hourly cleanup once `expires_at` has passed, which is after the
-- longest window in which the relay could send it again.
CREATE TABLE relay_receipts (
    key        TEXT    PRIMARY KEY NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX relay_receipts_expiry ON relay_receipts (expires_at);

-- `complaints`: one row per complaint about a list's confirmation mail, for the complaint
-- breaker's count over the last hour; the list id and the time, nothing else. Rows older than
-- an hour are deleted by the hourly cleanup.
CREATE TABLE complaints (
    list_id TEXT    NOT NULL,
    at      INTEGER NOT NULL
) STRICT;

CREATE INDEX complaints_by_list ON complaints (list_id, at);
