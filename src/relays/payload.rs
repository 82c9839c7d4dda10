//! What a relay's webhook says, once its request is authenticated ([`super::signature`]): each
//! kind's body read into the [`RelayEvent`]s that [`super::effect`] acts on.
//!
//! # Reading
//!
//! A body is read as loose JSON, field by field: relays add fields and event types without
//! notice, so a field that is missing or of another type is only absent from the event, and an
//! event type not named below is one [`Class::Ignored`] event, which the caller answers with a
//! 200 and counts rather than have the relay retry what will never be understood. Only a body
//! that is not JSON, or not the kind's shape at its top (an object with its type field; SendGrid's
//! array; Mailgun's `event-data` object), is [`Unreadable`], in this module's words and never the
//! body's, since a body names addresses. Nothing here logs.
//!
//! An event carries the recipient exactly as the relay wrote it (not parsed, not lowercased), the
//! enhanced status code only when [`Class::of_status`] accepts it (never the diagnostic text,
//! which often quotes the address), and the reference unopened. An ignored event carries its id
//! and nothing else, since nothing acts on the rest.
//!
//! # Classes
//!
//! The contract: a hard bounce is 5.1.x, 5.2.1, 5.4.4 or what the relay calls permanent; a soft
//! bounce is counted only; 5.7.x or the relay's "blocked" is the receiver's policy; a complaint
//! is a complaint unless it says "not spam"; the rest is ignored. A bounce the relay calls
//! permanent stays hard whatever its enhanced code says, except that a 5.7.x makes it policy
//! (the receiver refused the sender, not the address) and a 4.x.x a soft bounce (the failure was
//! passing). A bounce the relay calls passing stays soft unless its code says the address is bad
//! (5.1.x, 5.2.1, 5.4.4: listmonk promotes SES's transient 5.4.4 the same way) or that the
//! receiver refused the sender (5.7.x).
//!
//! Per kind, what is not listed is ignored:
//!
//! - **SES** (`notificationType`, or `eventType` when published through a configuration set):
//!   `Bounce` `Permanent` is hard, and so are its subtypes `Suppressed` and
//!   `OnAccountSuppressionList` whatever their code (SES did not even try: the address is on its
//!   suppression list); `Transient` and `Undetermined` are soft, `ContentRejected` policy;
//!   `DeliveryDelay` is soft; `Complaint` is a complaint, but `not-spam` is ignored and
//!   `auth-failure` is policy. Each bounced, delayed or complained recipient is an event.
//! - **Resend**: `email.bounced` is hard when `bounce.type` is `Permanent` (any case), policy for
//!   `ContentRejected` (its types and subtypes are SES's), soft otherwise, also when it has no
//!   type; `email.suppressed` is hard; `email.delivery_delayed` soft; `email.complained` a
//!   complaint.
//! - **Postmark**: a `Bounce` of `Type` `HardBounce` or `BadEmailAddress` is hard; `SoftBounce`,
//!   `Transient`, `DnsError` soft; `Blocked`, `DMARCPolicy`, `SpamNotification` policy;
//!   `SpamComplaint` a complaint. A `SpamComplaint` record is a complaint. A `SubscriptionChange`
//!   that suppresses sending is hard for `HardBounce` and a complaint for `SpamComplaint`.
//! - **SendGrid**: `bounce` is policy for `type` `blocked`, else hard (refined by `status`);
//!   `deferred` soft; `spamreport` a complaint; `dropped` is hard for "Bounced Address" and a
//!   complaint for "Spam Reporting Address".
//! - **Mailgun**: `failed` is hard for `reason` `suppress-bounce` or `delivery-status.code` 605,
//!   a complaint for `suppress-complaint`, ignored for `suppress-unsubscribe`; otherwise hard for
//!   `severity` `permanent` (refined by `delivery-status.enhanced-code`) and soft for anything
//!   else; `complained` is a complaint.
//!
//! Decisions worth knowing:
//!
//! - A delay (SES's `DeliveryDelay`, Resend's `email.delivery_delayed`) is a soft bounce, as
//!   SendGrid's `deferred` is: it only counts.
//! - SES's `auth-failure` feedback is a report about authentication (RFC 6591), not a person's
//!   complaint: it suppresses nothing and reaches the operator as policy.
//! - Postmark's `SpamNotification` is a receiving spam filter refusing the content, not a person
//!   (Postmark itself does not deactivate the address for it): policy. Its `ManuallyDeactivated`,
//!   `Unsubscribe`, `AutoResponder`, `VirusNotification`, `Unknown` and the like are ignored, and
//!   so is a `SubscriptionChange` for a `ManualSuppression` or a reactivation.
//! - Mailgun's `suppress-unsubscribe` failure is permanent at Mailgun but says nothing of the
//!   address's existence: ignored. Its drop codes are read only for 605 (previously bounced);
//!   sources disagree on whether 606 or 607 is the complaint, so the `reason` decides those.
//! - Resend may list several recipients in `to` without saying which one an event is about; each
//!   gets an event (signupd's mail has one recipient, so there is one).
//!
//! # Where the reference comes back
//!
//! Every mail about a subscriber carries `X-Signupd-Ref` ([`reference::HEADER`]); each kind
//! echoes it its own way, and the event holds it as it came:
//!
//! - SES: the `mail.headers` entry of that name (any case), present only when the operator
//!   enabled "Include original headers" and the headers were not truncated;
//! - Resend: the `data.headers` entry of that name (any case), a list of `{name, value}` or an
//!   object of name to value;
//! - Postmark: `Metadata[`[`POSTMARK_METADATA_KEY`]`]`, from the `X-PM-Metadata-signupd-ref`
//!   header; Postmark returns no headers;
//! - SendGrid: the top-level key [`METADATA_KEY`], where SendGrid flattens the `unique_args` of
//!   `X-SMTPAPI`;
//! - Mailgun: `event-data.user-variables[`[`METADATA_KEY`]`]`, from `X-Mailgun-Variables`.
//!
//! # Event ids
//!
//! The id is what makes a relay's retry act once: SNS's `MessageId` and Svix's `svix-id` (given
//! by the caller, each request's own), Postmark's bounce `ID` (or the record type, `MessageID`
//! and time of a record that has none), SendGrid's `sg_event_id`, Mailgun's `event-data.id`. When
//! one SES notification or Resend event names several recipients, each event's id is the
//! request's id followed by `/` and the recipient's index.

use serde_json::Value;

use super::event::{Class, RelayEvent};
use crate::outbound::mail::reference;

/// The field name signupd sets in a relay's metadata so the relay echoes the reference back:
/// Mailgun's user-variables (`X-Mailgun-Variables`) and SendGrid's unique_args (`X-SMTPAPI`).
pub const METADATA_KEY: &str = reference::ECHO_KEY;
/// The key of Postmark's `Metadata` that carries the reference (from the header
/// `X-PM-Metadata-signupd-ref`).
pub const POSTMARK_METADATA_KEY: &str = reference::POSTMARK_ECHO_KEY;

/// A body that authenticated but is not the kind's JSON. The words are for a log and never hold
/// anything of the body.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct Unreadable(pub &'static str);

