//! `signupd lookup EMAIL [--json]`: everything held about one address, to answer a subject access
//! request (GDPR Art. 15; the JSON is the Art. 20 file, its fields in `docs/operations.md`,
//! "Answering the people on the list"). It reads each list's row with the exact consent text it
//! agreed to, the signups still in the intake queue, the queued mail and the webhook or
//! destination events that still carry the address, its suppressions (on each configured list,
//! and on every list for a bounce or a complaint), and the confirmation mails counted against it
//! in the last day. It writes nothing but its own audit entry, which names the address by its
//! keyed hash only.

use std::io::Write;

use ring::hmac;
use rusqlite::Connection;
use serde::Serialize;

use super::Beside;
use super::audit::{self, CLI};
use crate::clock::{Clock, SystemClock, UnixSeconds, rfc3339};
use crate::config::Config;
use crate::config::secrets::Secret;
use crate::domain::EmailAddress;
use crate::storage::audit::Entry;
use crate::storage::held::{self, Held};
use crate::storage::{address_mails, suppressions};

/// The JSON document: the address, when it was asked, its every-list key, and what is held.
/// `signupd lookup --json` prints it and `GET /api/v1/subscribers` answers it.
#[allow(missing_debug_implementations)]
#[derive(Serialize)]
pub struct Document {
    pub email: String,
    pub looked_up_at: String,
    /// The address's keyed hash, as the audit log names it.
    pub address_hash: String,
    #[serde(flatten)]
    pub held: Held,
}

/// Reads everything held about `email` on the configured lists (and on every list), through
/// `conn`, as of `now`. Writes nothing: the caller records the audit entry.
pub fn look_up(
    config: &Config,
    hash_key: &Secret,
    conn: &Connection,
    email: &EmailAddress,
    now: UnixSeconds,
) -> anyhow::Result<Document> {
    let address = email.as_ref().to_owned();
    let mut keys: Vec<(String, String)> = config
        .lists
        .iter()
        .map(|list| (list.id.as_ref().to_owned(), suppressions::hash(hash_key, list.id.as_ref(), &address)))
        .collect();
    let every_list = suppressions::every_list_hash(hash_key, &address);
    keys.push((suppressions::EVERY_LIST.to_owned(), every_list.clone()));
    let mail_key = address_mails::hash(&hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose()), &address);
    let mut held = held::read(conn, &address, &keys, &mail_key, now)?;
    for row in &mut held.rows {
        row.language = Some(config.row_language_code(&row.list, row.language.as_deref()).to_owned());
    }
    Ok(Document { email: address, looked_up_at: time(now), address_hash: every_list, held })
}

pub async fn run(beside: &Beside, email: &str, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    // The error never repeats the input: it may be an address.
    let email = EmailAddress::parse(email).map_err(|error| anyhow::anyhow!("EMAIL: {error}"))?;
    let secrets = beside.secrets()?;
    let now = SystemClock.now();
    let conn = beside.reader()?;
    let document = look_up(&beside.config, &secrets.hash_key, &conn, &email, now)?;
    drop(conn);

    let writer = beside.writer()?;
    let entry = Entry {
        at: now,
        actor: CLI.to_owned(),
        action: "lookup".to_owned(),
        list_id: None,
        count: Some(i64::try_from(document.held.rows.len()).unwrap_or(i64::MAX)),
        address_hash: Some(document.address_hash.clone()),
    };
    let recorded = audit::record(&writer, entry).await;
    writer.close().await?;
    recorded?;

    if json {
        serde_json::to_writer_pretty(&mut *out, &document)?;
        writeln!(out)?;
    } else {
        write_text(out, &document.email, &document.address_hash, &document.held)?;
    }
    Ok(())
}

fn time(at: UnixSeconds) -> String {
    rfc3339(at).unwrap_or_else(|_| at.to_string())
}

fn optional_time(at: Option<UnixSeconds>) -> String {
    at.map_or_else(|| "-".to_owned(), time)
}

fn write_text(out: &mut dyn Write, address: &str, every_list: &str, held: &Held) -> anyhow::Result<()> {
    writeln!(out, "{address} (address hash {every_list})")?;
    if held.is_empty() {
        writeln!(out, "nothing held")?;
        return Ok(());
    }
    for row in &held.rows {
        writeln!(out, "list {}: {}", row.list, row.status)?;
        writeln!(out, "  id                    {}", row.id)?;
        writeln!(out, "  signed up             {}", time(row.created_at))?;
        writeln!(out, "  confirmation sent     {}", optional_time(row.confirmation_sent_at))?;
        writeln!(out, "  confirmed             {}", optional_time(row.confirmed_at))?;
        writeln!(out, "  confirm method        {}", row.confirm_method.as_deref().unwrap_or("-"))?;
        writeln!(out, "  consent version       {}", row.consent_version)?;
        writeln!(out, "  consent text          {}", row.consent_text.as_deref().unwrap_or("-"))?;
        writeln!(out, "  source                {}", row.source.as_deref().unwrap_or("-"))?;
        writeln!(out, "  tags                  {}", row.tags.as_deref().unwrap_or("-"))?;
        writeln!(out, "  fields                {}", row.fields.listed().as_deref().unwrap_or("-"))?;
        writeln!(out, "  language              {}", row.language.as_deref().unwrap_or("-"))?;
    }
    for signup in &held.signups_waiting {
        writeln!(out, "signup waiting to be applied: list {}, received {}", signup.list, time(signup.received_at))?;
    }
    for mail in &held.queued_mail {
        let held_note = if mail.held { ", held until the visitor presses to send" } else { "" };
        writeln!(
            out,
            "queued mail: {} for {}, queued {}, {} attempt(s), next {}{held_note}",
            mail.kind,
            mail.subscriber_id,
            time(mail.created_at),
            mail.attempts,
            time(mail.next_attempt_at)
        )?;
    }
    for event in &held.queued_events {
        writeln!(
            out,
            "queued event: {} to {}, queued {}, {} attempt(s)",
            event.event_type,
            event.sink,
            time(event.created_at),
            event.attempts
        )?;
    }
    for suppression in &held.suppressions {
        let on = if suppression.list == suppressions::EVERY_LIST {
            "every list".to_owned()
        } else {
            format!("list {}", suppression.list)
        };
        writeln!(out, "suppressed on {on}: {} since {}", suppression.reason, time(suppression.created_at))?;
    }
    writeln!(out, "confirmation mails in the last 24 hours: {}", held.confirmation_mails_last_day)?;
    Ok(())
}
