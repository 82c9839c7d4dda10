//! Mailchimp (Marketing API 3.0): HTTP Basic with any user name and the API key as password,
//! against `https://<dc>.api.mailchimp.com/3.0`, where `<dc>` is the key's suffix (`…-us6`).
//! The target is the audience id; a member is addressed by the MD5 of its lower-cased address
//! (Mailchimp's `subscriber_hash`).
//!
//! - **Confirmed.** `PUT /lists/{audience}/members/{hash}` — Mailchimp's create-or-update — with
//!   `status_if_new` and `status` both `subscribed` (so a double opt-in audience sends no
//!   confirmation of its own), and the evidence Mailchimp has fields for: `timestamp_signup` and
//!   `timestamp_opt` (when the address signed up and confirmed at signupd), and `language` (the
//!   subscriber's, in Mailchimp's codes: `pt_PT`; `pt-BR` is its `pt`, `nb` its `no`). Then the
//!   configured tags, `POST …/members/{hash}/tags` with each `active` (created if new). Mailchimp refuses
//!   to set `subscribed` for a member who unsubscribed there (400 `Member In Compliance State`):
//!   its rule is that such a person confirms with Mailchimp itself, so signupd then sets `pending`
//!   and Mailchimp mails its own confirmation — the one case a sender's opt-in is sent.
//! - **Unsubscribed.** `PATCH …/members/{hash}` with `status: unsubscribed`; a 404 (no such
//!   member) is done already. Never archived or deleted.
//! - **Limits.** Ten simultaneous connections per user, no published rate: a 429 (or a 403 at
//!   high volume) is retried with the backoff.
//! - **Probe.** `GET /lists/{audience}` with only its name, opt-in setting and member count.

use md5::{Digest, Md5};
use serde::Deserialize;
use serde_json::json;

use super::{Call, Subscriber, refusal};
use crate::outbound::delivery::Failed;

/// The title of Mailchimp's answer to `subscribed` for someone who unsubscribed there.
const COMPLIANCE_STATE: &str = "Member In Compliance State";

/// The data centre a key names in its suffix (`…-us6` → `us6`), if it names one.
pub fn datacenter(key: &str) -> Option<&str> {
    let (_, datacenter) = key.rsplit_once('-')?;
    let plausible = !datacenter.is_empty()
        && datacenter.len() <= 8
        && datacenter.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    plausible.then_some(datacenter)
}

/// Mailchimp's `subscriber_hash`: the hex MD5 of the lower-cased address.
pub fn subscriber_hash(email: &str) -> String {
    hex::encode(Md5::digest(email.to_lowercase().as_bytes()))
}

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    request.basic_auth("signupd", Some(call.credential()))
}

/// `2026-05-01T10:00:00Z` as Mailchimp writes its timestamps: `2026-05-01 10:00:00`.
fn mailchimp_time(rfc3339: Option<&str>) -> Option<String> {
    let time = chrono::DateTime::parse_from_rfc3339(rfc3339?).ok()?;
    Some(time.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M:%S").to_string())
}

pub async fn confirmed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let hash = subscriber_hash(&who.email);
    let member = call.url(&["lists", call.target(), "members", &hash]);
    let mut body = json!({
        "email_address": who.email,
        "status_if_new": "subscribed",
        "status": "subscribed",
    });
    if let Some(signed_up) = mailchimp_time(who.created_at.as_deref()) {
        body["timestamp_signup"] = json!(signed_up);
    }
    if let Some(confirmed) = mailchimp_time(who.confirmed_at.as_deref()) {
        body["timestamp_opt"] = json!(confirmed);
    }
    if let Some(language) = who.language.as_deref() {
        body["language"] = json!(mailchimp_language(language));
    }
    let answer = call.send(authorized(&call, call.client().put(member.clone()).json(&body))).await?;
    if !answer.is_success() {
        let title = answer.code("title");
        if answer.status != 400 || title.as_deref() != Some(COMPLIANCE_STATE) {
            return Err(refusal(&answer, title));
        }
        body["status"] = json!("pending");
        body["status_if_new"] = json!("pending");
        let again = call.send(authorized(&call, call.client().put(member).json(&body))).await?;
        if !again.is_success() {
            return Err(refusal(&again, again.code("title")));
        }
    }
    if call.tags().is_empty() {
        return Ok(());
    }
    let tags: Vec<_> = call.tags().iter().map(|name| json!({ "name": name, "status": "active" })).collect();
    let request = call.client().post(call.url(&["lists", call.target(), "members", &hash, "tags"]));
    let answer = call.send(authorized(&call, request.json(&json!({ "tags": tags })))).await?;
    if answer.is_success() { Ok(()) } else { Err(refusal(&answer, answer.code("title"))) }
}

