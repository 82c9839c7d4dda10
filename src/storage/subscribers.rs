//! The `subscribers` table and the mail queued for its rows (`outbox`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Confirmed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Confirmed => "confirmed",
        }
    }
}

impl rusqlite::types::FromSql for Status {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match value.as_str()? {
            "pending" => Ok(Self::Pending),
            "confirmed" => Ok(Self::Confirmed),
            other => Err(rusqlite::types::FromSqlError::Other(format!("unknown status {other:?}").into())),
        }
    }
}

/// What the state table needs to know about an existing row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existing {
    pub id: String,
    pub status: Status,
    /// When the last confirmation mail went out; `None` while the first is still queued.
    pub confirmation_sent_at: Option<UnixSeconds>,
}

pub fn find(conn: &Connection, list_id: &str, email: &str) -> rusqlite::Result<Option<Existing>> {
    conn.prepare_cached("SELECT id, status, confirmation_sent_at FROM subscribers WHERE list_id = ?1 AND email = ?2")?
        .query_row(params![list_id, email], |row| {
            Ok(Existing { id: row.get(0)?, status: row.get(1)?, confirmation_sent_at: row.get(2)? })
        })
        .optional()
}

/// A new pending row. No `Debug`: it holds an address, which must never reach a log.
#[allow(missing_debug_implementations)]
pub struct NewPending<'a> {
    pub id: &'a str,
    pub list_id: &'a str,
    pub email: &'a str,
    pub consent_version: &'a str,
    pub created_at: UnixSeconds,
    /// `RemovalToken::removal_hash`: `v2:<id>:<SHA-256 hex of the secret>`. Rows created before
    /// removal tokens carried their row's id hold the bare hash.
    pub removal_hash: &'a str,
    pub source: Option<&'a str>,
    /// Comma-joined.
    pub tags: Option<&'a str>,
    /// The field values, a JSON object (`FieldValues::to_column`).
    pub fields: Option<&'a str>,
    /// The visitor's language code (`None`: the list's default).
    pub language: Option<&'a str>,
}

pub fn insert_pending(conn: &Connection, row: &NewPending<'_>) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash, source, tags,
                                  fields, language)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        row.id,
        row.list_id,
        row.email,
        row.consent_version,
        row.created_at,
        row.removal_hash,
        row.source,
        row.tags,
        row.fields,
        row.language
    ])?;
    Ok(())
}

/// A row brought over by `signupd import`: confirmed on the operator's word
/// (`confirm_method = 'import'`), never mailed. No `Debug`: it holds an address.
#[allow(missing_debug_implementations)]
pub struct NewImported<'a> {
    pub id: &'a str,
    pub list_id: &'a str,
    pub email: &'a str,
    pub consent_version: &'a str,
    /// When signupd recorded the row (the import's time).
    pub created_at: UnixSeconds,
    /// When the operator says the address confirmed (the file's value, else the import's time).
    pub confirmed_at: UnixSeconds,
    /// As [`NewPending::removal_hash`], so the row's manage and unsubscribe links work.
    pub removal_hash: &'a str,
    pub source: Option<&'a str>,
    /// Comma-joined.
    pub tags: Option<&'a str>,
    /// The field values, a JSON object (`FieldValues::to_column`).
    pub fields: Option<&'a str>,
    /// The visitor's language code (`None`: the list's default).
    pub language: Option<&'a str>,
}

/// Inserts an imported row unless the list already has a row for the address (whatever its
/// status): an existing row is never changed. Returns whether the row was inserted.
pub fn insert_imported(conn: &Connection, row: &NewImported<'_>) -> rusqlite::Result<bool> {
    // `DO NOTHING` on the (list_id, email) conflict only: the id and removal hash are fresh, and a
    // clash on them is a bug that must fail the batch rather than pass for an existing address.
    let inserted = conn
        .prepare_cached(
            "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirmed_at,
                                      confirm_method, removal_hash, source, tags, fields, language)
             VALUES (?1, ?2, ?3, 'confirmed', ?4, ?5, ?6, 'import', ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (list_id, email) DO NOTHING",
        )?
        .execute(params![
            row.id,
            row.list_id,
            row.email,
            row.consent_version,
            row.created_at,
            row.confirmed_at,
            row.removal_hash,
            row.source,
            row.tags,
            row.fields,
            row.language
        ])?;
    Ok(inserted == 1)
}

