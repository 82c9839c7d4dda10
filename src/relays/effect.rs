//! What a believed event does (`docs/operations.md`, "Bounces and complaints"), written in one
//! command ([`act`]):
//!
//! - **acts once**: a relay's event id is stored as a receipt (a hash, `storage::relay_events`)
//!   in the same transaction, and a second delivery of it changes nothing;
//! - **is counted** on the status page, under the list its reference names (`''` when it names
//!   none): hard and soft bounces, complaints and policy refusals;
//! - a **hard bounce** or a **complaint** suppresses the address on every list (`bounced`,
//!   `complained`, under its every-list key) and, where the address is known, removes its rows
//!   from every configured list — a confirmed row as an unsubscribe (`subscriber.unsubscribed`
//!   with the reason and `via` `relay`, so endpoints and destinations hear of it), a pending row
//!   with its queued mail;
//! - a **complaint about a confirmation mail** is counted for its list by the registrable domain
//!   of the address it was sent to (`domain::RegistrableDomain`, stored as a keyed hash); at
//!   `complaint_breaker` different domains within an hour the list is held in surge mode for at
//!   least an hour (`storage::counters::hold_for_complaints`), renewed only by a complaint from
//!   a domain the window has not counted, and the caller alerts the operator once, when the
//!   count reaches the threshold. Domains are told apart by the ICANN section of the Public
//!   Suffix List alone: `a.duckdns.org` and `b.duckdns.org` are one.
//!   Anyone who was sent a confirmation holds its reference and anyone can mail the bounce
//!   address, so the breaker counts only what a forger cannot multiply: a reference acts once
//!   (the caller's receipt), one address is one domain, and a catch-all domain's thousand
//!   addresses are still one domain. The domain is read from the row the reference names (and
//!   only if that row's address is the one the reference was sealed for): a complaint whose row
//!   is gone suppresses its address but is not counted, and neither is one about a reference
//!   sealed more than [`REFERENCE_MAX_AGE_DAYS`] days ago;
//! - a soft bounce, a policy refusal and anything else change nothing more (the caller alerts
//!   on a policy refusal).
//!
//! A report names its mail one of two ways ([`Subject`]):
//!
//! - by the sealed `X-Signupd-Ref` the mail carried (`mail::reference`), which opens only under
//!   this installation's key. It holds the row's id and the address's every-list key, never the
//!   address: the address is read from the row, and used only if its every-list key is the
//!   reference's, so a reference can only ever act on the address it was sealed for. When the
//!   row is gone (a pending row expired, the subscriber left), the key still suppresses;
//! - by the recipient a relay's event names (when no reference came back), whose every-list key
//!   is computed in memory; nothing of the address is stored but the keyed hash.
//!
//! A mail-borne report (a DSN, a feedback report) is trusted only through a reference that
//! opens: its recipient is whatever its sender wrote, so the caller never makes it a
//! [`Subject::Recipient`].

use super::event::Class;
use crate::clock::UnixSeconds;
use crate::domain::{EmailAddress, ListId, RegistrableDomain};
use crate::outbound::mail::reference::{MailKind, Reference};
use crate::storage::counters;
use crate::storage::relay_events;
use crate::storage::rollups;
use crate::storage::subscribers;
use crate::storage::suppressions::{self, Reason};
use crate::storage::{Batch, Command};
use crate::subscribers::subscription::{Removed, Subscriptions, Suppression, write_prepared};

/// How old a reference may be, in days since it was sealed, for a complaint about it to count
/// toward the complaint breaker. Feedback loops report within minutes to a few days of delivery
/// (a recipient presses "spam" when they see the mail), and a pending row lives only
/// `confirm_ttl`; a month covers a mailbox read late and a relay's slow report with room to
/// spare, while a forger cannot hoard references for longer. An older reference still
/// suppresses its own address.
pub const REFERENCE_MAX_AGE_DAYS: i64 = 30;

/// Whether `reference` was sealed recently enough for a complaint about it to count toward the
/// breaker.
pub fn counts_for_the_breaker(reference: &Reference, now: UnixSeconds) -> bool {
    now.div_euclid(86_400) - i64::from(reference.issued_day) <= REFERENCE_MAX_AGE_DAYS
}

