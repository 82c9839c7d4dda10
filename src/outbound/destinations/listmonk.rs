//! listmonk (self-hosted, v4 and later): an API user's `Authorization: token user:token` against
//! the base URL, never a cookie (listmonk ignores the header when a session cookie comes along).
//!
//! - **Confirmed.** `POST /api/subscribers` with the target list and
//!   `preconfirm_subscriptions: true`: the subscription is `confirmed` and listmonk sends no
//!   opt-in of its own. The name is the address's local part (what listmonk itself derives when
//!   none is given); the consent evidence (with the subscriber's
//!   `language`) goes into `attribs`. listmonk has no upsert: an address
//!   it already holds answers 409, and is then looked up and added to the list as `confirmed`
//!   with `PUT /api/subscribers/lists` (the one call that also re-subscribes someone who had
//!   unsubscribed there — they just confirmed again through signupd).
//! - **Unsubscribed.** Looked up, then `PUT /api/subscribers/lists` with `action: unsubscribe`
//!   for the target list; the subscriber stays in listmonk. An address listmonk does not hold is
//!   done already.
//! - **Lookup** is `GET /api/subscribers?search=` with the address as an anchored, escaped
//!   regular expression (listmonk matches `search` as a case-insensitive regex over name and
//!   email; no SQL is ever built from an address), and the answer is filtered for the exact
//!   address. The API user needs `subscribers:get_all`, `subscribers:manage` and `lists:get`.
//! - **Statuses.** listmonk answers 403 (never 401) to a bad credential or a missing permission,
//!   400 to a validation error, 409 to a duplicate; it has no rate limit of its own.
//! - **Probe.** `GET /api/lists/{target}`.

use serde::Deserialize;
use serde_json::json;

use super::{Call, Subscriber, refusal};
use crate::outbound::delivery::Failed;

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    request.header("authorization", format!("token {}", call.credential()))
}

fn list_id(call: &Call<'_>) -> i64 {
    // Checked digits (`crate::config`).
    call.target().parse().unwrap_or_default()
}

pub async fn confirmed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let name = who.email.split('@').next().unwrap_or_default();
    let body = json!({
        "email": who.email,
        "name": name,
        "status": "enabled",
        "lists": [list_id(&call)],
        "attribs": who.evidence(),
        "preconfirm_subscriptions": true,
    });
    let answer =
        call.send(authorized(&call, call.client().post(call.url(&["api", "subscribers"])).json(&body))).await?;
    match answer.status {
        200..=299 => Ok(()),
        409 => match find(&call, &who.email).await? {
            Some(id) => set_subscription(&call, id, json!({ "action": "add", "status": "confirmed" })).await,
            // Deleted between the two calls: the next attempt creates it.
            None => Err(Failed::backoff(crate::outbound::delivery::DeliveryFailure::Unexpected(409))),
        },
        _ => Err(refusal(&answer, None)),
    }
}

pub async fn unsubscribed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    match find(&call, &who.email).await? {
        Some(id) => set_subscription(&call, id, json!({ "action": "unsubscribe" })).await,
        None => Ok(()),
    }
}

/// `PUT /api/subscribers/lists` for subscriber `id` on the target list, with `action` (and
/// `status`) from `change`.
async fn set_subscription(call: &Call<'_>, id: i64, mut change: serde_json::Value) -> Result<(), Failed> {
    change["ids"] = json!([id]);
    change["target_list_ids"] = json!([list_id(call)]);
    let request = call.client().put(call.url(&["api", "subscribers", "lists"])).json(&change);
    let answer = call.send(authorized(call, request)).await?;
    if answer.is_success() { Ok(()) } else { Err(refusal(&answer, None)) }
}

/// The id of the subscriber with exactly this address (case aside), if listmonk holds one.
async fn find(call: &Call<'_>, email: &str) -> Result<Option<i64>, Failed> {
    #[derive(Deserialize)]
    struct Page {
        data: Results,
    }
    #[derive(Deserialize)]
    struct Results {
        #[serde(default)]
        results: Vec<Found>,
    }
    #[derive(Deserialize)]
    struct Found {
        id: i64,
        email: String,
    }
    let mut url = call.url(&["api", "subscribers"]);
    url.query_pairs_mut().append_pair("search", &exact_pattern(email)).append_pair("per_page", "50");
    let answer = call.send(authorized(call, call.client().get(url))).await?;
    if !answer.is_success() {
        return Err(refusal(&answer, None));
    }
    let page: Page = answer.json()?;
    Ok(page.data.results.into_iter().find(|found| found.email.eq_ignore_ascii_case(email)).map(|found| found.id))
}

/// A regular expression that matches exactly `email`: anchored, every character that is not a
/// letter, digit or `@` escaped.
fn exact_pattern(email: &str) -> String {
    let mut pattern = String::with_capacity(email.len() * 2 + 2);
    pattern.push('^');
    for c in email.chars() {
        if !(c.is_alphanumeric() || c == '@') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('$');
    pattern
}

pub async fn probe(call: Call<'_>) -> Result<String, Failed> {
    #[derive(Deserialize)]
    struct Answered {
        data: List,
    }
    #[derive(Deserialize)]
    struct List {
        id: i64,
        name: String,
        #[serde(default)]
        optin: String,
        #[serde(default)]
        subscriber_count: Option<i64>,
    }
    let answer = call.send(authorized(&call, call.client().get(call.url(&["api", "lists", call.target()])))).await?;
    if !answer.is_success() {
        return Err(refusal(&answer, None));
    }
    let list = answer.json::<Answered>()?.data;
    let count = list.subscriber_count.map(|n| format!(", {n} subscribers")).unwrap_or_default();
    Ok(format!("list {} {:?} ({} opt-in{count})", list.id, list.name, list.optin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_pattern_matches_the_address_and_nothing_else() {
        assert_eq!(exact_pattern("o'brien+news@ex-ample.com"), r"^o\'brien\+news@ex\-ample\.com$");
        assert_eq!(exact_pattern("a.b@c.d"), r"^a\.b@c\.d$");
    }
}
