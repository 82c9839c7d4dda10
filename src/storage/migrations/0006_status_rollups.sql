-- signupd schema, version 6: the status page's hourly rollups (`docs/operations.md`, "The status
-- page").

-- Counts only: one row per clock hour (Unix seconds / 3600), list and series. `list` is a
-- configured list id, `none` for signups that named no list, or '' for the service-wide series
-- (mail, queues, webhooks). `series` is a fixed word such as `signups.accepted`, `confirmations`,
-- `mails.sent` or `queue.mail.depth`; never an address, a token or an IP. Counters are added to
-- (`value + excluded.value`), gauges keep the hour's maximum. The primary key serves the page's
-- one range query (hours from … to now) and the cleanup's prune (hours before …); rows older
-- than 400 days are deleted by the hourly cleanup.
CREATE TABLE rollups (
    hour   INTEGER NOT NULL,
    list   TEXT    NOT NULL,
    series TEXT    NOT NULL,
    value  INTEGER NOT NULL,
    PRIMARY KEY (hour, list, series)
) STRICT, WITHOUT ROWID;
