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
    /// Recorded while its list was in surge: the id its send token names; mailed only once the
    /// visitor presses.
    pub send_id: Option<i64>,
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
    /// See [`IntakeItem::send_id`].
    pub send_id: Option<i64>,
}

/// Appends `items` (a request's lists) in one statement, so they are all there or none is.
pub fn append(conn: &Connection, items: &[NewItem<'_>], now: UnixSeconds) -> rusqlite::Result<()> {
    const COLUMNS: usize = 8;
    let rows: Vec<String> = (0..items.len())
        .map(|i| {
            let first = i * COLUMNS + 1;
            let marks: Vec<String> = (first..first + COLUMNS).map(|n| format!("?{n}")).collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    let sql = format!(
        "INSERT INTO intake (list_id, email, consent_version, received_at, network, source, tags, send_id) VALUES {}",
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
            &item.send_id,
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
        "SELECT id, list_id, email, consent_version, received_at, network, source, tags, send_id FROM intake
         WHERE id > ?1 ORDER BY id LIMIT ?2",
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
        Self { version: version.to_owned(), text: text.to_owned(), sha256: crate::tokens::sha256_hex(text.as_bytes()) }
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
/// row older than every recorded text, the newest. `None` when the version has no text.
pub fn consent_text_agreed(
    conn: &Connection,
    list_id: &str,
    consent_version: &str,
    created_at: UnixSeconds,
) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT consent_text FROM consent_texts WHERE list_id = ?1 AND consent_version = ?2
         ORDER BY first_used_at <= ?3 DESC, first_used_at DESC LIMIT 1",
    )?
    .query_row(params![list_id, consent_version, created_at], |row| row.get(0))
    .optional()
}