/// SES's event: the `Message` string of an SNS notification whose envelope was already verified;
/// `sns_message_id` (its `MessageId`) is the event id. A notification (`notificationType`) and an
/// event published through a configuration set (`eventType`) are read alike.
pub fn ses(message: &str, sns_message_id: &str) -> Result<Vec<RelayEvent>, Unreadable> {
    let event: Value = serde_json::from_str(message).map_err(|_| Unreadable("the SNS message is not JSON"))?;
    let kind = text(&event, "notificationType")
        .or_else(|| text(&event, "eventType"))
        .ok_or(Unreadable("the SNS message is not an SES event: it has no notificationType or eventType"))?;
    let id = Some(sns_message_id).filter(|id| !id.is_empty());
    let findings = match kind {
        "Bounce" => {
            let bounce = field(&event, "bounce");
            let (bounce_type, sub_type) = (text(bounce, "bounceType"), text(bounce, "bounceSubType"));
            per_entry(field(bounce, "bouncedRecipients"), |recipient| {
                let status = status(text(recipient, "status"));
                Finding::new(
                    ses_bounce(bounce_type, sub_type, status.as_deref()),
                    text(recipient, "emailAddress"),
                    status,
                )
            })
        }
        "Complaint" => {
            let complaint = field(&event, "complaint");
            let class = match text(complaint, "complaintFeedbackType") {
                Some("not-spam") => return Ok(ignored(id)),
                Some("auth-failure") => Class::Policy,
                _ => Class::Complaint,
            };
            per_entry(field(complaint, "complainedRecipients"), |recipient| {
                Finding::new(class, text(recipient, "emailAddress"), None)
            })
        }
        "DeliveryDelay" => per_entry(field(field(&event, "deliveryDelay"), "delayedRecipients"), |recipient| {
            Finding::new(Class::SoftBounce, text(recipient, "emailAddress"), status(text(recipient, "status")))
        }),
        _ => return Ok(ignored(id)),
    };
    let reference = header_reference(field(field(&event, "mail"), "headers"));
    Ok(numbered(id, reference, findings))
}

/// Resend's event, `{type, created_at, data}`, delivered by Svix; `svix_id` (the `svix-id`
/// header, the same across Svix's retries) is the event id.
pub fn resend(body: &[u8], svix_id: &str) -> Result<Vec<RelayEvent>, Unreadable> {
    let event = json(body, "a Resend body is not JSON")?;
    let kind = text(&event, "type").ok_or(Unreadable("a Resend body is not an event: it has no type"))?;
    let id = Some(svix_id).filter(|id| !id.is_empty());
    let data = field(&event, "data");
    let class = match kind {
        "email.bounced" => resend_bounce(field(data, "bounce")),
        "email.complained" => Class::Complaint,
        // Resend did not send: the address is on its suppression list, which a hard bounce or a
        // complaint put it on.
        "email.suppressed" => Class::HardBounce,
        "email.delivery_delayed" => Class::SoftBounce,
        _ => return Ok(ignored(id)),
    };
    let findings = per_entry(field(data, "to"), |to| Finding::new(class, to.as_str(), None));
    Ok(numbered(id, header_reference(field(data, "headers")), findings))
}

/// Postmark's event: one JSON object per request, told apart by its `RecordType`.
pub fn postmark(body: &[u8]) -> Result<Vec<RelayEvent>, Unreadable> {
    let record = json(body, "a Postmark body is not JSON")?;
    let kind =
        text(&record, "RecordType").ok_or(Unreadable("a Postmark body is not an event: it has no RecordType"))?;
    let id = postmark_id(kind, &record);
    let class = match kind {
        "Bounce" => postmark_bounce(text(&record, "Type")),
        "SpamComplaint" => Class::Complaint,
        "SubscriptionChange" => postmark_subscription_change(&record),
        _ => Class::Ignored,
    };
    if class == Class::Ignored {
        return Ok(ignored(id));
    }
    Ok(vec![RelayEvent {
        id,
        class,
        reference: owned(metadata(field(&record, "Metadata"), POSTMARK_METADATA_KEY)),
        // `Email` in a bounce or a complaint, `Recipient` in a subscription change.
        recipient: owned(text(&record, "Email").or_else(|| text(&record, "Recipient"))),
        status: None,
    }])
}

/// SendGrid's events: a JSON array of them, each with its own `sg_event_id`. An element that is
/// not an event object is one ignored event; an empty array is no event.
pub fn sendgrid(body: &[u8]) -> Result<Vec<RelayEvent>, Unreadable> {
    let batch = json(body, "a SendGrid body is not JSON")?;
    let events = batch.as_array().ok_or(Unreadable("a SendGrid body is not a JSON array of events"))?;
    Ok(events.iter().map(sendgrid_event).collect())
}

/// Mailgun's event: `{signature: {…}, "event-data": {…}}`, whose `event-data.id` is the event id.
pub fn mailgun(body: &[u8]) -> Result<Vec<RelayEvent>, Unreadable> {
    let envelope = json(body, "a Mailgun body is not JSON")?;
    let data = envelope
        .get("event-data")
        .filter(|data| data.is_object())
        .ok_or(Unreadable("a Mailgun body has no event-data object"))?;
    let kind = text(data, "event").ok_or(Unreadable("a Mailgun event-data has no event"))?;
    let id = owned(text(data, "id"));
    let delivery = field(data, "delivery-status");
    // `enhanced-code` where Mailgun gives it; an old event's `code` may itself be one.
    let status = status(text(delivery, "enhanced-code")).or_else(|| status(text(delivery, "code")));
    let class = match kind {
        "failed" => mailgun_failure(data, status.as_deref()),
        "complained" => Class::Complaint,
        _ => Class::Ignored,
    };
    if class == Class::Ignored {
        return Ok(ignored(id));
    }
    Ok(vec![RelayEvent {
        id,
        class,
        reference: owned(metadata(field(data, "user-variables"), METADATA_KEY)),
        recipient: owned(text(data, "recipient")),
        status,
    }])
}

/// What an event says of one recipient, before it is given its id and the reference.
#[derive(Debug)]
struct Finding {
    class: Class,
    recipient: Option<String>,
    status: Option<String>,
}

impl Finding {
    fn new(class: Class, recipient: Option<&str>, status: Option<String>) -> Self {
        Self { class, recipient: owned(recipient), status }
    }
}

/// The events of one request with the id `id`: one per finding, each id followed by `/` and the
/// finding's index when there are several.
fn numbered(id: Option<&str>, reference: Option<String>, findings: Vec<Finding>) -> Vec<RelayEvent> {
    let several = findings.len() > 1;
    findings
        .into_iter()
        .enumerate()
        .map(|(index, finding)| RelayEvent {
            id: id.map(|id| if several { format!("{id}/{index}") } else { id.to_owned() }),
            class: finding.class,
            reference: reference.clone(),
            recipient: finding.recipient,
            status: finding.status,
        })
        .collect()
}

/// The one event of a request that is answered and counted only.
fn ignored(id: Option<impl Into<String>>) -> Vec<RelayEvent> {
    vec![RelayEvent { id: id.map(Into::into), class: Class::Ignored, reference: None, recipient: None, status: None }]
}

/// One finding per entry of `entries` (an array, or a single value standing for one), or one
/// about no recipient when there is none: the event still counts, and its reference may still
/// name the subscriber.
fn per_entry(entries: &Value, finding: impl Fn(&Value) -> Finding) -> Vec<Finding> {
    match entries {
        Value::Array(items) if !items.is_empty() => items.iter().map(finding).collect(),
        Value::Array(_) | Value::Null => vec![finding(&Value::Null)],
        single => vec![finding(single)],
    }
}

fn json(body: &[u8], not_json: &'static str) -> Result<Value, Unreadable> {
    serde_json::from_slice(body).map_err(|_| Unreadable(not_json))
}

/// `value[key]`, or null when `value` is not an object or has no such key, so that a path into
/// a body can be followed without stopping at each step.
fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or(&Value::Null)
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn owned(value: Option<&str>) -> Option<String> {
    value.filter(|value| !value.is_empty()).map(str::to_owned)
}

