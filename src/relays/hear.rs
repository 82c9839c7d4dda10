//! Hearing one relay request or one mail-borne report, from the raw bytes to what it does
//! (`docs/operations.md`, "Bounces and complaints"): [`relay_request`] for `POST
//! /api/relay/<name>`, [`mail_report`] for `signupd ingest-mail`.
//!
//! In order: the request is authenticated over its raw bytes (`signature`; nothing of it is
//! parsed before, Mailgun's signature object aside); read into events (`payload`); each event's
//! reference opened, and its subject chosen — the reference if it opens, else (only for a
//! relay's authenticated event) the recipient it names; then written, once per event id
//! (`effect`). An event about nobody signupd can name is counted and changes nothing.
//!
//! Decisions where the contract leaves room:
//!
//! - **Receipts are kept 72 hours**, longer than any of these relays retries (Svix and SendGrid
//!   about a day, SNS at most an hour); Mailgun's token is kept for its signature's window, and
//!   an event whose token was seen is a duplicate — Mailgun's signature does not cover the
//!   event, so a captured signature with another event attached is refused this way.
//! - A **duplicate** is answered like the first delivery (2xx): the relay stops retrying, and
//!   nothing is written twice.
//! - A **policy refusal** (5.7.x, "blocked") is logged each time and sent to `alert_webhook` at
//!   most once an hour per relay: a reputation problem arrives as a wave.
//! - An SES **subscription confirmation** for an allowed topic is confirmed by fetching its
//!   `SubscribeURL` (approved to be https on an SNS host by `signature`); a failed fetch is a 503,
//!   so SNS sends the confirmation again.
//! - **SES is believed before anything is fetched**: the `TopicArn` must be one of the relay's
//!   `topics` before its signing certificate is fetched (unsigned until then, but a body naming
//!   another topic is refused without a single outbound request), and the certificate is kept
//!   in the cache only once it verified this message. A failed fetch for an allowed topic is a
//!   503 ([`NotHeard::Fetch`]), so SNS retries.
//! - **A Mailgun event acts only through a reference that opens**: Mailgun's signature covers
//!   the timestamp and the token, not the event, so the recipient a Mailgun event names is not
//!   believed; such an event is counted as `ignored` and changes nothing.
//! - **A mail-borne report acts once per reference and kind** (its receipt is the reference's
//!   content and the report's class, kept [`REFERENCE_RECEIPT_SECS`]): its `Message-ID` is
//!   whatever its sender wrote, so it decides nothing.

use super::configured::{Credential, Relay, SnsCertificates};
use super::effect::{self, Acted, Believed, Receipt, Subject};
use super::event::{Class, RelayEvent};
use super::payload::{self, Unreadable};
use super::report;
use super::signature::{self, MAILGUN_TOLERANCE, Refusal, SnsType};
use crate::clock::UnixSeconds;
use crate::domain::{EmailAddress, ListId};
use crate::door::surge::SurgeModes;
use crate::outbound::mail::alert;
use crate::outbound::mail::reference::{Reference, ReferenceKey};
use crate::subscribers::subscription::Subscriptions;

/// How long an event's receipt is kept, in seconds.
pub const RECEIPT_SECS: i64 = 72 * 3600;

/// How long the receipt of a mail-borne report's reference is kept, in seconds: as long as a
/// complaint about it could count toward the breaker (`effect::REFERENCE_MAX_AGE_DAYS`), and a
/// day more.
pub const REFERENCE_RECEIPT_SECS: i64 = (effect::REFERENCE_MAX_AGE_DAYS + 1) * 86_400;

/// The relay name of reports read by `ingest-mail`: the receipts' namespace and the metrics'
/// label.
pub const MAIL_RELAY: &str = "mail";

/// The relay name of a permanent refusal at send time (the metrics' label).
pub const SMTP_RELAY: &str = crate::metrics::series::SMTP_RELAY;