/// What a report is about.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A reference that opened.
    Reference(&'a Reference),
    /// The recipient an authenticated relay event names.
    Recipient(&'a EmailAddress),
}

/// A hard bounce or a complaint: which of the two suppressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    HardBounce,
    Complaint,
}

impl Verdict {
    fn of(class: Class) -> Option<Self> {
        match class {
            Class::HardBounce => Some(Self::HardBounce),
            Class::Complaint => Some(Self::Complaint),
            Class::SoftBounce | Class::Policy | Class::Ignored => None,
        }
    }

    fn reason(self) -> Reason {
        match self {
            Self::HardBounce => Reason::Bounced,
            Self::Complaint => Reason::Complained,
        }
    }
}

/// The status page's series of each class (`rollups`); `None`: not counted.
pub fn series(class: Class) -> Option<&'static str> {
    match class {
        Class::HardBounce => Some("bounces.hard"),
        Class::SoftBounce => Some("bounces.soft"),
        Class::Complaint => Some("complaints"),
        Class::Policy => Some("refusals.policy"),
        Class::Ignored => None,
    }
}

/// What makes an event the same event when it comes again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The relay's id of the event, or of what authenticated it (Mailgun's token), prefixed
    /// with what it is.
    pub id: String,
    /// How long it is kept, in seconds.
    pub keep_secs: i64,
    /// Spent even when another receipt shows the event a duplicate: what authenticated a
    /// request must not authenticate another, whatever the first came to.
    pub spent_anyway: bool,
}

/// A believed event, as [`act`] writes it.
#[derive(Debug, Clone, Copy)]
pub struct Believed<'a> {
    /// The relay's name (`mail` for a report through `ingest-mail`): the receipts' namespace.
    pub relay: &'a str,
    /// What makes the event the same event when it comes again — the relay's id of it, and for
    /// Mailgun the signature's token — each with how long its receipt is kept (longer than the
    /// relay could send it again). If any of them was seen, the event is a duplicate. Empty: it
    /// acts every time it comes.
    pub receipts: &'a [Receipt],
    /// The key of an alert the operator should hear at most once an hour (a policy refusal),
    /// counted with the event: [`Acted::first_alert`] says whether this is the first.
    pub alert_once: Option<&'a str>,
    pub class: Class,
    /// Whom it is about; `None`: nobody signupd can name (it is only counted).
    pub subject: Option<Subject<'a>>,
    /// The list to count it under when no reference names one (a refusal at send time knows
    /// its mail's list); `None`: `''`.
    pub list: Option<&'a str>,
    /// `signup.complaint_breaker`.
    pub complaint_breaker: Option<u32>,
}

/// What [`act`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acted {
    /// The list the event was counted under (`''`: none known).
    pub list: String,
    /// The rows removed, per list.
    pub removed: Vec<Removed>,
    /// The complaint breaker's count, when this complaint about a confirmation mail brought it
    /// to the threshold: the list is held in surge mode from now, and the operator is told.
    pub tripped: Option<i64>,
    /// Until when the complaint breaker holds the list in surge mode, when this complaint set
    /// or renewed the hold.
    pub held_until: Option<UnixSeconds>,
    /// Whether [`Believed::alert_once`]'s alert is due: the first such event this hour.
    pub first_alert: bool,
}

