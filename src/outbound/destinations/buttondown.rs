//! Buttondown (API v1): `Authorization: Token <key>`, the API version pinned with
//! `X-API-Version` so a change of Buttondown's default never changes what signupd sends. One API
//! key is one newsletter: there is no target.
//!
//! - **Confirmed.** `POST /subscribers` with `type: regular` (Buttondown's way to skip its own
//!   double opt-in), the configured tags, and the consent evidence (with the subscriber's
//!   `language`) in `metadata`; with
//!   `X-Buttondown-Collision-Behavior: add`, so an address Buttondown already holds is merged
//!   (and one that had unsubscribed there is subscribed again: it just confirmed through
//!   signupd), and `X-Idempotency-Key` set to the event's id, so a retry after a lost answer is
//!   the same request. An answer that the address exists (409, or 400 `email_already_exists` /
//!   `subscriber_already_exists`) is success.
//! - **Unsubscribed.** `PATCH /subscribers/{email}` with `type: unsubscribed`; a 404 (Buttondown
//!   does not hold it) is done already. Never `DELETE`.
//! - **Limits.** A 429 carries `Retry-After`. Buttondown's daily cap on new subscribers answers
//!   400 `rate_limited`, not 429: retried with the backoff (until `webhook_max_age`), not dropped.
//! - **Probe.** `GET /subscribers?page_size=1`: proves the key and its subscriber access, and
//!   prints the newsletter's subscriber count; the page's address is never read.

use serde::Deserialize;
use serde_json::json;

use super::{Call, Subscriber, refusal};
use crate::outbound::delivery::{Failed, Retry};

/// The API version every call is made against.
pub const API_VERSION: &str = "2026-04-01";

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    request.header("authorization", format!("Token {}", call.credential())).header("x-api-version", API_VERSION)
}

pub async fn confirmed(call: Call<'_>, who: &Subscriber, event_id: &str) -> Result<(), Failed> {
    let mut body = json!({
        "email_address": who.email,
        "type": "regular",
        "metadata": who.evidence(),
    });
    if !call.tags().is_empty() {
        body["tags"] = json!(call.tags());
    }
    let request = call
        .client()
        .post(call.url(&["subscribers"]))
        .header("x-buttondown-collision-behavior", "add")
        .header("x-idempotency-key", event_id)
        .json(&body);
    let answer = call.send(authorized(&call, request)).await?;
    let code = answer.code("code");
    match (answer.status, code.as_deref()) {
        (200..=299 | 409, _) | (400, Some("email_already_exists" | "subscriber_already_exists")) => Ok(()),
        (400, Some("rate_limited")) => Err(Failed { retry: Retry::Backoff, ..refusal(&answer, code) }),
        _ => Err(refusal(&answer, code)),
    }
}

pub async fn unsubscribed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let request = call.client().patch(call.url(&["subscribers", &who.email])).json(&json!({ "type": "unsubscribed" }));
    let answer = call.send(authorized(&call, request)).await?;
    match answer.status {
        200..=299 | 404 => Ok(()),
        _ => Err(refusal(&answer, answer.code("code"))),
    }
}

pub async fn probe(call: Call<'_>) -> Result<String, Failed> {
    #[derive(Deserialize)]
    struct Page {
        count: i64,
    }
    let mut url = call.url(&["subscribers"]);
    url.query_pairs_mut().append_pair("page_size", "1");
    let answer = call.send(authorized(&call, call.client().get(url))).await?;
    if !answer.is_success() {
        return Err(refusal(&answer, answer.code("code")));
    }
    Ok(format!("the newsletter has {} subscribers", answer.json::<Page>()?.count))
}
