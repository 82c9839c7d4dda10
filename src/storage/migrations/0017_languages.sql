-- signupd schema, version 17: one list, several languages (`languages`, docs/configuration.md).
--
-- `language` is the code of the language the visitor signed up in (`fr`, `pt-BR`), chosen from
-- the request alone (the form's `lang`, else `Accept-Language`, among the list's languages);
-- every later page and mail of the row is written in it. Like `source`, it is set at the first
-- signup and never changed by a repeat. NULL on rows written before this version, which read
-- in the list's `language`.
ALTER TABLE subscribers ADD COLUMN language TEXT;
ALTER TABLE intake ADD COLUMN language TEXT;

-- The status page's signups by language of a list of several languages: the rows created in
-- its range, counted from this index alone. A new row's entry lands at the end of its list's
-- part (rows are created in time order).
CREATE INDEX subscribers_list_language ON subscribers (list_id, created_at, language);
