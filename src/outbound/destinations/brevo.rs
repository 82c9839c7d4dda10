//! Brevo (API v3): the key in the `api-key` header, against `https://api.brevo.com/v3`. The
//! target is the list id.
//!
//! - **Confirmed.** `POST /contacts` with the list and `updateEnabled: true` — create, or update
//!   a contact Brevo already holds and add it to the list (201 created, 204 updated). Brevo's
//!   own double opt-in is a different call, never made. A `duplicate_parameter` answer is
//!   success. No attributes are sent: Brevo keeps only attributes created in the account
//!   beforehand, so the consent evidence stays in signupd (`signupd export`).
//! - **Unsubscribed.** `PUT /contacts/{email}` with `unlinkListIds`: removed from the list, the
//!   contact kept. A 404 (Brevo does not hold it) is done already.
//! - **Limits.** A 429 carries no `Retry-After` but `x-sib-ratelimit-reset`, the seconds until
//!   the window resets; the retry waits for it.
//! - **Probe.** `GET /contacts/lists/{target}`.

use serde::Deserialize;
use serde_json::json;

use super::{Call, Subscriber, refusal};
use crate::outbound::delivery::Failed;

fn authorized(call: &Call<'_>, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    request.header("api-key", call.credential()).header("accept", "application/json")
}

fn list_id(call: &Call<'_>) -> i64 {
    // Checked digits (`crate::config`).
    call.target().parse().unwrap_or_default()
}

pub async fn confirmed(call: Call<'_>, who: &Subscriber) -> Result<(), Failed> {
    let body = json!({ "email": who.email, "listIds": [list_id(&call)], "updateEnabled": true });
    let answer = call.send(authorized(&call, call.client().post(call.url(&["contacts"])).json(&body))).await?;
    let code = answer.code("code");
    match (answer.status, code.as_deref()) {
        (200..=299, _) | (400, Some("duplicate_parameter")) => Ok(()),
        _ => Err(refusal(&answer, code)),
    }
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
    Ok(format!("list {} {:?}{count}", list.id, list.name))
}