/// Whether `list_id` has a row for `email`, whatever its status.
pub fn exists(conn: &Connection, list_id: &str, email: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM subscribers WHERE list_id = ?1 AND email = ?2")?
        .query_row(params![list_id, email], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// How a signup asks for its confirmation mail: in the budget's order, held until the visitor
/// presses "Send my confirmation email" (recorded while its list was in surge), or pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Press {
    InTurn,
    Held,
    Pressed,
}

/// Queues a confirmation mail for a row unless one is already queued: however often an address
/// is entered, at most one confirmation waits in the queue. `network` is the keyed hash of the
/// signup's neighbourhood (the fair budget), kept with the item until it is sent. A signup that
/// is not held releases a confirmation already queued and held (a press marks it pressed).
/// Returns whether a new item was queued.
pub fn queue_confirmation(
    conn: &Connection,
    subscriber_id: &str,
    network: Option<&str>,
    now: UnixSeconds,
    press: Press,
) -> rusqlite::Result<bool> {
    let queued = conn
        .prepare_cached(
            "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at, network, held, pressed)
                         SELECT 'confirm', ?1, ?2, ?2, ?3, ?4, ?5
                         WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE subscriber_id = ?1 AND kind = 'confirm')",
        )?
        .execute(params![subscriber_id, now, network, press == Press::Held, press == Press::Pressed])?;
    if queued == 0 && press != Press::Held {
        release_confirmation(conn, subscriber_id, press == Press::Pressed)?;
    }
    Ok(queued == 1)
}

/// Releases the row's queued confirmation, if one is queued and held; with `pressed` (its
/// visitor pressed "Send my confirmation email") it also goes first.
pub fn release_confirmation(conn: &Connection, subscriber_id: &str, pressed: bool) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE outbox SET held = 0, pressed = max(pressed, ?2) WHERE subscriber_id = ?1 AND kind = 'confirm'",
    )?
    .execute(params![subscriber_id, pressed])?;
    Ok(())
}

/// Links a signup's send token (`send_id`) to the row's queued confirmation, if one is queued,
/// so a press after the signup was applied still finds its mail.
pub fn link_send(conn: &Connection, send_id: i64, subscriber_id: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO send_refs (send_id, outbox_id)
         SELECT ?1, id FROM outbox WHERE subscriber_id = ?2 AND kind = 'confirm'",
    )?
    .execute(params![send_id, subscriber_id])?;
    Ok(())
}

/// A row as the mail worker needs it. No `Debug`: it holds the address.
#[allow(missing_debug_implementations)]
pub struct MailTarget {
    pub id: String,
    pub list_id: String,
    pub email: String,
    pub status: Status,
    pub confirmation_sent_at: Option<UnixSeconds>,
    /// The link already mailed, restored if a resend fails.
    pub previous_link: PreviousLink,
    /// The visitor's language code, as stored (`ListConfig::row_language` reads it).
    pub language: Option<String>,
}

/// The send time, confirm hash and expiry a row had before a resend was stamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousLink {
    pub sent_at: Option<UnixSeconds>,
    pub confirm_hash: Option<String>,
    pub expires_at: Option<UnixSeconds>,
}

pub fn mail_target(conn: &Connection, id: &str) -> rusqlite::Result<Option<MailTarget>> {
    conn.prepare_cached(
        "SELECT id, list_id, email, status, confirmation_sent_at, confirm_hash, confirm_expires_at, language
         FROM subscribers WHERE id = ?1",
    )?
    .query_row([id], mail_target_row)
    .optional()
}

