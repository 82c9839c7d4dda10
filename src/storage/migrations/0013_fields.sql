-- signupd schema, version 13: the fields a list's form may carry (`[[lists.fields]]`,
-- `docs/http-api.md`).
--
-- `fields` holds a signup's kept values as one JSON object of strings, in the order the list
-- declares its fields (`{"first_name":"Ann","topic":"rust"}`); NULL when none were kept. Like
-- `source` and `tags`, it is set at the first signup and never changed by a repeat. Rows written
-- before this version have none.
ALTER TABLE subscribers ADD COLUMN fields TEXT;
ALTER TABLE intake ADD COLUMN fields TEXT;
