-- signupd schema, version 7: many networks, one budget (`docs/operations.md`, "Under attack").

-- The paced budget: a bucket of `mail.burst` mails refilled evenly at `mail.max_mails_per_hour`.
-- One row. `credit` is in 1/3600 of a mail, so a second's refill (`max_mails_per_hour` units) is
-- exact whatever the budget; a mail costs 3600. Missing: the bucket is full.
CREATE TABLE mail_bucket (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    credit     INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- Confirmation mails per client neighbourhood (the keyed hash the queued mail carried), one row
-- per mail, for the fair order's sliding hour. Deleted by the cleanup after an hour.
CREATE TABLE network_mails (
    network TEXT    NOT NULL,
    sent_at INTEGER NOT NULL
) STRICT;

CREATE INDEX network_mails_by_age ON network_mails (sent_at, network);

-- Neighbourhoods from which someone confirmed a signup here: the keyed hash of the network and
-- the day (Unix days) of its last confirmation, nothing else. Pruned after
-- `signup.reputation_days` by the cleanup.
CREATE TABLE network_reputation (
    network TEXT    PRIMARY KEY NOT NULL,
    day     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Surge mode: a signup recorded while its list was in surge carries a random `send_id` (the id
-- its send token names; NULL otherwise) and its mail is `held` until the visitor presses "Send
-- my confirmation email" (`pressed`). Held mail is never claimed; pressed mail goes first.
ALTER TABLE intake ADD COLUMN send_id INTEGER;
ALTER TABLE intake ADD COLUMN pressed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN pressed INTEGER NOT NULL DEFAULT 0;

-- The fair order walks the due queue one neighbourhood at a time, pressed mail first
-- (`outbox::fair_order`), so its cost follows how many neighbourhoods are waiting, not how long
-- the queue is.
CREATE INDEX outbox_by_network ON outbox (pressed, network, next_attempt_at, id) WHERE held = 0;

CREATE INDEX intake_by_send_id ON intake (send_id) WHERE send_id IS NOT NULL;

-- Which queued confirmations a send token's signup went into, so a press after the intake worker
-- applied the signup still finds its mail. Gone with the mail.
CREATE TABLE send_refs (
    send_id   INTEGER NOT NULL,
    outbox_id INTEGER NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
    PRIMARY KEY (send_id, outbox_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX send_refs_by_outbox ON send_refs (outbox_id);