/// The row of `email` on `list_id`, as the mail worker needs it: a list that one confirmation
/// mail may confirm together with another of the same sender.
pub fn mail_target_on(conn: &Connection, list_id: &str, email: &str) -> rusqlite::Result<Option<MailTarget>> {
    conn.prepare_cached(
        "SELECT id, list_id, email, status, confirmation_sent_at, confirm_hash, confirm_expires_at, language
         FROM subscribers WHERE list_id = ?1 AND email = ?2",
    )?
    .query_row([list_id, email], mail_target_row)
    .optional()
}

fn mail_target_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<MailTarget> {
    let sent_at: Option<UnixSeconds> = row.get(4)?;
    Ok(MailTarget {
        id: row.get(0)?,
        list_id: row.get(1)?,
        email: row.get(2)?,
        status: row.get(3)?,
        confirmation_sent_at: sent_at,
        previous_link: PreviousLink { sent_at, confirm_hash: row.get(5)?, expires_at: row.get(6)? },
        language: row.get(7)?,
    })
}

/// Compare-and-set: stores a new confirm token hash and send time only if the row is still
/// pending with the send time the worker read. Returns whether this worker won.
pub fn stamp_confirmation(
    conn: &Connection,
    id: &str,
    previous_sent_at: Option<UnixSeconds>,
    confirm_hash: &str,
    now: UnixSeconds,
    expires_at: UnixSeconds,
) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE subscribers SET confirm_hash = ?3, confirm_expires_at = ?5, confirmation_sent_at = ?4
             WHERE id = ?1 AND status = 'pending' AND confirmation_sent_at IS ?2",
        )?
        .execute(params![id, previous_sent_at, confirm_hash, now, expires_at])?;
    Ok(changed == 1)
}

/// Undoes [`stamp_confirmation`] after a failed send: the send time, confirm hash and expiry
/// the row had before come back, so the link already mailed keeps working (a token
/// stops working only when a new one was actually sent) and the cooldown sees the old time.
pub fn unstamp_confirmation(
    conn: &Connection,
    id: &str,
    stamped_at: UnixSeconds,
    stamped_hash: &str,
    previous: &PreviousLink,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE subscribers SET confirmation_sent_at = ?4, confirm_hash = ?5, confirm_expires_at = ?6
         WHERE id = ?1 AND confirmation_sent_at = ?2 AND confirm_hash = ?3",
    )?
    .execute(params![
        id,
        stamped_at,
        stamped_hash,
        previous.sent_at,
        previous.confirm_hash,
        previous.expires_at
    ])?;
    Ok(())
}

/// Deletes a pending row that never got a confirmation mail (its queued mail goes with it).
/// Returns whether a row was deleted.
pub fn delete_never_mailed(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    let deleted = conn
        .prepare_cached(
            "DELETE FROM subscribers WHERE id = ?1 AND status = 'pending' AND confirmation_sent_at IS NULL",
        )?
        .execute([id])?;
    Ok(deleted == 1)
}

/// What the confirm page may say about a token, read without writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmView {
    pub list_id: String,
    pub status: Status,
    pub expires_at: Option<UnixSeconds>,
    /// The visitor's language code, as stored: the confirm page speaks it.
    pub language: Option<String>,
}

/// The rows a confirm hash names: one, or one per list that a confirmation mail for several
/// lists of one sender confirms.
pub fn find_by_confirm_hash(conn: &Connection, hash: &str) -> rusqlite::Result<Vec<ConfirmView>> {
    conn.prepare_cached(
        "SELECT list_id, status, confirm_expires_at, language FROM subscribers WHERE confirm_hash = ?1",
    )?
    .query_map([hash], |row| {
        Ok(ConfirmView { list_id: row.get(0)?, status: row.get(1)?, expires_at: row.get(2)?, language: row.get(3)? })
    })?
    .collect()
}