/// What hearing needs of the running service.
#[derive(Debug, Clone, Copy)]
pub struct Hearing<'a> {
    pub subscriptions: Subscriptions<'a>,
    pub references: &'a ReferenceKey,
    /// For the alert webhook, SNS certificates and subscription confirmations.
    pub client: &'a reqwest::Client,
    /// The server's surge modes, told of a list the complaint breaker holds; `None` outside the
    /// server (`ingest-mail`: the server reads the hold from the database at the next signup).
    pub surge: Option<&'a SurgeModes>,
    pub now: UnixSeconds,
}

/// What a request or a report came to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Heard {
    /// Events acted on (counted, and written if they name somebody).
    pub acted: usize,
    /// Events that had been acted on before.
    pub duplicates: usize,
    /// An SNS subscription was confirmed.
    pub subscribed: bool,
    /// The class of the last event acted on, for a one-line account of a single report.
    pub class: Option<Class>,
}

/// Why a request was not heard.
#[derive(Debug, thiserror::Error)]
pub enum NotHeard {
    /// Authentication failed, or the event is stale: 401, nothing changed.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// Authenticated, but not the kind's JSON: 400.
    #[error("unreadable: {0}")]
    Unreadable(Unreadable),
    /// The database could not be written: 503, so the relay tries again.
    #[error("{0:#}")]
    Unavailable(anyhow::Error),
    /// A fetch an allowed SNS message needs failed (its signing certificate, or its
    /// subscription's confirmation; the error says which): 503, so SNS sends it again.
    #[error("{0:#}")]
    Fetch(anyhow::Error),
}

/// Hears one request at `/api/relay/<name>`: `headers` looks a header up by lowercase name.
pub async fn relay_request<'h>(
    hearing: Hearing<'_>,
    relay: &Relay,
    certificates: &SnsCertificates,
    headers: impl Fn(&str) -> Option<&'h str>,
    body: &[u8],
) -> Result<Heard, NotHeard> {
    let now = hearing.now;
    // The events, and the receipts that make the request itself the same when it comes again.
    let (events, request_receipts): (Vec<RelayEvent>, Vec<Receipt>) = match &relay.credential {
        Credential::Resend(key) => {
            let id = signature::verify_resend(&headers, body, key, now).map_err(NotHeard::Refused)?;
            (payload::resend(body, &id).map_err(NotHeard::Unreadable)?, Vec::new())
        }
        Credential::Postmark(credentials) => {
            signature::verify_postmark(&headers, credentials).map_err(NotHeard::Refused)?;
            (payload::postmark(body).map_err(NotHeard::Unreadable)?, Vec::new())
        }
        Credential::Sendgrid(key) => {
            signature::verify_sendgrid(&headers, body, key, now).map_err(NotHeard::Refused)?;
            (payload::sendgrid(body).map_err(NotHeard::Unreadable)?, Vec::new())
        }
        Credential::Mailgun(key) => {
            let token = signature::verify_mailgun(body, key, now).map_err(NotHeard::Refused)?;
            let receipts =
                vec![Receipt { id: format!("token/{token}"), keep_secs: 2 * MAILGUN_TOLERANCE, spent_anyway: true }];
            match payload::mailgun(body) {
                Ok(events) => (events, receipts),
                Err(unreadable) => {
                    // The token is spent all the same: with another body it must not pass.
                    effect::remember(&hearing.subscriptions, &relay.config.name, &receipts, now)
                        .await
                        .map_err(NotHeard::Unavailable)?;
                    return Err(NotHeard::Unreadable(unreadable));
                }
            }
        }
        Credential::None => {
            // The topic first: nothing is fetched for a message no configured topic sent.
            let url = signature::sns_certificate_url(body, &relay.config.topics).map_err(NotHeard::Refused)?;
            let certificate = certificates.get(&url, hearing.client).await.map_err(NotHeard::Fetch)?;
            let envelope =
                signature::verify_sns(body, &certificate, &relay.config.topics, now).map_err(NotHeard::Refused)?;
            // Only a certificate that verified a message is kept.
            certificates.keep(url, certificate);
            match envelope.kind {
                SnsType::Notification => {
                    (payload::ses(&envelope.message, &envelope.message_id).map_err(NotHeard::Unreadable)?, Vec::new())
                }
                SnsType::SubscriptionConfirmation => {
                    let url = envelope.subscribe_url.ok_or(NotHeard::Refused(Refusal::BadSubscribeUrl))?;
                    confirm_subscription(hearing.client, url).await.map_err(NotHeard::Fetch)?;
                    tracing::info!(relay = relay.config.name, "confirmed the SNS subscription of an allowed topic");
                    return Ok(Heard { subscribed: true, ..Heard::default() });
                }
                SnsType::UnsubscribeConfirmation => return Ok(Heard::default()),
            }
        }
    };
    // Mailgun's signature does not cover the event: its recipient is not believed.
    let believes_recipients = !matches!(relay.credential, Credential::Mailgun(_));
    let mut heard = Heard::default();
    for event in &events {
        let mut receipts = request_receipts.clone();
        receipts.extend(event.id.iter().map(event_receipt));
        let reference = event.reference.as_deref().and_then(|value| hearing.references.open(value));
        let recipient = event.recipient.as_deref().and_then(|text| EmailAddress::parse(text).ok());
        let subject = match (&reference, &recipient) {
            (Some(reference), _) => Some(Subject::Reference(reference)),
            (None, Some(recipient)) if believes_recipients => Some(Subject::Recipient(recipient)),
            (None, _) => None,
        };
        let ignored;
        let event = if reference.is_none() && !believes_recipients && event.class != Class::Ignored {
            tracing::info!(
                relay = relay.config.name,
                event = event.class.label(),
                "a Mailgun event without a reference that opens was ignored: Mailgun's signature does not cover \
                 the event"
            );
            ignored = RelayEvent { class: Class::Ignored, ..event.clone() };
            &ignored
        } else {
            event
        };
        let acted = act(hearing, &relay.config.name, event, subject, None, &receipts).await?;
        count(&mut heard, event.class, acted.is_some());
    }
    Ok(heard)
}