/// Writes what `event` does, in one command; `None` when its receipt shows it was acted on
/// already (nothing is written then).
pub async fn act(
    subscriptions: &Subscriptions<'_>,
    lists: &[ListId],
    event: Believed<'_>,
    now: UnixSeconds,
) -> anyhow::Result<Option<Acted>> {
    let list = match event.subject {
        Some(Subject::Reference(reference)) => reference.list_id.clone(),
        _ => event.list.unwrap_or_default().to_owned(),
    };
    let breaker = match (event.class, event.subject, event.complaint_breaker) {
        (Class::Complaint, Some(Subject::Reference(reference)), Some(breaker))
            if reference.kind == MailKind::Confirmation && counts_for_the_breaker(reference, now) =>
        {
            Some((reference.list_id.clone(), i64::from(breaker)))
        }
        _ => None,
    };
    let receipts = stored_receipts(event.relay, event.receipts, now);
    let alert_once = event.alert_once.map(|key| format!("alert/{key}/{}", rollups::hour_of(now)));
    let suppression = Verdict::of(event.class).zip(event.subject);
    let written = write_prepared(subscriptions.writer, async || {
        let (suppression, address) = match suppression {
            Some((verdict, subject)) => {
                let (suppression, address) = prepare(subscriptions, lists, subject, verdict, now).await?;
                (Some(suppression), address)
            }
            None => (None, None),
        };
        // Counted by the domain of the address the row holds: without it (the row is gone) the
        // complaint cannot be told from a forger's hundredth address at one domain.
        let complaint_on = breaker
            .clone()
            .zip(address.as_deref().and_then(|address| EmailAddress::parse(address).ok()))
            .map(|((list, threshold), address)| {
                let domain = relay_events::domain_hash(subscriptions.hash_key, &RegistrableDomain::of(&address));
                (list, domain, threshold)
            });
        Ok(Some(RecordEvent {
            receipts: receipts.clone(),
            receipts_only: false,
            alert_once: alert_once.clone(),
            count: series(event.class).map(|series| (list.clone(), series)),
            complaint_on,
            suppression,
            now,
        }))
    })
    .await?
    .flatten();
    Ok(written.map(|written| Acted {
        list,
        removed: written.removed,
        tripped: written.tripped,
        held_until: written.held_until,
        first_alert: written.first_alert,
    }))
}

/// A permanent refusal of `email`'s recipient at send time, by the relay signupd sends
/// through, of a mail to `lists`: counted as a hard bounce under the first, and written as
/// `Subscriptions::prepare_send_refusal` prepares it (pending rows on those lists only; a
/// confirmed row is never touched). What was removed.
pub async fn refused_at_send(
    subscriptions: &Subscriptions<'_>,
    lists: &[ListId],
    email: &str,
    now: UnixSeconds,
) -> anyhow::Result<Vec<Removed>> {
    let list = lists.first().map(|list| list.as_ref().to_owned()).unwrap_or_default();
    let written = write_prepared(subscriptions.writer, async || {
        let suppression = subscriptions.prepare_send_refusal(lists, email, now).await?;
        Ok(Some(RecordEvent {
            receipts: Vec::new(),
            receipts_only: false,
            alert_once: None,
            count: series(Class::HardBounce).map(|series| (list.clone(), series)),
            complaint_on: None,
            suppression: Some(suppression),
            now,
        }))
    })
    .await?
    .flatten();
    Ok(written.map(|written| written.removed).unwrap_or_default())
}

/// Records only `receipts` (as [`Believed::receipts`]) of `relay`: for a request that
/// authenticated but cannot be acted on, so what made it authentic cannot be used again.
pub async fn remember(
    subscriptions: &Subscriptions<'_>,
    relay: &str,
    receipts: &[Receipt],
    now: UnixSeconds,
) -> anyhow::Result<()> {
    let command = RecordEvent {
        receipts: stored_receipts(relay, receipts, now),
        receipts_only: true,
        alert_once: None,
        count: None,
        complaint_on: None,
        suppression: None,
        now,
    };
    subscriptions.writer.execute(command).await?;
    Ok(())
}

/// The receipts as stored: key, expiry, spent anyway.
fn stored_receipts(relay: &str, receipts: &[Receipt], now: UnixSeconds) -> Vec<(String, UnixSeconds, bool)> {
    receipts
        .iter()
        .map(|receipt| {
            let key = relay_events::receipt_key(relay, &receipt.id);
            (key, now.saturating_add(receipt.keep_secs), receipt.spent_anyway)
        })
        .collect()
}

/// Suppresses `subject` on every list and removes its rows from each of `lists` (the
/// configured ones) as [`Verdict`] says, without a receipt or a count. What was removed from
/// which list; empty when no row was left (the suppression is recorded all the same).
pub async fn suppress(
    subscriptions: &Subscriptions<'_>,
    lists: &[ListId],
    subject: Subject<'_>,
    verdict: Verdict,
    now: UnixSeconds,
) -> anyhow::Result<Vec<Removed>> {
    let removed = write_prepared(subscriptions.writer, async || {
        Ok(Some(prepare(subscriptions, lists, subject, verdict, now).await?.0))
    })
    .await?;
    Ok(removed.unwrap_or_default())
}

