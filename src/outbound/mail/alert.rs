//! Telling the operator that a confirmation could never be delivered, that a welcome mail's
//! recipient was refused, or that a webhook event or a destination's was dropped
//! (`docs/operations.md`): an error-level log line, and a JSON POST to `mail.alert_webhook` if
//! set — with the list, the SMTP code and the recipient's domain, or the endpoint and event
//! type; never the address.

use serde::Serialize;

use crate::config::Config;
use crate::domain::EmailAddress;

/// What a mail's [`Alert`] tells: its `event` in the POST, and the sentence of its log line.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MailEvent {
    /// A confirmation given up for good; its pending row, which never got a link, is gone.
    ConfirmationUndeliverable,
    /// The relay refused a welcome mail's recipient though it took others; the subscriber
    /// stays confirmed (only a verified bounce acts on a confirmed address), the mail retries.
    WelcomeRefused,
}

impl MailEvent {
    fn sentence(self) -> &'static str {
        match self {
            Self::ConfirmationUndeliverable => {
                "a confirmation mail could not be delivered; the pending signup was removed"
            }
            Self::WelcomeRefused => {
                "the relay refused a welcome mail's recipient; the subscriber stays confirmed and the mail is retried"
            }
        }
    }
}

/// A mail the operator must hear of, without its address: [`Alert::new`] keeps the domain alone.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Alert {
    pub event: MailEvent,
    pub list: String,
    /// `null` when the server never answered (connection failures until the window ended).
    pub smtp_code: Option<u16>,
    pub recipient_domain: String,
    pub detail: String,
}

impl Alert {
    /// `recipient` is the stored address; only [`recipient_domain`] of it is kept.
    pub fn new(event: MailEvent, list: &str, smtp_code: Option<u16>, recipient: &str, detail: &str) -> Self {
        Self {
            event,
            list: list.to_owned(),
            smtp_code,
            recipient_domain: recipient_domain(recipient),
            detail: detail.to_owned(),
        }
    }
}

/// The domain of a stored address, the one part of it an alert or a log line may name, as
/// [`EmailAddress::domain`] reads it (every stored address is one [`EmailAddress::parse`] gave;
/// empty if one ever no longer parses).
pub fn recipient_domain(address: &str) -> String {
    EmailAddress::parse(address).map(|address| address.domain().to_owned()).unwrap_or_default()
}

/// Logs `alert` at error level with its event's sentence, and posts it.
pub async fn send(config: &Config, client: &reqwest::Client, alert: &Alert) {
    tracing::error!(
        list = %alert.list,
        smtp_code = alert.smtp_code,
        recipient_domain = %alert.recipient_domain,
        detail = %alert.detail,
        "{}",
        alert.event.sentence()
    );
    post(config, client, alert).await;
}

/// A webhook event given up after `mail.webhook_max_age`: which endpoint and which kind of
/// event, never the address.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct WebhookDropped<'a> {
    pub event: &'static str,
    pub endpoint: &'a str,
    pub event_type: &'a str,
    pub detail: &'a str,
}

pub async fn webhook_dropped(
    config: &Config,
    client: &reqwest::Client,
    endpoint: &str,
    event_type: &str,
    detail: &str,
) {
    tracing::error!(
        endpoint,
        event_type,
        detail,
        "a webhook event could not be delivered within webhook_max_age; dropped"
    );
    post(config, client, &WebhookDropped { event: "webhook_dropped", endpoint, event_type, detail }).await;
}

/// A subscriber event a destination refused for good, or could not take within
/// `mail.webhook_max_age` (`crate::outbound::destinations`): which destination, which kind of event, the
/// status (and the vendor's code word) and what to do; never the address or the credential.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DestinationDropped<'a> {
    pub event: &'static str,
    pub destination: &'a str,
    pub event_type: &'a str,
    pub detail: &'a str,
    /// `true`: refused for good (a 4xx that will not change); `false`: out of time.
    pub refused: bool,
    pub hint: &'a str,
}

pub async fn destination_dropped(config: &Config, client: &reqwest::Client, dropped: &DestinationDropped<'_>) {
    let why = if dropped.refused { "the destination refused it" } else { "not accepted within webhook_max_age" };
    tracing::error!(
        destination = dropped.destination,
        event_type = dropped.event_type,
        detail = dropped.detail,
        hint = dropped.hint,
        "a subscriber event could not be handed to the destination ({why}); dropped"
    );
    post(config, client, dropped).await;
}

/// A list's accepted signups passed `signup.surge_alert` (`crate::door::signup`): the list, how many
/// signups its window has counted, and the window. Never an address or an IP.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SignupSurge {
    pub alert: &'static str,
    pub list: String,
    pub count: i64,
    /// As configured, e.g. `10m`.
    pub window: String,
}

/// A receiver refused signupd's mail for its policy (an enhanced status 5.7.x, a relay's
/// "blocked"): reputation or authentication trouble, not a bad address. Which relay, the list
/// the mail was for (`""` when unknown) and the status code; at most once an hour per relay.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RelayPolicyRefusal {
    pub alert: &'static str,
    pub relay: String,
    pub list: String,
    pub status: String,
}

/// A list's confirmation mail drew `signup.complaint_breaker` complaints within an hour: the
/// list is in surge mode for at least an hour.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ComplaintBreaker {
    pub alert: &'static str,
    pub list: String,
    pub complaints: i64,
    pub window: String,
}

/// The relay refuses signupd itself, or cannot be reached (`super::relay_hold`): where in the
/// conversation, the SMTP code if it answered, and the cause in words; never an address. Once
/// per episode, however many mails and workers met it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RelayRefused<'a> {
    pub event: &'static str,
    pub stage: &'static str,
    pub smtp_code: Option<u16>,
    pub detail: &'a str,
}

pub async fn relay_refused(config: &Config, client: &reqwest::Client, error: &super::SendError) {
    let stage = error.stage.map_or("connect", super::failure::Stage::as_str);
    tracing::error!(
        stage,
        smtp_code = error.code,
        detail = %error.detail,
        "the relay refuses signupd's mail; every mail waits in the queue until it accepts again"
    );
    post(config, client, &RelayRefused { event: "relay_refused", stage, smtp_code: error.code, detail: &error.detail })
        .await;
}

/// POSTs `alert` as JSON to `mail.alert_webhook`, if set.
pub async fn post(config: &Config, client: &reqwest::Client, alert: &impl Serialize) {
    let Some(webhook) = &config.mail.alert_webhook else {
        return;
    };
    match client.post(webhook.as_str()).json(alert).send().await {
        Ok(response) if response.status().is_success() => {}
        Ok(response) => tracing::warn!(status = response.status().as_u16(), "the alert webhook refused the alert"),
        Err(error) => tracing::warn!(error = %error.without_url(), "cannot reach the alert webhook"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mail_alert_names_its_event_and_the_recipients_domain_never_the_address() {
        let cases = [
            (MailEvent::ConfirmationUndeliverable, "confirmation_undeliverable"),
            (MailEvent::WelcomeRefused, "welcome_refused"),
        ];
        for (event, name) in cases {
            let alert = Alert::new(event, "news", Some(550), "sue.unique@xn--bcher-kva.de", "550 5.1.1 unknown");
            let body = serde_json::to_value(&alert).unwrap();
            assert_eq!(
                body,
                serde_json::json!({
                    "event": name,
                    "list": "news",
                    "smtp_code": 550,
                    "recipient_domain": "xn--bcher-kva.de",
                    "detail": "550 5.1.1 unknown",
                }),
                "case: {name}"
            );
        }
    }
}
