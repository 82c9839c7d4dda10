//! Everything the database holds about one address, for `signupd lookup` (a subject access
//! request): its rows on every list with the consent text each agreed to, its signups still in
//! the intake queue, the mail and the webhook or destination events queued for its rows, its
//! suppressions, and the confirmation mails counted against it in the last day. Reads only.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::intake;
use crate::clock::UnixSeconds;
use crate::domain::FieldValues;

/// What [`read`] found. No `Debug`: it holds the address's rows.
#[allow(missing_debug_implementations)]
#[derive(Serialize)]
pub struct Held {
    pub rows: Vec<Row>,
    pub signups_waiting: Vec<WaitingSignup>,
    pub queued_mail: Vec<QueuedMail>,
    pub queued_events: Vec<QueuedEvent>,
    pub suppressions: Vec<Suppression>,
    /// Confirmation mails to the address (in any spelling of its mailbox) in the last 24 hours.
    pub confirmation_mails_last_day: i64,
}

impl Held {
    /// Whether nothing at all is held: no row, no queued work, no suppression, no count.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
            && self.signups_waiting.is_empty()
            && self.queued_mail.is_empty()
            && self.queued_events.is_empty()
            && self.suppressions.is_empty()
            && self.confirmation_mails_last_day == 0
    }
}

/// One list's row.
#[derive(Serialize)]
#[allow(missing_debug_implementations)]
pub struct Row {
    pub id: String,
    pub list: String,
    pub status: String,
    pub created_at: UnixSeconds,
    pub confirmation_sent_at: Option<UnixSeconds>,
    pub confirmed_at: Option<UnixSeconds>,
    pub confirm_method: Option<String>,
    pub consent_version: String,
    /// The exact text the row agreed to.
    pub consent_text: Option<String>,
    pub source: Option<String>,
    /// Comma-joined, as stored.
    pub tags: Option<String>,
    /// The list's field values the row stored, in its order.
    pub fields: FieldValues,
    /// The code of the language the subscriber signed up in, as stored (`None` on a row from
    /// before there was one; `lookup` names the list's `language` then).
    pub language: Option<String>,
}

/// A signup accepted but not yet applied to the rows.
#[derive(Debug, Serialize)]
pub struct WaitingSignup {
    pub list: String,
    pub received_at: UnixSeconds,
    pub source: Option<String>,
    pub tags: Option<String>,
    pub fields: FieldValues,
}

/// A mail queued for one of the address's rows.
#[derive(Debug, Serialize)]
pub struct QueuedMail {
    pub subscriber_id: String,
    /// `confirm` or `welcome`.
    pub kind: String,
    pub created_at: UnixSeconds,
    pub attempts: i64,
    pub next_attempt_at: UnixSeconds,
    /// Held in surge mode until the visitor presses to send.
    pub held: bool,
}

/// A subscriber event queued for a webhook endpoint or a destination.
#[derive(Debug, Serialize)]
pub struct QueuedEvent {
    pub subscriber_id: String,
    /// The list the event is about (every event's payload names it).
    pub list: Option<String>,
    /// The endpoint's or destination's name.
    pub sink: String,
    pub event_type: String,
    pub created_at: UnixSeconds,
    pub attempts: i64,
}

/// A suppression of the address.
#[derive(Debug, Serialize)]
pub struct Suppression {
    /// The list, or `*` for every list (a bounce or a complaint).
    pub list: String,
    pub reason: String,
    pub created_at: UnixSeconds,
}

/// Reads everything held about `email` (normalised, as stored). `suppression_keys`: each list
/// id (and `*`) with the address's key on it; `mail_count_key`: its `address_mails` key.
pub fn read(
    conn: &Connection,
    email: &str,
    suppression_keys: &[(String, String)],
    mail_count_key: &str,
    now: UnixSeconds,
) -> rusqlite::Result<Held> {
    let mut rows: Vec<Row> = conn
        .prepare(
            "SELECT id, list_id, status, created_at, confirmation_sent_at, confirmed_at, confirm_method,
                    consent_version, source, tags, fields, language
             FROM subscribers WHERE email = ?1 ORDER BY list_id",
        )?
        .query_map([email], |row| {
            Ok(Row {
                id: row.get(0)?,
                list: row.get(1)?,
                status: row.get(2)?,
                created_at: row.get(3)?,
                confirmation_sent_at: row.get(4)?,
                confirmed_at: row.get(5)?,
                confirm_method: row.get(6)?,
                consent_version: row.get(7)?,
                consent_text: None,
                source: row.get(8)?,
                tags: row.get(9)?,
                fields: FieldValues::from_column(row.get::<_, Option<String>>(10)?.as_deref()),
                language: row.get(11)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    for row in &mut rows {
        row.consent_text = intake::consent_text_agreed(conn, &row.list, &row.consent_version, row.created_at)?;
    }
    let signups_waiting = conn
        .prepare("SELECT list_id, received_at, source, tags, fields FROM intake WHERE email = ?1 ORDER BY id")?
        .query_map([email], |row| {
            Ok(WaitingSignup {
                list: row.get(0)?,
                received_at: row.get(1)?,
                source: row.get(2)?,
                tags: row.get(3)?,
                fields: FieldValues::from_column(row.get::<_, Option<String>>(4)?.as_deref()),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut queued_mail = Vec::new();
    for row in &rows {
        let mails = conn
            .prepare_cached(
                "SELECT kind, created_at, attempts, next_attempt_at, held FROM outbox WHERE subscriber_id = ?1 ORDER BY id",
            )?
            .query_map([&row.id], |mail| {
                Ok(QueuedMail {
                    subscriber_id: row.id.clone(),
                    kind: mail.get(0)?,
                    created_at: mail.get(1)?,
                    attempts: mail.get(2)?,
                    next_attempt_at: mail.get(3)?,
                    held: mail.get::<_, i64>(4)? != 0,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        queued_mail.extend(mails);
    }
    // An event's payload holds the address until it is delivered or dropped, a removed row's
    // `subscriber.unsubscribed` too: so the queue is searched for the address as a JSON string
    // (quoted, so another address containing it does not match), not by the live rows' ids.
    let quoted = serde_json::to_string(email).unwrap_or_default();
    let queued_events = conn
        .prepare(
            "SELECT subscriber_id, json_extract(payload, '$.data.list'), endpoint, event_type,
                    created_at, attempts
             FROM webhook_deliveries WHERE instr(payload, ?1) > 0 ORDER BY id",
        )?
        .query_map([&quoted], |event| {
            Ok(QueuedEvent {
                subscriber_id: event.get(0)?,
                list: event.get(1)?,
                sink: event.get(2)?,
                event_type: event.get(3)?,
                created_at: event.get(4)?,
                attempts: event.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut suppressions = Vec::new();
    for (list, key) in suppression_keys {
        let found = conn
            .prepare_cached("SELECT reason, created_at FROM suppressions WHERE hash = ?1")?
            .query_map([key], |row| {
                Ok(Suppression { list: list.clone(), reason: row.get(0)?, created_at: row.get(1)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        suppressions.extend(found);
    }
    let confirmation_mails_last_day = conn
        .prepare_cached("SELECT count(*) FROM address_mails WHERE hash = ?1 AND sent_at > ?2")?
        .query_row(params![mail_count_key, now - super::address_mails::DAY], |row| row.get(0))?;
    Ok(Held { rows, signups_waiting, queued_mail, queued_events, suppressions, confirmation_mails_last_day })
}