/// The suppression of `subject`, prepared from the rows a reader sees, and its address when it
/// is known (the recipient a relay named, or the address of the row a reference names, if it is
/// the one the reference was sealed for); held in memory only.
async fn prepare(
    subscriptions: &Subscriptions<'_>,
    lists: &[ListId],
    subject: Subject<'_>,
    verdict: Verdict,
    now: UnixSeconds,
) -> anyhow::Result<(Suppression, Option<String>)> {
    let hash_key = subscriptions.hash_key;
    let (email, every_list_hash) = match subject {
        Subject::Recipient(address) => {
            (Some(address.as_ref().to_owned()), suppressions::every_list_hash(hash_key, address.as_ref()))
        }
        Subject::Reference(reference) => {
            let every_list_hash = reference.suppression_hash();
            let id = reference.subscriber_id.to_string();
            let row = subscriptions
                .db
                .run(move |conn| Ok::<_, anyhow::Error>(subscribers::find_removable_by_id(conn, &id)?))
                .await?;
            let email = row
                .map(|(row, _)| row.email)
                .filter(|email| suppressions::every_list_hash(hash_key, email) == every_list_hash);
            (email, every_list_hash)
        }
    };
    let suppression =
        subscriptions.prepare_suppression(lists, email.as_deref(), &every_list_hash, verdict.reason(), now).await?;
    Ok((suppression, email))
}

/// [`act`]'s command: the receipts first (a duplicate writes nothing), then the count, the
/// complaint breaker and the suppression, all in one transaction.
#[derive(Debug)]
struct RecordEvent {
    /// The receipts' keys and expiries, and whether each is spent even on a duplicate.
    receipts: Vec<(String, UnixSeconds, bool)>,
    /// Only the receipts are written ([`remember`]).
    receipts_only: bool,
    /// The counter of an alert due at most once an hour.
    alert_once: Option<String>,
    /// The list and the series to count under.
    count: Option<(String, &'static str)>,
    /// A complaint about this list's confirmation mail: the list, the keyed hash of the
    /// complaining address's registrable domain, and the breaker's threshold.
    complaint_on: Option<(String, String, i64)>,
    suppression: Option<Suppression>,
    now: UnixSeconds,
}

/// What [`RecordEvent`] wrote.
#[derive(Debug)]
struct Written {
    removed: Vec<Removed>,
    tripped: Option<i64>,
    held_until: Option<UnixSeconds>,
    first_alert: bool,
}

impl Command for RecordEvent {
    /// `None`: a duplicate.
    type Output = Option<Written>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Self::Output> {
        let now = self.now;
        let mut duplicate = false;
        for (key, _, _) in &self.receipts {
            duplicate |= relay_events::seen(batch.conn(), key, now)?;
        }
        for (key, expires_at, spent_anyway) in &self.receipts {
            // A Mailgun token first seen on a redelivery is spent all the same, so it cannot
            // carry another event; a duplicate's other receipts are left as they are.
            if !duplicate || *spent_anyway {
                relay_events::first_receipt(batch.conn(), key, *expires_at, now)?;
            }
        }
        if duplicate || self.receipts_only {
            return Ok(None);
        }
        if let Some((list, series)) = &self.count {
            rollups::add(batch.conn(), rollups::hour_of(now), list, series, 1)?;
        }
        let first_alert = match &self.alert_once {
            Some(key) => batch.count(key, 1, now.saturating_add(rollups::HOUR), now)? == 1,
            None => false,
        };
        let mut tripped = None;
        let mut held_until = None;
        if let Some((list, domain, threshold)) = &self.complaint_on {
            let complaints = relay_events::record_complaint(batch.conn(), list, domain, now)?;
            // Only a domain the window has not counted trips the hold or renews it: a forger
            // holding many references at one domain would otherwise keep the list in surge mode
            // with one complaint an hour. The operator hears once, when it trips.
            if complaints.new_domain && complaints.domains >= *threshold {
                held_until = Some(counters::hold_for_complaints(batch, list, now)?);
                if complaints.domains == *threshold {
                    tripped = Some(complaints.domains);
                }
            }
        }
        let removed = match self.suppression {
            Some(suppression) => suppression.apply(batch)?,
            None => Vec::new(),
        };
        Ok(Some(Written { removed, tripped, held_until, first_alert }))
    }
}
