-- signupd schema, version 8: one subscriber's events kept in order without an index on
-- subscriber_id (`storage::webhooks`).
--
-- The order index (endpoint, subscriber_id, id) took one page at a random place of the file for
-- every queued event — a fifth of the confirm rate with a webhook endpoint or a destination
-- (BENCHMARKS.md). Only one order matters: a subscriber's `subscriber.unsubscribed` must wait
-- while its `subscriber.confirmed` is still queued for the same endpoint. So the confirmed
-- event's first row id is kept on the subscriber row, and the unsubscribed event, queued while
-- that row still exists, names the row it waits for.

-- The first webhook_deliveries id of the row's `subscriber.confirmed` (its rows for the
-- endpoints and destinations were inserted together, so their ids follow one another); kept
-- after delivery, when it points at nothing.
ALTER TABLE subscribers ADD COLUMN confirmed_event INTEGER;

-- The id of the queued event, for the same endpoint, that this one waits for; NULL: none.
ALTER TABLE webhook_deliveries ADD COLUMN after_id INTEGER;

-- Events queued before this version: each waits for the one before it about the same
-- subscriber, as the index made them.
UPDATE webhook_deliveries
SET after_id = (SELECT max(e.id) FROM webhook_deliveries e
                WHERE e.endpoint = webhook_deliveries.endpoint
                  AND e.subscriber_id = webhook_deliveries.subscriber_id
                  AND e.id < webhook_deliveries.id);

UPDATE subscribers
SET confirmed_event = (SELECT min(d.id) FROM webhook_deliveries d
                       WHERE d.subscriber_id = subscribers.id AND d.event_type = 'subscriber.confirmed')
WHERE id IN (SELECT subscriber_id FROM webhook_deliveries WHERE event_type = 'subscriber.confirmed');

DROP INDEX webhook_deliveries_order;
