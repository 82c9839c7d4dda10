-- signupd schema, version 15: the complaint breaker counts registrable domains.
--
-- Anyone who was sent one confirmation holds its sealed reference, and anyone can mail the
-- bounce address; so the breaker counts what a forger cannot multiply: the different registrable
-- domains (Public Suffix List) whose addresses complained about a list's confirmation mail in
-- the last hour. `domain` is a keyed hash (HMAC under the hash key) of the registrable domain,
-- never the domain: the table names no address and no domain, only a list id, a hash and a time.
--
-- The rows of version 11 name no domain and cannot be given one; they are at most an hour old
-- (the hourly cleanup deletes older ones), so they are dropped: the breaker of a list that was
-- about to trip starts its hour again.
DROP TABLE complaints;

CREATE TABLE complaints (
    list_id TEXT    NOT NULL,
    domain  TEXT    NOT NULL,
    at      INTEGER NOT NULL
) STRICT;

CREATE INDEX complaints_by_list ON complaints (list_id, at);
