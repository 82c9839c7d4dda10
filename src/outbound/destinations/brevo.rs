//! Brevo (API v3): the key in the `api-key` header, against `https://api.brevo.com/v3`. The
//! target is the list id.
//!
//! - **Confirmed.** `POST /contacts` with the list and `updateEnabled: true` — create, or update
//!   a contact Brevo already holds and add it to the list (201 created, 204 updated). Brevo's
//!   own double opt-in is a different call, never made. A `duplicate_parameter` answer is
//!   success. The consent evidence stays in signupd (`signupd export`).
//! - **The subscriber's language.** Brevo keeps only the contact attributes the account created
//!   beforehand, and whether it refuses an unknown one (400) or drops it silently is not
//!   documented. So the language goes as `"attributes": {"LANGUAGE": "fr"}` only when the
//!   account has a normal text attribute `LANGUAGE`, read with `GET /contacts/attributes`; the
//!   answer is remembered for [`REMEMBERED`] (an hour) per destination, so a hand-off costs one
//!   call, not two. Should a 400 that names attributes come back anyway (the attribute deleted
//!   within the hour), it is forgotten and the contact sent again at once without it: the
//!   subscriber is never held or dropped for the language. The operator configures nothing;
//!   `send-test-destination` says whether the account has the attribute and how to create it.
//!   An attribute read refused for good (not 401/403/429/5xx) hands on without the language,
//!   and is remembered as an account without the attribute.
//! - **Unsubscribed.** `PUT /contacts/{email}` with `unlinkListIds`: removed from the list, the
//!   contact kept. A 404 (Brevo does not hold it) is done already.
//! - **Limits.** A 429 carries no `Retry-After` but `x-sib-ratelimit-reset`, the seconds until
//!   the window resets; the retry waits for it.
//! - **Probe.** `GET /contacts/lists/{target}`, then `GET /contacts/attributes`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use super::{Answer, Call, Subscriber, refusal};
use crate::outbound::delivery::{DeliveryFailure, Failed, Retry};

/// The contact attribute that holds the subscriber's language (a normal text attribute).
pub const LANGUAGE: &str = "LANGUAGE";

/// How long the account's answer about [`LANGUAGE`] is trusted: an operator who creates the
/// attribute sees languages handed on within the hour.
pub const REMEMBERED: Duration = Duration::from_secs(60 * 60);

/// What a destination remembers of its account's [`LANGUAGE`] attribute: whether it has it, and
/// since when that is known.
#[derive(Debug, Default)]
pub struct LanguageAttribute(Mutex<Option<(Instant, bool)>>);

impl LanguageAttribute {
    /// Whether the account has the attribute, if that was read less than [`REMEMBERED`] before `now`.
    fn known_at(&self, now: Instant) -> Option<bool> {
        let known = *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.filter(|(since, _)| now.saturating_duration_since(*since) < REMEMBERED).map(|(_, has)| has)
    }

    fn remember(&self, now: Instant, has: bool) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((now, has));
    }

    fn forget(&self) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

/// The account's [`LANGUAGE`] attribute as `GET /contacts/attributes` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Attribute {
    /// A normal text attribute: it takes the language.
    Text,
    /// An attribute of that name that cannot take it: its category and type.
    Other {
        category: String,
        kind: String,
    },
    Missing,
}

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    request.header("api-key", call.credential()).header("accept", "application/json")
}

fn list_id(call: &Call<'_>) -> i64 {
    // Checked digits (`crate::config`).
    call.target().parse().unwrap_or_default()
}

/// Reads the account's attributes; the answer itself when it is not a 2xx.
async fn read_attribute(call: &Call<'_>) -> Result<Result<Attribute, Answer>, Failed> {
    #[derive(Deserialize)]
    struct Attributes {
        #[serde(default)]
        attributes: Vec<Described>,
    }
    #[derive(Deserialize)]
    struct Described {
        name: String,
        #[serde(default)]
        category: String,
        #[serde(default, rename = "type")]
        kind: String,
    }
    let answer = call.send(authorized(call, call.client().get(call.url(&["contacts", "attributes"])))).await?;
    if !answer.is_success() {
        return Ok(Err(answer));
    }
    let read: Attributes = answer.json()?;
    let found = read.attributes.into_iter().find(|attribute| attribute.name.eq_ignore_ascii_case(LANGUAGE));
    Ok(Ok(match found {
        Some(attribute) if attribute.category == "normal" && attribute.kind == "text" => Attribute::Text,
        Some(attribute) => Attribute::Other { category: attribute.category, kind: attribute.kind },
        None => Attribute::Missing,
    }))
}

