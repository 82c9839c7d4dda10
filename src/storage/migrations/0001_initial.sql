-- signupd schema, version 1: every table signupd keeps.
-- Timestamps are UTC Unix seconds. No table holds a raw token, secret or IP address.

-- One row per (list, address) that is pending or confirmed. Removing an address deletes its row;
-- only a suppression hash remains.
CREATE TABLE subscribers (
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
    confirm_method       TEXT    CHECK (confirm_method IN ('button', 'retype')),
    confirm_delay_secs   INTEGER,                                  -- seconds from mail to confirm (scanner signal)
    removal_hash         TEXT    NOT NULL UNIQUE,                  -- SHA-256 hex of the removal token
    UNIQUE (list_id, email)
) STRICT;

CREATE UNIQUE INDEX subscribers_confirm_hash ON subscribers (confirm_hash) WHERE confirm_hash IS NOT NULL;
CREATE INDEX subscribers_confirm_expiry ON subscribers (confirm_expires_at) WHERE confirm_expires_at IS NOT NULL;

-- What each subscriber agreed to (GDPR Art. 7(1)): every distinct text per list and version,
-- recorded the first time it is used.
CREATE TABLE consent_texts (
    list_id         TEXT    NOT NULL,
    consent_version TEXT    NOT NULL,
    text_sha256     TEXT    NOT NULL,
    consent_text    TEXT    NOT NULL,
    first_used_at   INTEGER NOT NULL,
    PRIMARY KEY (list_id, consent_version, text_sha256)
) STRICT;

-- Accepted signup requests, appended before the answer is sent and applied to `subscribers` by
-- the worker afterwards, so every valid request does the same work whatever the address's state.
CREATE TABLE intake (
    id              INTEGER PRIMARY KEY,
    list_id         TEXT    NOT NULL,
    email           TEXT    NOT NULL,
    consent_version TEXT    NOT NULL,
    received_at     INTEGER NOT NULL
) STRICT;

-- Mail to send: confirmation and welcome mails for a subscriber row. Tokens are minted when the
-- mail is sent, so none is stored here. Deleting the subscriber deletes its mail.
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY,
    kind            TEXT    NOT NULL CHECK (kind IN ('confirm', 'welcome')),
    subscriber_id   TEXT    NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,                                       -- a worker holds the item until then
    last_error      TEXT                                           -- SMTP code and reason; never an address
) STRICT;

CREATE INDEX outbox_due ON outbox (next_attempt_at);
CREATE INDEX outbox_subscriber ON outbox (subscriber_id);

-- Fixed-window counters: key = HMAC(hash key, window + bucket + client network), hex.
CREATE TABLE rate_limits (
    key        TEXT    PRIMARY KEY NOT NULL,
    count      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX rate_limits_expiry ON rate_limits (expires_at);

-- Addresses that must not get mail: hash = HMAC(hash key, list id + normalised address), hex.
CREATE TABLE suppressions (
    hash       TEXT    PRIMARY KEY NOT NULL,
    reason     TEXT    NOT NULL CHECK (reason IN ('unsubscribed', 'not_me')),
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
