-- signupd schema, version 10: suppressions for bounces and complaints (issue "Hear back").
--
-- A hard bounce or a complaint is a fact about the address, not about one list: such a
-- suppression is stored once, under the address's every-list key (HMAC with the list id `*`,
-- which no list can have), with list_id '*', and the signup state table reads it beside the
-- list's own key. SQLite cannot change a CHECK constraint in place, so the table is rebuilt with
-- the two new reasons; its rows are copied as they are.
CREATE TABLE suppressions_v10 (
    hash       TEXT    PRIMARY KEY NOT NULL,
    reason     TEXT    NOT NULL CHECK (reason IN ('unsubscribed', 'not_me', 'bounced', 'complained')),
    created_at INTEGER NOT NULL,
    list_id    TEXT
) STRICT, WITHOUT ROWID;

INSERT INTO suppressions_v10 (hash, reason, created_at, list_id)
SELECT hash, reason, created_at, list_id FROM suppressions;

DROP TABLE suppressions;
ALTER TABLE suppressions_v10 RENAME TO suppressions;