/// A pending row a confirm hash names, read before the confirmation is written (its webhook
/// event and suppression hash are prepared from it). No `Debug`: it holds the address.
#[allow(missing_debug_implementations)]
pub struct ConfirmCandidate {
    pub id: String,
    pub list_id: String,
    pub email: String,
    pub created_at: UnixSeconds,
    pub consent_version: String,
    pub source: Option<String>,
    /// Comma-joined, as stored (`Tag::split` reads it).
    pub tags: Option<String>,
    /// The field values, a JSON object, as stored.
    pub fields: Option<String>,
    /// The visitor's language code, as stored (`None`: the list's default).
    pub language: Option<String>,
}

/// The pending rows whose confirm hash is `hash`, live or not (the confirmation checks that),
/// in the order of their ids.
pub fn pending_by_confirm_hash(conn: &Connection, hash: &str) -> rusqlite::Result<Vec<ConfirmCandidate>> {
    conn.prepare_cached(
        "SELECT id, list_id, email, created_at, consent_version, source, tags, fields, language FROM subscribers
         WHERE confirm_hash = ?1 AND status = 'pending' ORDER BY id",
    )?
    .query_map([hash], |row| {
        Ok(ConfirmCandidate {
            id: row.get(0)?,
            list_id: row.get(1)?,
            email: row.get(2)?,
            created_at: row.get(3)?,
            consent_version: row.get(4)?,
            source: row.get(5)?,
            tags: row.get(6)?,
            fields: row.get(7)?,
            language: row.get(8)?,
        })
    })?
    .collect()
}

/// A row that was just confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JustConfirmed {
    pub id: String,
    pub list_id: String,
    /// Seconds from the confirmation mail to the click.
    pub delay_secs: Option<i64>,
    /// The first signup's attribution, for the status page's rate by source.
    pub source: Option<String>,
}

/// The one atomic transition pending → confirmed (`docs/http-api.md`) of every live row the
/// hash names (several when one mail confirmed several lists), in the order of their ids. With
/// `retyped_email`, the rows' address must match too. The confirm hash stays until the link's
/// lifetime ends, so a repeated POST can be recognised as already done.
pub fn confirm(
    conn: &Connection,
    hash: &str,
    now: UnixSeconds,
    method: &str,
    retyped_email: Option<&str>,
) -> rusqlite::Result<Vec<JustConfirmed>> {
    conn.prepare_cached(
        "UPDATE subscribers
         SET status = 'confirmed', confirmed_at = ?2, confirm_method = ?3,
             confirm_delay_secs = ?2 - confirmation_sent_at
         WHERE status = 'pending' AND confirm_hash = ?1 AND confirm_expires_at >= ?2
           AND (?4 IS NULL OR email = ?4)
         RETURNING id, list_id, confirm_delay_secs, source",
    )?
    .query_map(params![hash, now, method, retyped_email], |row| {
        Ok(JustConfirmed { id: row.get(0)?, list_id: row.get(1)?, delay_secs: row.get(2)?, source: row.get(3)? })
    })?
    .collect::<rusqlite::Result<Vec<_>>>()
    .map(|mut rows| {
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        rows
    })
}

/// Notes the first queue id of the row's `subscriber.confirmed` (`storage::webhooks`).
pub fn set_confirmed_event(conn: &Connection, subscriber_id: &str, first: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE subscribers SET confirmed_event = ?2 WHERE id = ?1")?
        .execute(params![subscriber_id, first])?;
    Ok(())
}

/// The first queue id the row's `subscriber.confirmed` got, if it was queued.
pub fn confirmed_event(conn: &Connection, subscriber_id: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT confirmed_event FROM subscribers WHERE id = ?1")?
        .query_row([subscriber_id], |row| row.get(0))
        .optional()
        .map(Option::flatten)
}

/// The row a removal token or an unsubscribe token names.
pub struct Removable {
    pub id: String,
    pub list_id: String,
    pub email: String,
    pub status: Status,
}

impl std::fmt::Debug for Removable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Removable").field("id", &self.id).field("list_id", &self.list_id).finish_non_exhaustive()
    }
}

