//! One address: `GET /api/v1/subscribers?email=&list=` (scope `read`: everything held about it,
//! the document `signupd lookup --json` prints), `DELETE /api/v1/subscribers?email=&list=&reason=`
//! (scope `write`: as `signupd remove`) and `POST /api/v1/suppressions` (scope `write`: the
//! address is suppressed on the lists whether or not it has a row, and removed where it has).
//!
//! Without `list`, every configured list. An address nothing is held about is a `200` with empty
//! arrays, and a removal that found nothing is a `200` with `removed: []`: the answer is the
//! state, and repeating a call is harmless.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use super::limits::Limits;
use super::{ApiError, authorize, email, list, record};
use crate::config::Scope;
use crate::domain::ListId;
use crate::operator::lookup;
use crate::storage::suppressions::{EVERY_LIST, Reason};
use crate::subscribers::subscription::{RemovalChannel, Removed};
use crate::web::routes::form::{query_param, read_limited};
use crate::web::state::AppState;

pub async fn look_up(
    req: HttpRequest,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Read, "lookup").await?;
    let email = email(query_param(&req, "email").as_deref())?;
    let list_id = list(&state, query_param(&req, "list").as_deref())?.map(|list| list.id.as_ref().to_owned());
    let now = crate::clock::Clock::now(&*state.clock);
    let (config, hash_key, address) = (state.config.clone(), state.secrets.clone(), email.clone());
    let mut document = state
        .db
        .run(move |conn| lookup::look_up(&config, &hash_key.hash_key, conn, &address, now))
        .await
        .map_err(ApiError::Unavailable)?;
    if let Some(list) = &list_id {
        only_list(&mut document, list);
    }
    let count = document.held.rows.len() as u64;
    record(&state, &token, "lookup", list_id.as_deref(), Some(count), Some(&email)).await?;
    Ok(HttpResponse::Ok().json(document))
}

/// Keeps what concerns `list`: its row and signups, their mail, the events about it (a removed
/// row's too: an event names its list), its suppression and the every-list one.
fn only_list(document: &mut lookup::Document, list: &str) {
    let held = &mut document.held;
    held.rows.retain(|row| row.list == list);
    let ids: Vec<String> = held.rows.iter().map(|row| row.id.clone()).collect();
    held.signups_waiting.retain(|signup| signup.list == list);
    held.queued_mail.retain(|mail| ids.contains(&mail.subscriber_id));
    held.queued_events.retain(|event| event.list.as_deref() == Some(list));
    held.suppressions.retain(|suppression| suppression.list == list || suppression.list == EVERY_LIST);
}

pub async fn remove(
    req: HttpRequest,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Write, "remove").await?;
    let email = email(query_param(&req, "email").as_deref())?;
    let list = list(&state, query_param(&req, "list").as_deref())?;
    let reason = query_param(&req, "reason").map(|reason| removal_reason(&reason)).transpose()?;
    let lists = lists(&state, list);
    let now = crate::clock::Clock::now(&*state.clock);
    let removed = state
        .subscriptions()
        .remove_from_lists(&lists, email.as_ref(), reason, RemovalChannel::Api, now)
        .await
        .map_err(ApiError::Unavailable)?;
    count_removals(&removed);
    let list_id = list.map(|list| list.id.as_ref());
    record(&state, &token, "remove", list_id, Some(removed.len() as u64), Some(&email)).await?;
    Ok(HttpResponse::Ok().json(json!({"ok": true, "removed": removals(&removed)})))
}

/// `POST /api/v1/suppressions`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuppressionRequest {
    email: Option<String>,
    list: Option<String>,
    reason: Option<String>,
}

/// The largest body: one address and two words.
const MAX_SUPPRESSION_BODY: usize = 4096;

pub async fn suppress(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Write, "suppress").await?;
    super::import::require_content_type(&req, "application/json")?;
    let body =
        read_limited(&req, payload, MAX_SUPPRESSION_BODY).await.map_err(|error| match ApiError::from(error) {
            ApiError::TooLarge(_) => ApiError::TooLarge(MAX_SUPPRESSION_BODY),
            other => other,
        })?;
    // serde's message may quote the input: only its category is said.
    let request: SuppressionRequest = serde_json::from_slice(&body).map_err(|error| {
        ApiError::bad(
            "invalid_body",
            format!(
                "the body is not a JSON object of email, list and reason ({})",
                match error.classify() {
                    serde_json::error::Category::Data => "a field of the wrong type, or an unknown field",
                    _ => "not JSON",
                }
            ),
        )
    })?;
    let email = email(request.email.as_deref())?;
    let list = list(&state, request.list.as_deref())?;
    let reason = request.reason.as_deref().map(removal_reason).transpose()?.unwrap_or(Reason::Unsubscribed);
    let lists = lists(&state, list);
    let now = crate::clock::Clock::now(&*state.clock);
    let removed =
        state.subscriptions().suppress_address(&lists, &email, reason, now).await.map_err(ApiError::Unavailable)?;
    count_removals(&removed);
    let list_id = list.map(|list| list.id.as_ref());
    record(&state, &token, "suppress", list_id, Some(lists.len() as u64), Some(&email)).await?;
    let suppressed: Vec<&str> = lists.iter().map(AsRef::as_ref).collect();
    Ok(HttpResponse::Ok().json(json!({
        "ok": true,
        "suppressed": suppressed,
        "reason": reason.as_str(),
        "removed": removals(&removed),
    })))
}

/// `unsubscribed` or `not_me`, the reasons an operator may give (a bounce or a complaint is the
/// relay's to report).
fn removal_reason(word: &str) -> Result<Reason, ApiError> {
    match word {
        "unsubscribed" => Ok(Reason::Unsubscribed),
        "not_me" => Ok(Reason::NotMe),
        _ => Err(ApiError::bad("invalid_reason", "reason must be unsubscribed or not_me")),
    }
}

fn lists(state: &AppState, list: Option<&crate::config::ListConfig>) -> Vec<ListId> {
    match list {
        Some(list) => vec![list.id.clone()],
        None => state.config.lists.iter().map(|list| list.id.clone()).collect(),
    }
}

fn count_removals(removed: &[Removed]) {
    for removal in removed {
        crate::metrics::removal(&removal.list_id, removal.reason.as_str(), RemovalChannel::Api.as_str());
    }
}

fn removals(removed: &[Removed]) -> Vec<serde_json::Value> {
    removed.iter().map(|removal| json!({"list": removal.list_id, "reason": removal.reason.as_str()})).collect()
}