/// Whether the language can go with the contact: remembered, else read (and remembered).
async fn takes_language(call: &Call<'_>) -> Result<bool, Failed> {
    let memory = &call.destination.language_attribute;
    if let Some(has) = memory.known_at(Instant::now()) {
        return Ok(has);
    }
    match read_attribute(call).await {
        Ok(Ok(attribute)) => {
            let has = attribute == Attribute::Text;
            memory.remember(Instant::now(), has);
            Ok(has)
        }
        // 401/403, 429, 5xx: the contact call would fail alike; retried as it would be.
        // Anything else will not change: without the language, remembered like an answer.
        Ok(Err(answer)) => match refusal(&answer, answer.code("code")) {
            Failed { retry: Retry::Never, .. } => {
                memory.remember(Instant::now(), false);
                Ok(false)
            }
            failed => Err(failed),
        },
        // A 2xx that does not read as the documented list: hand on without the language.
        Err(Failed { failure: DeliveryFailure::Unexpected(_), .. }) => Ok(false),
        Err(failed) => Err(failed),
    }
}

async fn create(call: &Call<'_>, who: &Subscriber, language: Option<&str>) -> Result<Answer, Failed> {
    let mut body = json!({ "email": who.email, "listIds": [list_id(call)], "updateEnabled": true });
    if let Some(language) = language {
        body["attributes"] = json!({ LANGUAGE: language });
    }
    call.send(authorized(call, call.client().post(call.url(&["contacts"])).json(&body))).await
}

fn settled(answer: &Answer) -> Result<(), Failed> {
    let code = answer.code("code");
    match (answer.status, code.as_deref()) {
        (200..=299, _) | (400, Some("duplicate_parameter")) => Ok(()),
        _ => Err(refusal(answer, code)),
    }
}

pub async fn confirmed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let language = match who.language.as_deref() {
        Some(code) if takes_language(&call).await? => Some(code),
        _ => None,
    };
    let answer = create(&call, who, language).await?;
    if language.is_some() && answer.status == 400 && answer.mentions("message", "attribute") {
        // The account no longer has the attribute (deleted since it was read): read it again
        // next time, and hand this subscriber on without it now.
        call.destination.language_attribute.forget();
        return settled(&create(&call, who, None).await?);
    }
    settled(&answer)
}

pub async fn unsubscribed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let request =
        call.client().put(call.url(&["contacts", &who.email])).json(&json!({ "unlinkListIds": [list_id(&call)] }));
    let answer = call.send(authorized(&call, request)).await?;
    match answer.status {
        200..=299 | 404 => Ok(()),
        _ => Err(refusal(&answer, answer.code("code"))),
    }
}

/// How to create the attribute, in the operator's words.
const CREATE_IT: &str = "create it as a text attribute under Contacts → Settings → Contact attributes, or with POST \
                         /v3/contacts/attributes/normal/LANGUAGE and the body {\"type\":\"text\"}";

pub async fn probe(call: Call<'_>) -> Result<String, Failed> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct List {
        id: i64,
        name: String,
        #[serde(default)]
        unique_subscribers: Option<i64>,
    }
    let answer =
        call.send(authorized(&call, call.client().get(call.url(&["contacts", "lists", call.target()])))).await?;
    if !answer.is_success() {
        return Err(refusal(&answer, answer.code("code")));
    }
    let list: List = answer.json()?;
    let count = list.unique_subscribers.map(|n| format!(", {n} contacts")).unwrap_or_default();
    let language = match read_attribute(&call).await? {
        Ok(Attribute::Text) => format!("; each subscriber's language goes to the contact attribute {LANGUAGE}"),
        Ok(Attribute::Missing) => {
            format!("; languages are not handed on: the account has no contact attribute {LANGUAGE} ({CREATE_IT})")
        }
        Ok(Attribute::Other { category, kind }) => format!(
            "; languages are not handed on: the contact attribute {LANGUAGE} is a {category} attribute of type \
             {kind}, not a normal text one (delete it and {CREATE_IT})"
        ),
        Err(answer) => return Err(refusal(&answer, answer.code("code"))),
    };
    Ok(format!("list {} {:?}{count}{language}", list.id, list.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accounts_answer_is_remembered_for_an_hour_and_forgotten_on_demand() {
        let memory = LanguageAttribute::default();
        let start = Instant::now();
        assert_eq!(memory.known_at(start), None, "nothing read yet");
        memory.remember(start, true);
        assert_eq!(memory.known_at(start + REMEMBERED - Duration::from_secs(1)), Some(true));
        assert_eq!(memory.known_at(start + REMEMBERED), None, "read again after an hour");
        memory.remember(start, false);
        assert_eq!(memory.known_at(start), Some(false), "an account without it is remembered too");
        memory.forget();
        assert_eq!(memory.known_at(start), None);
    }
}