/// A [`Removable`] from the columns `id, list_id, email, status`, in that order.
fn removable(row: &rusqlite::Row<'_>) -> rusqlite::Result<Removable> {
    Ok(Removable { id: row.get(0)?, list_id: row.get(1)?, email: row.get(2)?, status: row.get(3)? })
}

/// The row whose `removal_hash` is exactly `removal_hash`: how a removal token mailed before
/// tokens carried their row's id is found (only rows created before store a bare hash).
pub fn find_removable_by_removal_hash(conn: &Connection, removal_hash: &str) -> rusqlite::Result<Option<Removable>> {
    conn.prepare_cached("SELECT id, list_id, email, status FROM subscribers WHERE removal_hash = ?1")?
        .query_row([removal_hash], removable)
        .optional()
}

/// The row with this id (by primary key), with its `removal_hash`, for checking a removal token
/// that names its row, or for a signed unsubscribe token.
pub fn find_removable_by_id(conn: &Connection, id: &str) -> rusqlite::Result<Option<(Removable, String)>> {
    conn.prepare_cached("SELECT id, list_id, email, status, removal_hash FROM subscribers WHERE id = ?1")?
        .query_row([id], |row| Ok((removable(row)?, row.get(4)?)))
        .optional()
}

/// Deletes a row everywhere at once: the row, its queued mail (by cascade) and any intake item
/// for the same address.
pub fn delete_everywhere(conn: &Connection, row: &Removable) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM subscribers WHERE id = ?1")?.execute([&row.id])?;
    super::intake::delete_address(conn, &row.list_id, &row.email)?;
    Ok(())
}

/// The hourly cleanup: deletes pending rows whose confirm link expired before `now`; their
/// queued mail goes by cascade.
pub fn delete_expired_pending(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM subscribers WHERE status = 'pending' AND confirm_expires_at < ?1")?.execute([now])
}

/// The hourly cleanup: deletes pending rows created before `created_before` that never got a
/// mail, with their queued mail (by cascade).
pub fn delete_never_mailed_before(conn: &Connection, created_before: UnixSeconds) -> rusqlite::Result<usize> {
    // The condition repeats the index's, so the partial index `subscribers_never_mailed` finds
    // them.
    conn.prepare_cached(
        "DELETE FROM subscribers
         WHERE status = 'pending' AND confirmation_sent_at IS NULL AND created_at < ?1",
    )?
    .execute([created_before])
}

/// The hourly cleanup: forgets the confirm hash of confirmed rows whose link's lifetime ended
/// before `now` (kept until then so a repeated confirm POST is idempotent).
pub fn clear_spent_confirm_hashes(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "UPDATE subscribers SET confirm_hash = NULL, confirm_expires_at = NULL
         WHERE status = 'confirmed' AND confirm_expires_at < ?1",
    )?
    .execute([now])
}

/// A confirmed row as `signupd backfill` hands it on. No `Debug`: it holds an address.
#[allow(missing_debug_implementations)]
pub struct Backfillable {
    pub id: String,
    pub list_id: String,
    pub email: String,
    pub created_at: UnixSeconds,
    pub confirmed_at: UnixSeconds,
    pub confirm_method: String,
    pub consent_version: String,
    pub source: Option<String>,
    /// Comma-joined, as stored (`Tag::split` reads it).
    pub tags: Option<String>,
    /// The field values, a JSON object, as stored.
    pub fields: Option<String>,
    /// The visitor's language code, as stored (`None`: the list's default).
    pub language: Option<String>,
}

