//! The `intake` table: accepted signup requests waiting for the state table to be applied.
//! Appending is the whole of a signup's synchronous work, the same for every address.
//! Items are read in order by the intake worker and deleted by the command that applies them.

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

/// One accepted, not yet applied signup request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeItem {
    pub id: i64,
    pub list_id: String,
    /// Already normalised by `EmailAddress`.
    pub email: String,
    pub consent_version: String,
    pub received_at: UnixSeconds,
    /// The keyed hash of the client's neighbourhood, for the fair mail budget.
    pub network: Option<String>,
    pub source: Option<String>,
    /// Comma-joined.
    pub tags: Option<String>,
    /// The list's field values, a JSON object (`FieldValues::to_column`).
    pub fields: Option<String>,
    /// Recorded while its list was in surge: the id its send token names; mailed only once the
    /// visitor presses.
    pub send_id: Option<i64>,
    /// The visitor's language code, one of the list's (`None`: an item from before the column).
    pub language: Option<String>,
}

/// A request to append. No `Debug`: it holds the address.
#[allow(missing_debug_implementations)]
pub struct NewItem<'a> {
    pub list_id: &'a str,
    pub email: &'a str,
    pub consent_version: &'a str,
    pub network: &'a str,
    pub source: Option<&'a str>,
    /// Comma-joined.
    pub tags: Option<&'a str>,
    /// See [`IntakeItem::fields`].
    pub fields: Option<&'a str>,
    /// See [`IntakeItem::send_id`].
    pub send_id: Option<i64>,
    /// See [`IntakeItem::language`].
    pub language: &'a str,
}

/// Appends `items` (a request's lists) in one statement, so they are all there or none is.
pub fn append(conn: &Connection, items: &[NewItem<'_>], now: UnixSeconds) -> rusqlite::Result<()> {
    const COLUMNS: usize = 10;
    let rows: Vec<String> = (0..items.len())
        .map(|i| {
            let first = i * COLUMNS + 1;
            let marks: Vec<String> = (first..first + COLUMNS).map(|n| format!("?{n}")).collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    let sql = format!(
        "INSERT INTO intake (list_id, email, consent_version, received_at, network, source, tags, fields, send_id, \
         language) \
         VALUES {}",
        rows.join(", ")
    );
    let mut values: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(items.len() * COLUMNS);
    for item in items {
        values.extend([
            &item.list_id as &dyn rusqlite::ToSql,
            &item.email,
            &item.consent_version,
            &now,
            &item.network,
            &item.source,
            &item.tags,
            &item.fields,
            &item.send_id,
            &item.language,
        ]);
    }
    conn.prepare_cached(&sql)?.execute(values.as_slice())?;
    Ok(())
}

/// A visitor pressed "Send my confirmation email" for the signup `send_id`: its items still
/// waiting here are marked pressed (the intake worker queues their mail released).
pub fn press(conn: &Connection, send_id: i64) -> rusqlite::Result<usize> {
    conn.prepare_cached("UPDATE intake SET pressed = 1 WHERE send_id = ?1")?.execute([send_id])
}

/// The oldest `limit` items after the item `after` (0: from the first).
pub fn oldest(conn: &Connection, after: i64, limit: usize) -> rusqlite::Result<Vec<IntakeItem>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "SELECT id, list_id, email, consent_version, received_at, network, source, tags, send_id, fields, language
         FROM intake WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?
    .query_map([after, limit], |row| {
        Ok(IntakeItem {
            id: row.get(0)?,
            list_id: row.get(1)?,
            email: row.get(2)?,
            consent_version: row.get(3)?,
            received_at: row.get(4)?,
            network: row.get(5)?,
            source: row.get(6)?,
            tags: row.get(7)?,
            send_id: row.get(8)?,
            fields: row.get(9)?,
            language: row.get(10)?,
        })
    })?
    .collect()
}

/// Deletes every item for an address on a list (an erasure request); returns how many.
pub fn delete_address(conn: &Connection, list_id: &str, email: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM intake WHERE list_id = ?1 AND email = ?2")?.execute([list_id, email])
}

/// Deletes an item; returns `None` if it was gone already, else whether it was pressed for by
/// now (a press may land between the intake worker's read and its apply: the flag is read
/// again here, in the writer, so no press is lost).
pub fn take(conn: &Connection, id: i64) -> rusqlite::Result<Option<bool>> {
    conn.prepare_cached("DELETE FROM intake WHERE id = ?1 RETURNING pressed")?
        .query_row([id], |row| row.get(0))
        .optional()
}

/// The consent a list shows: its version, its exact text and the text's SHA-256 (hex), computed
/// once, away from the writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentText {
    pub version: String,
    pub text: String,
    pub sha256: String,
}

impl ConsentText {
    pub fn new(version: &str, text: &str) -> Self {
        Self {
            version: version.to_owned(),
            text: text.to_owned(),
            sha256: crate::config::tokens::sha256_hex(text.as_bytes()),
        }
    }
}

/// Records the consent text a list shows, the first time each (list, version, text) is used.
pub fn record_consent_text(
    conn: &Connection,
    list_id: &str,
    consent: &ConsentText,
    now: UnixSeconds,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO consent_texts (list_id, consent_version, text_sha256, consent_text, first_used_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![list_id, consent.version, consent.sha256, consent.text, now])?;
    Ok(())
}

/// The consent text a row of `list_id` agreed to: of the texts recorded for its consent
/// version, the one last first used at or before the row was created (`created_at`); for a
/// row older than every recorded text, the newest ([`agreed_text`]). `None` when the version
/// has no text.
pub fn consent_text_agreed(
    conn: &Connection,
    list_id: &str,
    consent_version: &str,
    created_at: UnixSeconds,
) -> rusqlite::Result<Option<String>> {
    let texts = consent_texts_of(conn, list_id, consent_version)?;
    Ok(agreed_text(&texts, created_at).map(str::to_owned))
}

/// Every text recorded for `consent_version` of `list_id`, as (first used at, text).
pub fn consent_texts_of(
    conn: &Connection,
    list_id: &str,
    consent_version: &str,
) -> rusqlite::Result<Vec<(UnixSeconds, String)>> {
    conn.prepare_cached(
        "SELECT first_used_at, consent_text FROM consent_texts WHERE list_id = ?1 AND consent_version = ?2",
    )?
    .query_map(params![list_id, consent_version], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

/// Of one version's `texts`, the one a row created at `created_at` agreed to: the last first
/// used at or before it; for a row older than them all, the newest.
pub fn agreed_text(texts: &[(UnixSeconds, String)], created_at: UnixSeconds) -> Option<&str> {
    let newest_before = texts.iter().filter(|(first_used, _)| *first_used <= created_at).max_by_key(|(at, _)| *at);
    newest_before.or_else(|| texts.iter().max_by_key(|(at, _)| *at)).map(|(_, text)| text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_agreed_to_the_text_last_first_used_before_it_was_created_else_the_newest() {
        let texts = [(100, "first".to_owned()), (300, "third".to_owned()), (200, "second".to_owned())];
        for (created_at, expected) in [(100, "first"), (250, "second"), (300, "third"), (9_000, "third"), (50, "third")]
        {
            assert_eq!(agreed_text(&texts, created_at), Some(expected), "created at {created_at}");
        }
        assert_eq!(agreed_text(&[], 100), None);
    }
}
