-- signupd schema, version 4: bounds against subscription bombing (`docs/operations.md`, "Under attack").

-- The keyed hash of the client's neighbourhood (IPv4 /24, IPv6 /48 by default), carried from the
-- signup request to its confirmation mail so the mail budget can be shared fairly between
-- networks. Kept only until the mail is sent (the outbox row is deleted then). NULL for items
-- written before this version and for welcome mails.
ALTER TABLE intake ADD COLUMN network TEXT;
ALTER TABLE outbox ADD COLUMN network TEXT;

-- Confirmation mails per address in the last 24 hours (`max_mails_per_address_per_day`): one row
-- per mail, hash = HMAC(hash key, normalised address), hex. No address is stored. Rows older
-- than a day are deleted by the cleanup.
CREATE TABLE address_mails (
    hash    TEXT    NOT NULL,
    sent_at INTEGER NOT NULL
) STRICT;

CREATE INDEX address_mails_by_hash ON address_mails (hash, sent_at);
CREATE INDEX address_mails_by_age ON address_mails (sent_at);

-- Pending rows that never got a confirmation mail expire `confirm_ttl` after the signup; this
-- finds them without scanning the table. A row leaves the index when its first mail is stamped.
CREATE INDEX subscribers_never_mailed ON subscribers (created_at)
    WHERE status = 'pending' AND confirmation_sent_at IS NULL;
