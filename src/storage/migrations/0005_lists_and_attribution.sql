-- signupd schema, version 5: several lists in one form, the preference page and attribution
-- (`docs/http-api.md`).
--
-- `subscribers` is rebuilt (SQLite cannot change a CHECK constraint in place), following SQLite's
-- procedure for other schema changes; `migrations::migrate` turns foreign keys off around it, so
-- dropping the old table does not cascade into `outbox`, and checks them before it commits.
--
-- - `confirm_method` may also be `preferences` (ticked on the preference page, reached from the
--   inbox) and `import` (brought over by `signupd import`: what the operator asserts, not a
--   confirmation signupd saw).
-- - `source` and `tags`: where the signup came from (`[a-z0-9._-]{1,64}`) and the tags it carried
--   (each one of the list's configured `tags`, joined by commas). Set at the first signup and
--   never changed by a repeat.
-- - One confirmation mail may confirm several lists of one sender: their rows then share the
--   token's hash, so `confirm_hash` is no longer unique.
CREATE TABLE subscribers_v5 (
    id                   TEXT    PRIMARY KEY NOT NULL,             -- UUID
    list_id              TEXT    NOT NULL,
    email                TEXT    NOT NULL COLLATE NOCASE,          -- trimmed, lowercased, punycode domain
    status               TEXT    NOT NULL CHECK (status IN ('pending', 'confirmed')),
    consent_version      TEXT    NOT NULL,
    created_at           INTEGER NOT NULL,
    confirmation_sent_at INTEGER,                                  -- last confirmation mail; the resend compare-and-set key
    confirm_hash         TEXT,                                     -- SHA-256 hex of the current confirm token
    confirm_expires_at   INTEGER,
    confirmed_at         INTEGER,
    confirm_method       TEXT    CHECK (confirm_method IN ('button', 'retype', 'preferences', 'import')),
    confirm_delay_secs   INTEGER,                                  -- seconds from mail to confirm (scanner signal)
    removal_hash         TEXT    NOT NULL UNIQUE,                  -- SHA-256 hex of the removal token
    source               TEXT,                                     -- attribution, e.g. homepage-footer
    tags                 TEXT,                                     -- comma-separated, from the list's tags
    UNIQUE (list_id, email)
) STRICT;

INSERT INTO subscribers_v5 (id, list_id, email, status, consent_version, created_at, confirmation_sent_at,
                            confirm_hash, confirm_expires_at, confirmed_at, confirm_method, confirm_delay_secs,
                            removal_hash)
SELECT id, list_id, email, status, consent_version, created_at, confirmation_sent_at,
       confirm_hash, confirm_expires_at, confirmed_at, confirm_method, confirm_delay_secs, removal_hash
FROM subscribers;

DROP TABLE subscribers;
ALTER TABLE subscribers_v5 RENAME TO subscribers;

CREATE INDEX subscribers_confirm_hash ON subscribers (confirm_hash) WHERE confirm_hash IS NOT NULL;
CREATE INDEX subscribers_confirm_expiry ON subscribers (confirm_expires_at) WHERE confirm_expires_at IS NOT NULL;
CREATE INDEX subscribers_never_mailed ON subscribers (created_at)
    WHERE status = 'pending' AND confirmation_sent_at IS NULL;

ALTER TABLE intake ADD COLUMN source TEXT;
ALTER TABLE intake ADD COLUMN tags TEXT;