/// Hears one raw mail from `ingest-mail`: a DSN or a feedback report acts only through a
/// reference that opens — never through the recipient it names, which anyone could write.
/// `Ok(None)`: not a report signupd acts on (ignored).
pub async fn mail_report(hearing: Hearing<'_>, raw: &[u8]) -> anyhow::Result<Option<Heard>> {
    let Some(event) = report::read(raw) else {
        return Ok(None);
    };
    let Some(reference) = event.reference.as_deref().and_then(|value| hearing.references.open(value)) else {
        return Ok(None);
    };
    let receipts = [reference_receipt(&reference, event.class)];
    let acted = act(hearing, MAIL_RELAY, &event, Some(Subject::Reference(&reference)), None, &receipts).await?;
    let mut heard = Heard::default();
    count(&mut heard, event.class, acted.is_some());
    Ok(Some(heard))
}

/// A permanent refusal of `email`'s recipient by signupd's own SMTP server at send time, for a
/// mail to `lists`, with the enhanced status it gave (or empty): a hard bounce for the address's
/// pending signups on those lists, counted under the relay name `smtp`. A confirmed row and
/// the other lists are left alone (`effect::refused_at_send`).
pub async fn refused_at_send(
    hearing: Hearing<'_>,
    lists: &[String],
    email: &str,
    status: &str,
) -> Result<(), NotHeard> {
    let Ok(address) = EmailAddress::parse(email) else {
        return Ok(());
    };
    let config = hearing.subscriptions.config;
    let lists: Vec<ListId> = config
        .lists
        .iter()
        .filter(|list| lists.iter().any(|id| id == list.id.as_ref()))
        .map(|list| list.id.clone())
        .collect();
    let removed = effect::refused_at_send(&hearing.subscriptions, &lists, address.as_ref(), hearing.now)
        .await
        .map_err(NotHeard::Unavailable)?;
    crate::metrics::relay_event(SMTP_RELAY, Class::HardBounce.label());
    for removed in &removed {
        crate::metrics::removal(&removed.list_id, removed.reason.as_str(), "relay");
    }
    tracing::info!(
        relay = SMTP_RELAY,
        status,
        removed = removed.len(),
        "the relay refused the address at send time; its pending signups on the mail's lists were removed and \
         the address suppressed there"
    );
    Ok(())
}