/// A language code as Mailchimp's `language` names it: its own codes are the language alone
/// (`de`, `ja`), with an underscore where it tells a region (`pt_PT`, `fr_CA`); Brazilian
/// Portuguese is its plain `pt`, Norwegian Bokmål its `no`.
fn mailchimp_language(code: &str) -> String {
    match code {
        "pt-BR" => "pt".to_owned(),
        "nb" | "nn" => "no".to_owned(),
        other => other.replace('-', "_"),
    }
}

pub async fn unsubscribed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let member = call.url(&["lists", call.target(), "members", &subscriber_hash(&who.email)]);
    let request = call.client().patch(member).json(&json!({ "status": "unsubscribed" }));
    let answer = call.send(authorized(&call, request)).await?;
    match answer.status {
        200..=299 | 404 => Ok(()),
        _ => Err(refusal(&answer, answer.code("title"))),
    }
}

pub async fn probe(call: Call<'_>) -> Result<String, Failed> {
    #[derive(Deserialize)]
    struct Audience {
        id: String,
        name: String,
        #[serde(default)]
        double_optin: bool,
        #[serde(default)]
        stats: Stats,
    }
    #[derive(Deserialize, Default)]
    struct Stats {
        #[serde(default)]
        member_count: i64,
    }
    let mut url = call.url(&["lists", call.target()]);
    url.query_pairs_mut().append_pair("fields", "id,name,double_optin,stats.member_count");
    let answer = call.send(authorized(&call, call.client().get(url))).await?;
    if !answer.is_success() {
        return Err(refusal(&answer, answer.code("title")));
    }
    let audience: Audience = answer.json()?;
    let optin = if audience.double_optin { "double" } else { "single" };
    Ok(format!(
        "audience {} {:?} ({optin} opt-in, {} members)",
        audience.id, audience.name, audience.stats.member_count
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subscriber_hash_is_the_md5_of_the_lower_cased_address() {
        // Mailchimp's documentation example: the MD5 of "urist.mcvankab@freddiesjokes.com".
        assert_eq!(subscriber_hash("Urist.McVankab@FreddiesJokes.com"), "62eeb292278cc15f5817cb78f7790b08");
    }

    #[test]
    fn a_language_code_becomes_mailchimps() {
        for (code, expected) in [("de", "de"), ("pt-PT", "pt_PT"), ("pt-BR", "pt"), ("nb", "no"), ("ja", "ja")] {
            assert_eq!(mailchimp_language(code), expected, "{code}");
        }
    }

    #[test]
    fn the_data_centre_is_the_keys_suffix() {
        assert_eq!(datacenter("0123456789abcdef0123456789abcdef-us21"), Some("us21"));
        assert_eq!(datacenter("0123456789abcdef"), None);
        assert_eq!(datacenter("abc-us6.evil.example/"), None);
    }

    #[test]
    fn times_are_written_as_mailchimp_writes_them() {
        assert_eq!(mailchimp_time(Some("2026-05-01T12:00:00+02:00")).as_deref(), Some("2026-05-01 10:00:00"));
        assert_eq!(mailchimp_time(Some("yesterday")), None);
    }
}
