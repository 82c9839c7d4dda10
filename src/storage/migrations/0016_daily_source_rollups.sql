-- signupd schema, version 16: the status page's 30 days by source, read from one row per day.
--
-- `source_rollups` keeps a row per hour, list and source; the 30-day page summed up to
-- 31 × 24 × 102 of them per list. `source_rollups_daily` holds the same counts per UTC day
-- (Unix seconds / 86400), added to in the same writer command as the hour's row, with the same
-- bound: a day of a list keeps 100 sources by name, '' and '(other)' (so a day's sources by name
-- are the first 100 it saw, and the rest is summed under '(other)'; a day's totals always equal
-- the sum of its hours). The hourly cleanup deletes days older than 31, as for the hours.
CREATE TABLE source_rollups_daily (
    day           INTEGER NOT NULL,
    list          TEXT    NOT NULL,
    source        TEXT    NOT NULL,
    signups       INTEGER NOT NULL,
    confirmations INTEGER NOT NULL,
    PRIMARY KEY (day, list, source)
) STRICT, WITHOUT ROWID;

-- The days the hours already hold: per day and list, the 100 named sources with the most signups
-- keep their names (ties by name), the rest is summed under '(other)'.
INSERT INTO source_rollups_daily (day, list, source, signups, confirmations)
WITH by_day AS (
    SELECT hour / 24 AS day, list, source, sum(signups) AS signups, sum(confirmations) AS confirmations
    FROM source_rollups GROUP BY hour / 24, list, source
), ranked AS (
    SELECT *, CASE WHEN source IN ('', '(other)') THEN 0
                   ELSE row_number() OVER (PARTITION BY day, list, source IN ('', '(other)')
                                           ORDER BY signups DESC, source) END AS place
    FROM by_day
)
SELECT day, list, CASE WHEN place > 100 THEN '(other)' ELSE source END AS kept,
       sum(signups), sum(confirmations)
FROM ranked GROUP BY day, list, kept;