/// `value` if it is an enhanced status code ([`Class::of_status`] accepts it), trimmed.
fn status(value: Option<&str>) -> Option<String> {
    value.map(str::trim).filter(|value| Class::of_status(value).is_some()).map(str::to_owned)
}

/// Whether an accepted enhanced status code is of class 4 (persistent transient failure).
fn is_transient(status: &str) -> bool {
    status.split('.').next().and_then(|class| class.parse::<u16>().ok()) == Some(4)
}

/// A bounce the relay calls permanent: hard, unless its enhanced code says the receiver refused
/// the sender (5.7.x) or the failure was passing (4.x.x).
fn permanent(status: Option<&str>) -> Class {
    match status {
        Some(status) if Class::of_status(status) == Some(Class::Policy) => Class::Policy,
        Some(status) if is_transient(status) => Class::SoftBounce,
        _ => Class::HardBounce,
    }
}

/// A bounce the relay calls passing, or does not classify: soft, unless its enhanced code says
/// the address is bad or the receiver refused the sender.
fn passing(status: Option<&str>) -> Class {
    match status.and_then(Class::of_status) {
        Some(class @ (Class::HardBounce | Class::Policy)) => class,
        _ => Class::SoftBounce,
    }
}

/// The `X-Signupd-Ref` value among `headers`: a list of `{name, value}` (SES, Resend) or an
/// object of name to value (a string, or a list whose first string counts), the name in any
/// case.
fn header_reference(headers: &Value) -> Option<String> {
    let value = match headers {
        Value::Array(entries) => entries
            .iter()
            .find(|entry| text(entry, "name").is_some_and(|name| name.eq_ignore_ascii_case(reference::HEADER)))
            .and_then(|entry| text(entry, "value")),
        Value::Object(map) => map
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(reference::HEADER))
            .and_then(|(_, value)| value.as_str().or_else(|| value.as_array()?.iter().find_map(Value::as_str))),
        _ => None,
    };
    owned(value)
}

/// The string under `key` in a metadata object: the exact key, else the key in another case (a
/// header name, which the metadata key comes from, is case-insensitive).
fn metadata<'a>(map: &'a Value, key: &str) -> Option<&'a str> {
    text(map, key).or_else(|| {
        map.as_object()?.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).and_then(|(_, value)| value.as_str())
    })
}

/// SES's bounce of `bounce_type`/`sub_type` for one recipient whose enhanced code is `status`.
fn ses_bounce(bounce_type: Option<&str>, sub_type: Option<&str>, status: Option<&str>) -> Class {
    match (bounce_type, sub_type) {
        // SES did not try: the address is on its suppression list, which only a hard bounce (or,
        // for the account's list, a complaint) puts it on; SES leaves these out of the bounce rate.
        (Some("Permanent"), Some("Suppressed" | "OnAccountSuppressionList")) => Class::HardBounce,
        (Some("Permanent"), _) => permanent(status),
        (_, Some("ContentRejected")) => Class::Policy,
        _ => passing(status),
    }
}

/// Resend's `data.bounce`, whose `type` and `subType` are SES's.
fn resend_bounce(bounce: &Value) -> Class {
    let is = |key: &str, word: &str| text(bounce, key).is_some_and(|value| value.eq_ignore_ascii_case(word));
    if is("type", "Permanent") {
        Class::HardBounce
    } else if is("subType", "ContentRejected") {
        Class::Policy
    } else {
        Class::SoftBounce
    }
}

/// A Postmark bounce's `Type` (its list of bounce types, `TypeCode` aside).
fn postmark_bounce(bounce_type: Option<&str>) -> Class {
    match bounce_type {
        Some("HardBounce" | "BadEmailAddress") => Class::HardBounce,
        Some("SoftBounce" | "Transient" | "DnsError") => Class::SoftBounce,
        // A receiving filter refused the mail, or DMARC did: the sender's problem, not the
        // address's.
        Some("Blocked" | "DMARCPolicy" | "SpamNotification") => Class::Policy,
        Some("SpamComplaint") => Class::Complaint,
        _ => Class::Ignored,
    }
}

/// A Postmark `SubscriptionChange`: only a suppression for a hard bounce or a spam complaint
/// says something of the address.
fn postmark_subscription_change(record: &Value) -> Class {
    if record.get("SuppressSending").and_then(Value::as_bool) != Some(true) {
        return Class::Ignored;
    }
    match text(record, "SuppressionReason") {
        Some("HardBounce") => Class::HardBounce,
        Some("SpamComplaint") => Class::Complaint,
        _ => Class::Ignored,
    }
}

/// A bounce's or a complaint's `ID` (a spam complaint is a bounce record at Postmark, so one
/// posted both as a `Bounce` and as a `SpamComplaint` acts once); for a record without one, its
/// type, `MessageID` and time, so that two changes about one message stay apart.
fn postmark_id(kind: &str, record: &Value) -> Option<String> {
    match record.get("ID") {
        Some(Value::Number(id)) => return Some(id.to_string()),
        Some(Value::String(id)) if !id.is_empty() => return Some(id.clone()),
        _ => {}
    }
    let message_id = text(record, "MessageID").filter(|id| !id.is_empty())?;
    let time = ["ChangedAt", "BouncedAt", "DeliveredAt", "ReceivedAt"].into_iter().find_map(|key| text(record, key));
    Some(match time {
        Some(time) => format!("{kind}/{message_id}/{time}"),
        None => format!("{kind}/{message_id}"),
    })
}

fn sendgrid_event(event: &Value) -> RelayEvent {
    let id = owned(text(event, "sg_event_id"));
    let status = status(text(event, "status"));
    let is = |key: &str, word: &str| text(event, key).is_some_and(|value| value.trim().eq_ignore_ascii_case(word));
    let class = match text(event, "event") {
        Some("bounce") if is("type", "blocked") => Class::Policy,
        Some("bounce") => permanent(status.as_deref()),
        Some("deferred") => Class::SoftBounce,
        Some("spamreport") => Class::Complaint,
        // SendGrid did not send, for what it already knows of the address.
        Some("dropped") if is("reason", "Bounced Address") => Class::HardBounce,
        Some("dropped") if is("reason", "Spam Reporting Address") => Class::Complaint,
        _ => Class::Ignored,
    };
    if class == Class::Ignored {
        return RelayEvent { id, class, reference: None, recipient: None, status: None };
    }
    RelayEvent {
        id,
        class,
        reference: owned(text(event, METADATA_KEY)),
        recipient: owned(text(event, "email")),
        status,
    }
}

