//! `signupd ingest-mail`: one raw mail on standard input — a delivery status notification
//! (RFC 3464) or a feedback report (RFC 5965) about a mail signupd sent — as a Postfix `pipe`
//! transport for the bounce address delivers it (`docs/operations.md`, "Bounces and
//! complaints"). It acts only through the `X-Signupd-Ref` the report quotes, and only if that
//! opens under this installation's key (`relays::hear::mail_report`): a forged bounce changes
//! nothing.
//!
//! Exit codes are what the pipe transport understands: 0 when the mail was handled or is not a
//! report signupd acts on (Postfix delivers it, and it is gone), [`EX_TEMPFAIL`] (75) when it
//! could not be recorded — the database is missing, locked or read-only, the configuration or a
//! secret unreadable — so Postfix keeps it queued and tries again, and nothing is lost while
//! signupd is being fixed. The output never holds the address: the report is about one, and
//! standard error ends up in Postfix's log.

use std::io::Read;

use super::Beside;
use crate::clock::{Clock, SystemClock};
use crate::outbound::mail::reference::ReferenceKey;
use crate::relays::event::Class;
use crate::relays::hear::{self, Heard, Hearing};
use crate::subscribers::subscription::Subscriptions;

/// The exit code Postfix's pipe(8) defers on (sysexits.h).
pub const EX_TEMPFAIL: u8 = 75;

/// The largest mail read: a DSN with the original attached is a few tens of KiB; anything far
/// larger is not a report, and is read no further.
pub const MAX_MAIL_BYTES: u64 = 10 * 1024 * 1024;

/// Reads one mail from `input` and acts on it; what it did, in words for the log.
pub async fn run(beside: &Beside, input: &mut dyn Read) -> anyhow::Result<String> {
    let mut raw = Vec::new();
    input.take(MAX_MAIL_BYTES).read_to_end(&mut raw)?;
    let secrets = beside.secrets()?;
    let webhooks = beside.webhooks(&secrets)?;
    let writer = beside.writer()?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()?;
    let references = ReferenceKey::derive(&secrets.hash_key);
    let hearing = Hearing {
        subscriptions: Subscriptions {
            config: &beside.config,
            db: &beside.db,
            writer: &writer,
            hash_key: &secrets.hash_key,
            webhooks: &webhooks,
        },
        references: &references,
        client: &client,
        surge: None,
        now: SystemClock.now(),
    };
    let heard = hear::mail_report(hearing, &raw).await;
    // Closed here: with no server running, these were the last connections, and closing them
    // removes the `-wal` and `-shm` files.
    writer.close().await?;
    Ok(match heard? {
        None => "ignored: not a report about a mail of this signupd".to_owned(),
        Some(Heard { class: Some(class), .. }) => format!("handled: {}", account(class)),
        Some(_) => "ignored: this report was recorded before".to_owned(),
    })
}

/// What a report of `class` did, in words for Postfix's log.
fn account(class: Class) -> &'static str {
    match class {
        Class::HardBounce => "a hard bounce; the address is suppressed on every list",
        Class::Complaint => "a complaint; the address is suppressed on every list",
        Class::SoftBounce => "a soft bounce; counted, nothing suppressed",
        Class::Policy => "a refusal for the receiver's policy; counted, nothing suppressed, the operator alerted",
        Class::Ignored => "a report that needs nothing done; counted",
    }
}
