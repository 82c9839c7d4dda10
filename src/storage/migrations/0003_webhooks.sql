-- signupd schema, version 3: the durable queue of webhook deliveries (`docs/operations.md`).

-- One row per (endpoint, event), written in the same transaction as the change it reports and
-- deleted once delivered or dropped. The payload holds the subscriber's address: this is the
-- only place it lives outside `subscribers`, and only until then.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    endpoint        TEXT    NOT NULL,                              -- webhooks[].name
    event_id        TEXT    NOT NULL,                              -- webhook-id: the same on every retry
    event_type      TEXT    NOT NULL,
    subscriber_id   TEXT    NOT NULL,                              -- orders one subscriber's events (no foreign key: the row may be gone)
    payload         TEXT    NOT NULL,                              -- the JSON body
    created_at      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,                                       -- a worker holds the delivery until then
    last_error      TEXT                                           -- status code or failure kind; never an address
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint, next_attempt_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint, subscriber_id, id);