/// Mailgun's `failed` event, whose `status` is its enhanced code.
fn mailgun_failure(data: &Value, status: Option<&str>) -> Class {
    let code = match field(field(data, "delivery-status"), "code") {
        Value::Number(code) => code.as_u64(),
        Value::String(code) => code.trim().parse().ok(),
        _ => None,
    };
    match (text(data, "reason"), code) {
        // Mailgun did not send, for what it already knows of the address.
        (Some("suppress-bounce"), _) | (_, Some(605)) => Class::HardBounce,
        (Some("suppress-complaint"), _) => Class::Complaint,
        (Some("suppress-unsubscribe"), _) => Class::Ignored,
        _ => match text(data, "severity") {
            Some("permanent") => permanent(status),
            _ => Class::SoftBounce,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REF: &str = "v1.c2VhbGVkLXJlZmVyZW5jZQ";

    fn one(events: Vec<RelayEvent>) -> RelayEvent {
        assert_eq!(events.len(), 1, "{events:?}");
        events.into_iter().next().unwrap()
    }

    fn only_ignored(events: Vec<RelayEvent>, id: Option<&str>) {
        let event = one(events);
        assert_eq!(
            event,
            RelayEvent {
                id: id.map(str::to_owned),
                class: Class::Ignored,
                reference: None,
                recipient: None,
                status: None
            }
        );
    }

    // Amazon SES (notification contents and examples, docs.aws.amazon.com/ses/latest/dg/)

    /// An SES bounce notification as AWS's example shows it, with original headers included.
    fn ses_bounce_notification(bounce_type: &str, sub_type: &str, recipients: &str) -> String {
        format!(
            r#"{{
              "notificationType": "Bounce",
              "bounce": {{
                "bounceType": "{bounce_type}",
                "bounceSubType": "{sub_type}",
                "bouncedRecipients": {recipients},
                "reportingMTA": "dns; email.example.com",
                "timestamp": "2016-01-27T14:59:38.237Z",
                "feedbackId": "00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000",
                "remoteMtaIp": "127.0.2.0"
              }},
              "mail": {{
                "timestamp": "2016-01-27T14:59:38.237Z",
                "source": "news@signup.example",
                "sourceArn": "arn:aws:ses:us-east-1:888888888888:identity/signup.example",
                "sourceIp": "127.0.3.0",
                "sendingAccountId": "123456789012",
                "messageId": "00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000",
                "destination": ["jane@example.com"],
                "headersTruncated": false,
                "headers": [
                  {{"name": "From", "value": "news@signup.example"}},
                  {{"name": "To", "value": "jane@example.com"}},
                  {{"name": "x-signupd-ref", "value": "{REF}"}},
                  {{"name": "Subject", "value": "Please confirm"}}
                ],
                "commonHeaders": {{"from": ["news@signup.example"], "to": ["jane@example.com"],
                                  "subject": "Please confirm"}}
              }}
            }}"#
        )
    }

    #[test]
    fn an_ses_permanent_bounce_is_a_hard_bounce_of_its_recipient_with_the_echoed_reference() {
        let message = ses_bounce_notification(
            "Permanent",
            "General",
            r#"[{"emailAddress": "jane@example.com", "action": "failed", "status": "5.1.1",
                 "diagnosticCode": "smtp; 550 5.1.1 <jane@example.com>... User unknown"}]"#,
        );

        let event = one(ses(&message, "sns-1").unwrap());

        assert_eq!(
            event,
            RelayEvent {
                id: Some("sns-1".into()),
                class: Class::HardBounce,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: Some("5.1.1".into()),
            }
        );
    }

    #[test]
    fn ses_bounce_types_and_statuses_classify_per_recipient() {
        for (bounce_type, sub_type, status, class) in [
            ("Permanent", "General", "5.1.1", Class::HardBounce),
            ("Permanent", "NoEmail", "5.0.0", Class::HardBounce),
            ("Permanent", "General", "5.7.1", Class::Policy),
            ("Permanent", "General", "4.4.7", Class::SoftBounce),
            ("Permanent", "Suppressed", "5.7.1", Class::HardBounce),
            ("Permanent", "OnAccountSuppressionList", "", Class::HardBounce),
            ("Transient", "General", "4.4.1", Class::SoftBounce),
            ("Transient", "MailboxFull", "5.2.2", Class::SoftBounce),
            ("Transient", "General", "5.4.4", Class::HardBounce),
            ("Transient", "General", "5.1.10", Class::HardBounce),
            ("Transient", "General", "5.7.26", Class::Policy),
            ("Transient", "ContentRejected", "5.3.0", Class::Policy),
            ("Transient", "MessageTooLarge", "5.3.4", Class::SoftBounce),
            ("Undetermined", "Undetermined", "", Class::SoftBounce),
        ] {
            let recipients = format!(r#"[{{"emailAddress": "jane@example.com", "status": "{status}"}}]"#);
            let message = ses_bounce_notification(bounce_type, sub_type, &recipients);
            let event = one(ses(&message, "sns-1").unwrap());
            assert_eq!(event.class, class, "{bounce_type}/{sub_type} {status}");
        }
    }

    #[test]
    fn several_recipients_of_one_ses_bounce_are_one_event_each_with_numbered_ids() {
        let message = ses_bounce_notification(
            "Transient",
            "General",
            r#"[{"emailAddress": "jane@example.com", "status": "4.2.2"},
                {"emailAddress": "Mary@Example.com", "status": "5.4.4"},
                {"emailAddress": "richard@example.com", "status": "smtp; 550 richard@example.com unknown"},
                {"emailAddress": "ann@example.com"}]"#,
        );

        let events = ses(&message, "sns-2").unwrap();

        let seen: Vec<_> = events
            .iter()
            .map(|e| (e.id.as_deref(), e.class, e.recipient.as_deref(), e.status.as_deref(), e.reference.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                (Some("sns-2/0"), Class::SoftBounce, Some("jane@example.com"), Some("4.2.2"), Some(REF)),
                (Some("sns-2/1"), Class::HardBounce, Some("Mary@Example.com"), Some("5.4.4"), Some(REF)),
                (Some("sns-2/2"), Class::SoftBounce, Some("richard@example.com"), None, Some(REF)),
                (Some("sns-2/3"), Class::SoftBounce, Some("ann@example.com"), None, Some(REF)),
            ]
        );
    }

    #[test]
    fn an_ses_complaint_is_one_complaint_per_recipient_and_not_spam_is_ignored() {
        let complaint = |feedback: &str| {
            format!(
                r#"{{
                  "notificationType": "Complaint",
                  "complaint": {{
                    "userAgent": "AnyCompany Feedback Loop (V0.01)",
                    "complainedRecipients": [{{"emailAddress": "richard@example.com"}},
                                             {{"emailAddress": "jane@example.com"}}],
                    {feedback}
                    "arrivalDate": "2016-01-27T14:59:38.237Z",
                    "timestamp": "2016-01-27T14:59:38.237Z",
                    "feedbackId": "000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000"
                  }},
                  "mail": {{"messageId": "000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000",
                           "headers": [{{"name": "X-Signupd-Ref", "value": "{REF}"}}]}}
                }}"#
            )
        };

        let events = ses(&complaint(r#""complaintFeedbackType": "abuse","#), "sns-3").unwrap();
        assert_eq!(events.len(), 2);
        assert!(events.iter().all(|e| e.class == Class::Complaint && e.status.is_none()));
        assert!(events.iter().all(|e| e.reference.as_deref() == Some(REF)));
        assert_eq!(events[0].recipient.as_deref(), Some("richard@example.com"));
        assert_eq!(events[1].id.as_deref(), Some("sns-3/1"));

        let without_type = ses(&complaint(""), "sns-4").unwrap();
        assert!(without_type.iter().all(|e| e.class == Class::Complaint), "a complaint without a feedback type");

        only_ignored(ses(&complaint(r#""complaintFeedbackType": "not-spam","#), "sns-5").unwrap(), Some("sns-5"));

        let auth = ses(&complaint(r#""complaintFeedbackType": "auth-failure","#), "sns-6").unwrap();
        assert!(auth.iter().all(|e| e.class == Class::Policy), "an authentication report is no person's complaint");
    }

    #[test]
    fn a_published_ses_event_is_read_like_a_notification() {
        let message = format!(
            r#"{{"eventType": "Bounce",
                "bounce": {{"bounceType": "Permanent", "bounceSubType": "General",
                           "bouncedRecipients": [{{"emailAddress": "jane@example.com", "status": "5.1.1"}}]}},
                "mail": {{"headers": [{{"name": "X-SIGNUPD-REF", "value": "{REF}"}}],
                         "tags": {{"ses:configuration-set": ["signupd"]}}}}}}"#
        );

        let event = one(ses(&message, "sns-7").unwrap());

        assert_eq!((event.class, event.reference.as_deref()), (Class::HardBounce, Some(REF)));
    }

    #[test]
    fn an_ses_delivery_delay_is_a_soft_bounce_per_delayed_recipient() {
        let message = r#"{"eventType": "DeliveryDelay",
            "deliveryDelay": {"delayType": "MailboxFull", "expirationTime": "2020-06-17T00:15:00.000Z",
                              "delayedRecipients": [{"emailAddress": "jane@example.com", "status": "4.2.2",
                                                     "diagnosticCode": "smtp; 452 4.2.2 Mailbox full"}]},
            "mail": {"messageId": "m"}}"#;

        let event = one(ses(message, "sns-8").unwrap());

        assert_eq!(event.class, Class::SoftBounce);
        assert_eq!(event.recipient.as_deref(), Some("jane@example.com"));
        assert_eq!(event.status.as_deref(), Some("4.2.2"));
        assert_eq!(event.reference, None, "no original headers, no reference");
    }

    #[test]
    fn deliveries_and_unknown_ses_types_are_one_ignored_event() {
        for message in [
            r#"{"notificationType": "Delivery", "delivery": {"recipients": ["jane@example.com"]}, "mail": {}}"#,
            r#"{"eventType": "Open", "open": {}, "mail": {}}"#,
            r#"{"notificationType": "AmazonSnsSubscriptionSucceeded", "message": "You have successfully subscribed"}"#,
            r#"{"notificationType": "SomethingNew", "somethingNew": {"to": [{"emailAddress": "jane@example.com"}]}}"#,
        ] {
            only_ignored(ses(message, "sns-9").unwrap(), Some("sns-9"));
        }
    }

    #[test]
    fn a_bounce_without_recipients_or_with_odd_fields_still_counts() {
        let message = r#"{"notificationType": "Bounce",
            "bounce": {"bounceType": "Permanent", "bouncedRecipients": "not a list of objects"},
            "mail": {"headers": {"unexpected": true}}}"#;
        let event = one(ses(message, "sns-10").unwrap());
        assert_eq!(
            (event.class, event.recipient, event.status, event.reference),
            (Class::HardBounce, None, None, None)
        );

        let bare = one(ses(r#"{"notificationType": "Bounce"}"#, "sns-11").unwrap());
        assert_eq!((bare.class, bare.id.as_deref()), (Class::SoftBounce, Some("sns-11")));
    }

    #[test]
    fn an_ses_message_that_is_not_an_ses_event_is_unreadable() {
        for message in [
            "",
            "not json",
            r#"{"notificationType": "Bounce""#,
            r#"[{"notificationType": "Bounce"}]"#,
            r#""Bounce""#,
            r#"{"Type": "Notification", "Message": "{}"}"#,
            r#"{"notificationType": 5}"#,
        ] {
            assert!(ses(message, "sns").is_err(), "{message}");
        }
    }

    // Resend (resend.com/docs/webhooks/emails/bounced, django-anymail's Resend tests)

    fn resend_event(kind: &str, data_extra: &str) -> Vec<u8> {
        format!(
            r#"{{
              "type": "{kind}",
              "created_at": "2024-11-22T23:41:12.126Z",
              "data": {{
                "broadcast_id": "8b146471-e88e-4322-86af-016cd36fd216",
                "created_at": "2024-11-22T23:41:11.894719+00:00",
                "email_id": "56761188-7520-42d8-8898-ff6fc54ce618",
                "from": "Acme <onboarding@resend.dev>",
                "subject": "Sending this example",
                "tags": {{"category": "confirm_email"}},
                {data_extra}
              }}
            }}"#
        )
        .into_bytes()
    }

    #[test]
    fn a_resend_permanent_bounce_is_a_hard_bounce_with_the_reference_from_its_headers() {
        let body = resend_event(
            "email.bounced",
            &format!(
                r#""to": ["jane@example.com"],
                   "headers": [{{"name": "Reply-To", "value": "help@signup.example"}},
                               {{"name": "X-Signupd-Ref", "value": "{REF}"}}],
                   "bounce": {{"message": "The recipient's email address is on the suppression list.",
                               "subType": "Suppressed", "type": "Permanent"}}"#
            ),
        );

        let event = one(resend(&body, "msg_2W2D3qXLS5fOaPja1GDg7rF2CwB").unwrap());

        assert_eq!(
            event,
            RelayEvent {
                id: Some("msg_2W2D3qXLS5fOaPja1GDg7rF2CwB".into()),
                class: Class::HardBounce,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: None,
            }
        );
    }

    #[test]
    fn resend_headers_as_an_object_give_the_reference_in_any_case() {
        for headers in [
            format!(r#"{{"x-signupd-ref": "{REF}", "Reply-To": "help@signup.example"}}"#),
            format!(r#"{{"X-SIGNUPD-REF": ["{REF}"]}}"#),
        ] {
            let body =
                resend_event("email.complained", &format!(r#""to": ["jane@example.com"], "headers": {headers}"#));
            let event = one(resend(&body, "msg_1").unwrap());
            assert_eq!((event.class, event.reference.as_deref()), (Class::Complaint, Some(REF)), "{headers}");
        }
    }

    #[test]
    fn resend_event_types_classify_as_the_contract_says() {
        for (kind, bounce, class) in [
            ("email.bounced", r#"{"type": "permanent", "subType": "General"}"#, Class::HardBounce),
            ("email.bounced", r#"{"type": "Transient", "subType": "MailboxFull"}"#, Class::SoftBounce),
            ("email.bounced", r#"{"type": "Transient", "subType": "ContentRejected"}"#, Class::Policy),
            ("email.bounced", r#"{"type": "Undetermined"}"#, Class::SoftBounce),
            (
                "email.bounced",
                r#"{"message": "The recipient's email provider sent a hard bounce message"}"#,
                Class::SoftBounce,
            ),
            ("email.bounced", "null", Class::SoftBounce),
            ("email.complained", "null", Class::Complaint),
            ("email.suppressed", "null", Class::HardBounce),
            ("email.delivery_delayed", "null", Class::SoftBounce),
        ] {
            let body = resend_event(kind, &format!(r#""to": ["jane@example.com"], "bounce": {bounce}"#));
            let event = one(resend(&body, "msg_1").unwrap());
            assert_eq!(event.class, class, "{kind} {bounce}");
            assert_eq!(event.recipient.as_deref(), Some("jane@example.com"), "{kind} {bounce}");
            assert_eq!(event.reference, None, "no headers, no reference");
        }
    }

    #[test]
    fn several_resend_recipients_are_one_event_each_with_numbered_ids() {
        let body = resend_event(
            "email.bounced",
            r#""to": ["Jane <jane@example.com>", "mary@example.com"], "bounce": {"type": "Permanent"}"#,
        );

        let events = resend(&body, "msg_3").unwrap();

        let seen: Vec<_> = events.iter().map(|e| (e.id.as_deref(), e.recipient.as_deref())).collect();
        assert_eq!(
            seen,
            [(Some("msg_3/0"), Some("Jane <jane@example.com>")), (Some("msg_3/1"), Some("mary@example.com"))]
        );
        assert!(events.iter().all(|e| e.class == Class::HardBounce));
    }

    #[test]
    fn resend_deliveries_opens_and_unknown_types_are_one_ignored_event() {
        for kind in
            ["email.sent", "email.delivered", "email.opened", "email.clicked", "contact.created", "email.new_thing"]
        {
            let body = resend_event(kind, r#""to": ["jane@example.com", "mary@example.com"]"#);
            only_ignored(resend(&body, "msg_4").unwrap(), Some("msg_4"));
        }
    }

    #[test]
    fn a_resend_body_that_is_not_an_event_is_unreadable() {
        for body in [
            "",
            "{",
            "[]",
            r#"[{"type": "email.bounced"}]"#,
            r#"{"data": {"to": ["jane@example.com"]}}"#,
            r#"{"type": null}"#,
        ] {
            assert!(resend(body.as_bytes(), "msg").is_err(), "{body}");
        }
    }

    // Postmark (postmarkapp.com/developer/webhooks/bounce-webhook, spam-complaint-webhook,
    // subscription-change-webhook)

    fn postmark_bounce_record(bounce_type: &str) -> Vec<u8> {
        format!(
            r#"{{
              "RecordType": "Bounce",
              "MessageStream": "outbound",
              "ID": 4323372036854775807,
              "Type": "{bounce_type}",
              "TypeCode": 1,
              "Name": "Hard bounce",
              "Tag": "Test",
              "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
              "Metadata": {{"signupd-ref": "{REF}", "other": "x"}},
              "ServerID": 23,
              "Description": "The server was unable to deliver your message (ex: unknown user, mailbox not found).",
              "Details": "smtp;550 5.1.1 The email account that you tried to reach does not exist",
              "Email": "jane@example.com",
              "From": "news@signup.example",
              "BouncedAt": "2019-11-05T16:33:54.9070259Z",
              "DumpAvailable": true,
              "Inactive": true,
              "CanActivate": true,
              "Subject": "Please confirm"
            }}"#
        )
        .into_bytes()
    }

    #[test]
    fn a_postmark_hard_bounce_names_its_id_recipient_and_metadata_reference() {
        let event = one(postmark(&postmark_bounce_record("HardBounce")).unwrap());

        assert_eq!(
            event,
            RelayEvent {
                id: Some("4323372036854775807".into()),
                class: Class::HardBounce,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: None,
            }
        );
    }

    #[test]
    fn postmark_bounce_types_classify_as_the_contract_says() {
        for (bounce_type, class) in [
            ("HardBounce", Class::HardBounce),
            ("BadEmailAddress", Class::HardBounce),
            ("SoftBounce", Class::SoftBounce),
            ("Transient", Class::SoftBounce),
            ("DnsError", Class::SoftBounce),
            ("Blocked", Class::Policy),
            ("DMARCPolicy", Class::Policy),
            ("SpamNotification", Class::Policy),
            ("SpamComplaint", Class::Complaint),
            ("AutoResponder", Class::Ignored),
            ("Unsubscribe", Class::Ignored),
            ("ManuallyDeactivated", Class::Ignored),
            ("VirusNotification", Class::Ignored),
            ("Unknown", Class::Ignored),
            ("SomethingNew", Class::Ignored),
        ] {
            let event = one(postmark(&postmark_bounce_record(bounce_type)).unwrap());
            assert_eq!(event.class, class, "{bounce_type}");
            if class == Class::Ignored {
                assert_eq!(event.recipient, None, "{bounce_type}: an ignored event carries its id alone");
            }
        }
    }

    #[test]
    fn a_postmark_spam_complaint_is_a_complaint() {
        let body = format!(
            r#"{{"RecordType": "SpamComplaint", "MessageStream": "outbound", "ID": 42, "Type": "SpamComplaint",
                "TypeCode": 100001, "Name": "Spam complaint", "Tag": "Test",
                "MessageID": "00000000-0000-0000-0000-000000000000", "Metadata": {{"Signupd-Ref": "{REF}"}},
                "ServerID": 1234, "Description": "", "Details": "Test spam complaint details",
                "Email": "jane@example.com", "From": "news@signup.example", "BouncedAt": "2019-11-05T16:33:54.9070259Z",
                "DumpAvailable": true, "Inactive": true, "CanActivate": false, "Subject": "Please confirm"}}"#
        );

        let event = one(postmark(body.as_bytes()).unwrap());

        assert_eq!(
            (event.id.as_deref(), event.class, event.recipient.as_deref(), event.reference.as_deref()),
            (Some("42"), Class::Complaint, Some("jane@example.com"), Some(REF))
        );
    }

    #[test]
    fn a_postmark_subscription_change_counts_only_when_it_suppresses_for_a_bounce_or_a_complaint() {
        let change = |suppress: bool, reason: &str| {
            format!(
                r#"{{"RecordType": "SubscriptionChange", "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
                    "ServerID": 123456, "MessageStream": "outbound", "ChangedAt": "2020-02-01T10:53:34.416071Z",
                    "Recipient": "jane@example.com", "Origin": "Recipient", "SuppressSending": {suppress},
                    "SuppressionReason": {reason}, "Tag": "my-tag", "Metadata": {{"signupd-ref": "{REF}"}}}}"#
            )
            .into_bytes()
        };
        let id = "SubscriptionChange/883953f4-6105-42a2-a16a-77a8eac79483/2020-02-01T10:53:34.416071Z";

        let bounce = one(postmark(&change(true, r#""HardBounce""#)).unwrap());
        assert_eq!(
            bounce,
            RelayEvent {
                id: Some(id.into()),
                class: Class::HardBounce,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: None,
            }
        );
        assert_eq!(one(postmark(&change(true, r#""SpamComplaint""#)).unwrap()).class, Class::Complaint);
        only_ignored(postmark(&change(true, r#""ManualSuppression""#)).unwrap(), Some(id));
        only_ignored(postmark(&change(false, "null")).unwrap(), Some(id));
    }

    #[test]
    fn postmark_deliveries_opens_and_unknown_records_are_one_ignored_event() {
        let delivery = br#"{"RecordType": "Delivery", "ServerID": 23, "MessageStream": "outbound",
            "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483", "Recipient": "jane@example.com", "Tag": "welcome",
            "DeliveredAt": "2019-11-05T16:33:54.9070259Z", "Details": "Test delivery webhook details",
            "Metadata": {"signupd-ref": "v1.x"}}"#;
        only_ignored(
            postmark(delivery).unwrap(),
            Some("Delivery/883953f4-6105-42a2-a16a-77a8eac79483/2019-11-05T16:33:54.9070259Z"),
        );
        only_ignored(postmark(br#"{"RecordType": "Open", "Recipient": "jane@example.com"}"#).unwrap(), None);
        only_ignored(postmark(br#"{"RecordType": "NewKind", "ID": "7"}"#).unwrap(), Some("7"));
    }

    #[test]
    fn a_postmark_body_that_is_not_a_record_is_unreadable() {
        for body in
            ["", "nope", r#"[{"RecordType": "Bounce"}]"#, r#"{"FromFull": {"Email": "jane@example.com"}}"#, "42"]
        {
            assert!(postmark(body.as_bytes()).is_err(), "{body}");
        }
    }

    // SendGrid (twilio.com/docs/sendgrid/for-developers/tracking-events/event)

    #[test]
    fn a_sendgrid_batch_is_one_event_per_element_with_its_own_id() {
        let body = format!(
            r#"[
              {{"email": "jane@example.com", "timestamp": 1513299569, "smtp-id": "<14c5d75ce93.dfd.64b469@ismtpd-555>",
                "event": "processed", "category": "cat facts", "sg_event_id": "rbtnWrG1DVDGGGFHFyun0A==",
                "sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000",
                "signupd_ref": "{REF}"}},
              {{"email": "jane@example.com", "timestamp": 1513299569, "event": "deferred", "sg_event_id": "deferred-1",
                "response": "400 try again later", "attempt": "5", "signupd_ref": "{REF}"}},
              {{"email": "jane@example.com", "timestamp": 1513299569, "event": "delivered",
                "sg_event_id": "delivered-1",
                "response": "250 OK"}},
              {{"email": "mary@example.com", "timestamp": 1513299569, "event": "bounce", "sg_event_id": "bounce-1",
                "reason": "500 unknown recipient", "status": "5.0.0", "type": "bounce",
                "bounce_classification": "Invalid Address", "signupd_ref": "{REF}"}},
              {{"email": "ann@example.com", "timestamp": 1513299569, "event": "bounce", "sg_event_id": "blocked-1",
                "reason": "550 5.7.1 blocked by policy", "status": "5.7.1", "type": "blocked"}},
              {{"email": "bob@example.com", "timestamp": 1513299569, "event": "dropped", "sg_event_id": "dropped-1",
                "reason": "Bounced Address", "status": "5.0.0"}},
              {{"email": "cy@example.com", "timestamp": 1513299569, "event": "dropped", "sg_event_id": "dropped-2",
                "reason": "Spam Reporting Address", "status": "5.0.0"}},
              {{"email": "dee@example.com", "timestamp": 1513299569, "event": "dropped", "sg_event_id": "dropped-3",
                "reason": "Unsubscribed Address", "status": "5.0.0"}},
              {{"email": "eve@example.com", "timestamp": 1513299569, "event": "spamreport", "sg_event_id": "spam-1",
                "signupd_ref": "{REF}"}},
              {{"email": "jane@example.com", "timestamp": 1513299569, "event": "open", "sg_event_id": "open-1"}},
              {{"email": "jane@example.com", "timestamp": 1513299569, "event": "group_unsubscribe",
                "sg_event_id": "unsub-1"}}
            ]"#
        );

        let events = sendgrid(body.as_bytes()).unwrap();

        let seen: Vec<_> = events
            .iter()
            .map(|e| {
                (e.id.as_deref().unwrap(), e.class, e.recipient.as_deref(), e.status.as_deref(), e.reference.as_deref())
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("rbtnWrG1DVDGGGFHFyun0A==", Class::Ignored, None, None, None),
                ("deferred-1", Class::SoftBounce, Some("jane@example.com"), None, Some(REF)),
                ("delivered-1", Class::Ignored, None, None, None),
                ("bounce-1", Class::HardBounce, Some("mary@example.com"), Some("5.0.0"), Some(REF)),
                ("blocked-1", Class::Policy, Some("ann@example.com"), Some("5.7.1"), None),
                ("dropped-1", Class::HardBounce, Some("bob@example.com"), Some("5.0.0"), None),
                ("dropped-2", Class::Complaint, Some("cy@example.com"), Some("5.0.0"), None),
                ("dropped-3", Class::Ignored, None, None, None),
                ("spam-1", Class::Complaint, Some("eve@example.com"), None, Some(REF)),
                ("open-1", Class::Ignored, None, None, None),
                ("unsub-1", Class::Ignored, None, None, None),
            ]
        );
    }

    #[test]
    fn a_sendgrid_bounce_is_refined_by_its_enhanced_status_code() {
        for (bounce_type, status, class, kept) in [
            (r#""bounce""#, r#""5.1.1""#, Class::HardBounce, Some("5.1.1")),
            (r#""bounce""#, r#""5.0.0""#, Class::HardBounce, Some("5.0.0")),
            (r#""bounce""#, r#""5.2.2""#, Class::HardBounce, Some("5.2.2")),
            (r#""bounce""#, r#""5.7.1""#, Class::Policy, Some("5.7.1")),
            (r#""bounce""#, r#""4.4.7""#, Class::SoftBounce, Some("4.4.7")),
            (r#""bounce""#, r#""550 5.1.1 jane@example.com unknown""#, Class::HardBounce, None),
            ("null", r#""5.7.26""#, Class::Policy, Some("5.7.26")),
            ("null", "null", Class::HardBounce, None),
            (r#""blocked""#, r#""5.1.1""#, Class::Policy, Some("5.1.1")),
        ] {
            let body = format!(
                r#"[{{"email": "jane@example.com", "event": "bounce", "type": {bounce_type}, "status": {status},
                     "sg_event_id": "b"}}]"#
            );
            let event = one(sendgrid(body.as_bytes()).unwrap());
            assert_eq!((event.class, event.status.as_deref()), (class, kept), "type {bounce_type}, status {status}");
        }
    }

    #[test]
    fn an_empty_sendgrid_batch_is_no_event_and_an_odd_element_is_ignored() {
        assert!(sendgrid(b"[]").unwrap().is_empty());

        let events =
            sendgrid(br#"[42, {"email": "jane@example.com"}, {"event": "spamreport", "email": "jane@example.com"}]"#)
                .unwrap();

        let classes: Vec<_> = events.iter().map(|e| (e.class, e.id.clone())).collect();
        assert_eq!(classes, [(Class::Ignored, None), (Class::Ignored, None), (Class::Complaint, None)]);
    }

    #[test]
    fn a_sendgrid_body_that_is_not_an_array_is_unreadable() {
        for body in ["", "[", r#"{"event": "bounce", "email": "jane@example.com"}"#, r#""bounce""#] {
            assert!(sendgrid(body.as_bytes()).is_err(), "{body}");
        }
    }

    // Mailgun (documentation.mailgun.com, webhooks: the sample failed and complained payloads)

    fn mailgun_event(event_data: &str) -> Vec<u8> {
        format!(
            r#"{{
              "signature": {{"timestamp": "1529006854", "token": "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0",
                             "signature": "d2271d12299f6592d9d44cd9d250f0704e4674c30d79d07c47a66f95ce71cf55"}},
              "event-data": {event_data}
            }}"#
        )
        .into_bytes()
    }

    fn mailgun_failure_data(severity: &str, reason: &str, delivery_status: &str) -> String {
        format!(
            r#"{{
              "event": "failed", "id": "G9Bn5sl1TC6nu79C8C0bwg", "timestamp": 1521233195.375624,
              "log-level": "error", "severity": "{severity}", "reason": "{reason}",
              "envelope": {{"sender": "news@signup.example", "transport": "smtp", "targets": "jane@example.com"}},
              "flags": {{"is-routed": false, "is-authenticated": true, "is-system-test": false, "is-test-mode": false}},
              "delivery-status": {delivery_status},
              "message": {{"headers": {{"to": "jane@example.com",
                                       "message-id": "20130503182626.18666.16540@signup.example",
                                       "from": "news@signup.example", "subject": "Please confirm"}},
                          "attachments": [], "size": 111}},
              "recipient": "jane@example.com", "recipient-domain": "example.com",
              "campaigns": [], "tags": ["confirmation"],
              "user-variables": {{"signupd_ref": "{REF}", "other": "x"}}
            }}"#
        )
    }

    #[test]
    fn a_mailgun_permanent_failure_is_a_hard_bounce_with_its_enhanced_code_and_user_variable() {
        let data = mailgun_failure_data(
            "permanent",
            "bounce",
            r#"{"tls": true, "mx-host": "mx.example.com", "code": 550, "enhanced-code": "5.1.1",
                "message": "5.1.1 The email account that you tried to reach does not exist", "attempt-no": 1,
                "description": "", "session-seconds": 0.4}"#,
        );

        let event = one(mailgun(&mailgun_event(&data)).unwrap());

        assert_eq!(
            event,
            RelayEvent {
                id: Some("G9Bn5sl1TC6nu79C8C0bwg".into()),
                class: Class::HardBounce,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: Some("5.1.1".into()),
            }
        );
    }

    #[test]
    fn mailgun_failures_classify_by_reason_severity_and_code() {
        for (severity, reason, delivery_status, class) in [
            (
                "permanent",
                "suppress-bounce",
                r#"{"code": 605, "description": "Not delivering to previously bounced address"}"#,
                Class::HardBounce,
            ),
            ("permanent", "generic", r#"{"code": "605"}"#, Class::HardBounce),
            (
                "permanent",
                "suppress-complaint",
                r#"{"code": 607, "description": "Not delivering to a user who marked your messages as spam"}"#,
                Class::Complaint,
            ),
            (
                "permanent",
                "suppress-unsubscribe",
                r#"{"code": 606, "description": "Not delivering to unsubscribed address"}"#,
                Class::Ignored,
            ),
            ("permanent", "bounce", r#"{"code": 550, "message": "no such user"}"#, Class::HardBounce),
            ("permanent", "bounce", r#"{"code": 550, "enhanced-code": "5.7.1"}"#, Class::Policy),
            ("permanent", "old", r#"{"code": 421, "enhanced-code": "4.4.7"}"#, Class::SoftBounce),
            ("permanent", "bounce", r#"{"code": "5.7.26"}"#, Class::Policy),
            (
                "temporary",
                "generic",
                r#"{"code": 452, "message": "4.2.2 over quota", "enhanced-code": "4.2.2"}"#,
                Class::SoftBounce,
            ),
            ("temporary", "espblock", r#"{"code": 421}"#, Class::SoftBounce),
            ("temporary", "generic", r#"{"code": 550, "enhanced-code": "5.1.1"}"#, Class::SoftBounce),
            ("", "", "null", Class::SoftBounce),
        ] {
            let data = mailgun_failure_data(severity, reason, delivery_status);
            let event = one(mailgun(&mailgun_event(&data)).unwrap());
            assert_eq!(event.class, class, "{severity} {reason} {delivery_status}");
            assert_eq!(event.id.as_deref(), Some("G9Bn5sl1TC6nu79C8C0bwg"), "{severity} {reason}");
        }
    }

    #[test]
    fn a_mailgun_complaint_is_a_complaint_and_other_events_are_ignored() {
        let complained = format!(
            r#"{{"id": "-Agny091SquKnsrW2NEKUA", "timestamp": 1521233123.501324, "log-level": "warn",
                "event": "complained", "envelope": {{"sending-ip": "173.193.210.33"}},
                "flags": {{"is-test-mode": false}},
                "message": {{"headers": {{"to": "jane@example.com",
                                         "message-id": "20130718032413.263EE2E0926@signup.example",
                                         "from": "news@signup.example", "subject": "Please confirm"}},
                            "attachments": [], "size": 111}},
                "recipient": "jane@example.com", "tags": [], "campaigns": [],
                "user-variables": {{"signupd_ref": "{REF}"}}}}"#
        );

        let event = one(mailgun(&mailgun_event(&complained)).unwrap());

        assert_eq!(
            event,
            RelayEvent {
                id: Some("-Agny091SquKnsrW2NEKUA".into()),
                class: Class::Complaint,
                reference: Some(REF.into()),
                recipient: Some("jane@example.com".into()),
                status: None,
            }
        );
        for kind in ["delivered", "opened", "clicked", "unsubscribed", "accepted", "rejected", "brand-new"] {
            let data = format!(r#"{{"event": "{kind}", "id": "e-1", "recipient": "jane@example.com"}}"#);
            only_ignored(mailgun(&mailgun_event(&data)).unwrap(), Some("e-1"));
        }
    }

    #[test]
    fn a_mailgun_body_without_an_event_data_object_is_unreadable() {
        for body in [
            "".to_owned(),
            "{\"event-data\":".to_owned(),
            r#"[{"event-data": {"event": "failed"}}]"#.to_owned(),
            r#"{"signature": {}, "event": "failed", "recipient": "jane@example.com"}"#.to_owned(),
            r#"{"event-data": "failed"}"#.to_owned(),
            r#"{"event-data": {"recipient": "jane@example.com"}}"#.to_owned(),
        ] {
            assert!(mailgun(body.as_bytes()).is_err(), "{body}");
        }
    }

    // What the caller may log

    #[test]
    fn no_unreadable_says_anything_of_the_body() {
        let secret = "jane.secret@example.com";
        let bodies = [
            secret.to_owned(),
            format!(r#"{{"to": "{secret}""#),
            format!(r#"["{secret}"]"#),
            format!(
                r#"{{"type": 7, "RecordType": ["{secret}"], "notificationType": null, "data": {{"to": ["{secret}"]}}}}"#
            ),
            format!(r#"{{"event-data": {{"recipient": "{secret}"}}}}"#),
            format!("{{\"{secret}\": \u{ff}"),
        ];
        for body in &bodies {
            let refusals = [
                ses(body, secret).err(),
                resend(body.as_bytes(), secret).err(),
                postmark(body.as_bytes()).err(),
                sendgrid(body.as_bytes()).err(),
                mailgun(body.as_bytes()).err(),
            ];
            for refusal in refusals.into_iter().flatten() {
                let words = format!("{refusal} {refusal:?}");
                assert!(!words.contains("jane") && !words.contains("example"), "{words}");
            }
        }
        assert!(sendgrid(bodies[0].as_bytes()).is_err() && postmark(bodies[3].as_bytes()).is_err());
    }

    proptest::proptest! {
        /// Whatever a relay puts where a status belongs, an event's status is an enhanced code or
        /// nothing.
        #[test]
        fn an_event_status_is_always_one_class_of_status_accepts(status in "\\PC{0,24}", code in "[0-9.]{0,8}") {
            for candidate in [status, code] {
                let quoted = serde_json::to_string(&candidate).unwrap();
                let ses_message = format!(
                    r#"{{"notificationType": "Bounce", "bounce": {{"bounceType": "Permanent",
                        "bouncedRecipients": [{{"emailAddress": "jane@example.com", "status": {quoted}}}]}}}}"#
                );
                let sendgrid_body =
                    format!(r#"[{{"event": "bounce", "email": "jane@example.com", "status": {quoted}}}]"#);
                let mailgun_body = format!(
                    r#"{{"event-data": {{"event": "failed", "severity": "permanent",
                        "delivery-status": {{"code": {quoted}, "enhanced-code": {quoted}}}}}}}"#
                );
                let events = [
                    ses(&ses_message, "id").unwrap(),
                    sendgrid(sendgrid_body.as_bytes()).unwrap(),
                    mailgun(mailgun_body.as_bytes()).unwrap(),
                ];
                for event in events.iter().flatten() {
                    if let Some(status) = &event.status {
                        proptest::prop_assert!(Class::of_status(status).is_some(), "{status:?}");
                        proptest::prop_assert_ne!(event.class, Class::Ignored);
                    }
                }
            }
        }

        /// No body, however broken, panics a reader.
        #[test]
        fn any_bytes_are_read_or_refused(body in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let text = String::from_utf8_lossy(&body);
            let _ = ses(&text, "id");
            let _ = resend(&body, "id");
            let _ = postmark(&body);
            let _ = sendgrid(&body);
            let _ = mailgun(&body);
        }
    }
}
