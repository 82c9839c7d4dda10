-- signupd schema, version 17: one list, several languages (`languages`, docs/configuration.md).
--
-- `language` is the code of the language the visitor signed up in (`fr`, `pt-BR`), chosen from
-- the request alone (the form's `lang`, else `Accept-Language`, among the list's languages);
-- every later page and mail of the row is written in it. Like `source`, it is set at the first
-- signup and never changed by a repeat. NULL on rows written before this version, which read
-- in the list's `language`.
ALTER TABLE subscribers ADD COLUMN language TEXT;
ALTER TABLE intake ADD COLUMN language TEXT;