/// The receipt of a mail-borne report: what its reference says and the report's class. Two
/// reports about one mail's reference are one report, whatever else they say.
fn reference_receipt(reference: &Reference, class: Class) -> Receipt {
    let id = format!(
        "reference/{}/{}/{}/{}/{}/{}",
        class.label(),
        reference.kind.as_str(),
        reference.issued_day,
        reference.subscriber_id,
        reference.suppression_hash(),
        reference.list_id,
    );
    Receipt { id, keep_secs: REFERENCE_RECEIPT_SECS, spent_anyway: false }
}

/// The receipt of a relay's event id.
fn event_receipt(id: &String) -> Receipt {
    Receipt { id: format!("event/{id}"), keep_secs: RECEIPT_SECS, spent_anyway: false }
}

fn count(heard: &mut Heard, class: Class, acted: bool) {
    if acted {
        heard.acted += 1;
        heard.class = Some(class);
    } else {
        heard.duplicates += 1;
    }
}

/// Writes one event and tells whoever must hear of it: the metrics, and the operator for a
/// policy refusal or a tripped breaker. `None`: a duplicate.
async fn act(
    hearing: Hearing<'_>,
    relay: &str,
    event: &RelayEvent,
    subject: Option<Subject<'_>>,
    list: Option<&str>,
    receipts: &[Receipt],
) -> Result<Option<Acted>, NotHeard> {
    let config = hearing.subscriptions.config;
    let lists: Vec<ListId> = config.lists.iter().map(|list| list.id.clone()).collect();
    let believed = Believed {
        relay,
        receipts,
        alert_once: (event.class == Class::Policy).then_some(relay),
        class: event.class,
        subject,
        list,
        complaint_breaker: config.signup.complaint_breaker,
    };
    let acted =
        effect::act(&hearing.subscriptions, &lists, believed, hearing.now).await.map_err(NotHeard::Unavailable)?;
    let Some(acted) = acted else {
        return Ok(None);
    };
    crate::metrics::relay_event(relay, event.class.label());
    for removed in &acted.removed {
        crate::metrics::removal(&removed.list_id, removed.reason.as_str(), "relay");
    }
    let status = event.status.as_deref().unwrap_or("");
    match event.class {
        Class::Policy => {
            tracing::warn!(
                relay,
                list = acted.list,
                status,
                "a receiver refused signupd's mail for its policy (reputation or authentication), not for the \
                 address; nothing was suppressed"
            );
            if acted.first_alert {
                let refusal = alert::RelayPolicyRefusal {
                    alert: "relay_policy_refusal",
                    relay: relay.to_owned(),
                    list: acted.list.clone(),
                    status: status.to_owned(),
                };
                alert::post(config, hearing.client, &refusal).await;
            }
        }
        Class::HardBounce | Class::Complaint => {
            tracing::info!(
                relay,
                event = event.class.label(),
                list = acted.list,
                status,
                named = subject.is_some(),
                removed = acted.removed.len(),
                "the address was suppressed on every list"
            );
        }
        Class::SoftBounce | Class::Ignored => {}
    }
    if let (Some(until), Some(surge)) = (acted.held_until, hearing.surge) {
        // The honeypot's answer reads this, and must look like everyone else's from now on.
        surge.note(&acted.list, until);
    }
    if let Some(complaints) = acted.tripped {
        tracing::error!(
            list = acted.list,
            complaints,
            "complaint breaker: the list's confirmation mail drew signup.complaint_breaker complaints within an hour; \
             the list is in surge mode for at least an hour"
        );
        let tripped = alert::ComplaintBreaker {
            alert: "complaint_breaker",
            list: acted.list.clone(),
            complaints,
            window: "1h".to_owned(),
        };
        alert::post(config, hearing.client, &tripped).await;
    }
    Ok(Some(acted))
}

/// Confirms an SNS subscription: one GET of its `SubscribeURL`, already approved.
async fn confirm_subscription(client: &reqwest::Client, url: url::Url) -> anyhow::Result<()> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|error| anyhow::anyhow!("cannot confirm the SNS subscription: {}", error.without_url()))?;
    anyhow::ensure!(
        response.status().is_success(),
        "confirming the SNS subscription answered {}",
        response.status().as_u16()
    );
    Ok(())
}