/// Up to `limit` confirmed rows of `list_id` whose address sorts after `after` (all of them from
/// the first when `None`), in address order: a page read through the `(list_id, email)` index,
/// so a list of any size is read a page at a time without a sort.
pub fn confirmed_after(
    conn: &Connection,
    list_id: &str,
    after: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<Backfillable>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "SELECT id, list_id, email, created_at, coalesce(confirmed_at, created_at), coalesce(confirm_method, 'button'),
                consent_version, source, tags, fields, language
         FROM subscribers
         WHERE list_id = ?1 AND (?2 IS NULL OR email > ?2) AND status = 'confirmed'
         ORDER BY email LIMIT ?3",
    )?
    .query_map(params![list_id, after, limit], |row| {
        Ok(Backfillable {
            id: row.get(0)?,
            list_id: row.get(1)?,
            email: row.get(2)?,
            created_at: row.get(3)?,
            confirmed_at: row.get(4)?,
            confirm_method: row.get(5)?,
            consent_version: row.get(6)?,
            source: row.get(7)?,
            tags: row.get(8)?,
            fields: row.get(9)?,
            language: row.get(10)?,
        })
    })?
    .collect()
}

/// How many rows of `list_id` are confirmed.
pub fn count_confirmed(conn: &Connection, list_id: &str) -> rusqlite::Result<u64> {
    conn.prepare_cached("SELECT count(*) FROM subscribers WHERE list_id = ?1 AND status = 'confirmed'")?
        .query_row([list_id], |row| row.get::<_, i64>(0))
        .map(|count| count.unsigned_abs())
}

/// Whether the row `id` exists and is confirmed.
pub fn is_confirmed(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM subscribers WHERE id = ?1 AND status = 'confirmed')")?
        .query_row([id], |row| row.get(0))
}

/// Which rows `signupd export` writes.
#[derive(Debug, Clone, Copy)]
pub struct ExportFilter<'a> {
    pub list_id: Option<&'a str>,
    /// `None`: both.
    pub status: Option<Status>,
    pub created_since: Option<UnixSeconds>,
}

/// A row as `signupd export` writes it. No `Debug`: it holds an address.
#[allow(missing_debug_implementations)]
pub struct Exported {
    pub id: String,
    pub email: String,
    pub list_id: String,
    pub status: Status,
    pub created_at: UnixSeconds,
    pub confirmed_at: Option<UnixSeconds>,
    pub confirm_method: Option<String>,
    pub consent_version: String,
    /// The text the row agreed to ([`super::intake::consent_text_agreed`]).
    pub consent_text: Option<String>,
    pub source: Option<String>,
    /// Comma-joined, as stored (`Tag::split` reads it).
    pub tags: Option<String>,
    /// The field values, a JSON object (`FieldValues::from_column` reads it).
    pub fields: Option<String>,
    /// The visitor's language code, as stored (`None`: the list's default).
    pub language: Option<String>,
}

/// Calls `each` with every row `filter` selects, in the order they were created. Run it inside
/// a read transaction, so every row comes from one snapshot.
pub fn for_each_exported(
    conn: &Connection,
    filter: ExportFilter<'_>,
    mut each: impl FnMut(Exported) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut statement = conn.prepare(
        "SELECT id, email, list_id, status, created_at, confirmed_at, confirm_method, consent_version, source, tags,
                fields, language
         FROM subscribers
         WHERE (?1 IS NULL OR list_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR created_at >= ?3)
         ORDER BY rowid",
    )?;
    let status = filter.status.map(Status::as_str);
    let mut rows = statement.query(params![filter.list_id, status, filter.created_since])?;
    while let Some(row) = rows.next()? {
        let (list_id, consent_version, created_at): (String, String, UnixSeconds) =
            (row.get(2)?, row.get(7)?, row.get(4)?);
        let consent_text = super::intake::consent_text_agreed(conn, &list_id, &consent_version, created_at)?;
        each(Exported {
            id: row.get(0)?,
            email: row.get(1)?,
            list_id,
            status: row.get(3)?,
            created_at,
            confirmed_at: row.get(5)?,
            confirm_method: row.get(6)?,
            consent_version,
            consent_text,
            source: row.get(8)?,
            tags: row.get(9)?,
            fields: row.get(10)?,
            language: row.get(11)?,
        })?;
    }
    Ok(())
}
