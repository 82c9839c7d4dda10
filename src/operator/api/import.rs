//! `POST /api/v1/import?list=&consent_text=&consent_version=&dry_run=` (scope `write`): a list
//! brought over as JSON lines (`application/x-ndjson`), each line a record as `signupd import`
//! reads one (`email`, `confirmed_at`, `consent_text`, `consent_version`, `source`, `tags`), with
//! the command's checks, batches and counts ([`crate::operator::import::import_lines`]) through
//! the server's own writer. `consent_text` and `consent_version` are the flags' defaults;
//! `dry_run=true` writes nothing but its audit entry (`import_dry_run`). Nothing is mailed.
//!
//! The body is at most [`MAX_IMPORT_BODY`] (some 60,000 records): a larger list goes through
//! the command, or in several calls — a record already imported is skipped as `existing`, so
//! calls can be repeated. The answer has the counts and the first [`MAX_REFUSALS_SHOWN`]
//! refusals, each as the command prints it (the line number, the address masked).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;

use super::limits::Limits;
use super::{ApiError, authorize, record};
use crate::config::Scope;
use crate::operator::import::{Defaults, import_lines};
use crate::web::routes::form::{query_param, read_limited, says_yes};
use crate::web::state::AppState;

/// The largest body.
pub const MAX_IMPORT_BODY: usize = 8 * 1024 * 1024;
/// Refusals listed in the answer; the count has them all.
const MAX_REFUSALS_SHOWN: usize = 1000;

/// The content types of JSON lines.
const JSON_LINES: &[&str] = &["application/x-ndjson", "application/jsonl", "application/json-lines"];

pub async fn import(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Write, "import").await?;
    if !JSON_LINES.iter().any(|kind| content_type_is(&req, kind)) {
        return Err(ApiError::UnsupportedMediaType("application/x-ndjson (JSON lines)"));
    }
    let list = query_param(&req, "list")
        .ok_or_else(|| ApiError::bad("unknown_list", "list is required"))
        .and_then(|id| state.config.list(&id).ok_or(ApiError::UnknownList))?
        .clone();
    let defaults = Defaults {
        consent_text: query_param(&req, "consent_text"),
        consent_version: query_param(&req, "consent_version"),
    };
    // The answers name the rule, never the value: a refused text may be anything at all.
    if let Some(text) = &defaults.consent_text {
        crate::config::parse::display_text(text).map_err(|_| {
            ApiError::bad("invalid_consent_text", "consent_text must not be empty or contain control characters")
        })?;
    }
    if let Some(version) = &defaults.consent_version {
        crate::config::parse::consent_version(version).map_err(|_| {
            ApiError::bad(
                "invalid_consent_version",
                "consent_version must be 1-64 characters of A-Z, a-z, 0-9, '.', '-', '_'",
            )
        })?;
    }
    let dry_run = query_param(&req, "dry_run").is_some_and(|value| says_yes(&value));
    let body = read_limited(&req, payload, MAX_IMPORT_BODY).await.map_err(|error| match ApiError::from(error) {
        ApiError::TooLarge(_) => ApiError::TooLarge(MAX_IMPORT_BODY),
        other => other,
    })?;

    let runtime = tokio::runtime::Handle::current();
    let (db, writer, hash_key) = (state.db.clone(), state.writer.clone(), state.secrets.hash_key.clone());
    let list_id = list.id.as_ref().to_owned();
    let (counts, refusals) = tokio::task::spawn_blocking(move || {
        let mut refusals = Vec::new();
        let writer = (!dry_run).then_some(&writer);
        let counts = import_lines(&db, writer, hash_key, &list, &defaults, &body, &runtime, &mut refusals);
        (counts, refusals)
    })
    .await
    .map_err(|_| ApiError::Unavailable(anyhow::anyhow!("the import was cancelled")))?;
    let refusals: Vec<String> =
        String::from_utf8_lossy(&refusals).lines().take(MAX_REFUSALS_SHOWN).map(str::to_owned).collect();
    let (counts, stopped) = match counts {
        Ok(counts) => (counts, None),
        Err((counts, error)) => (counts, Some(error)),
    };
    // A dry run is audited too: its counts tell a write token which addresses exist or are
    // suppressed. Its count is every record it looked at, not the ones it would import.
    if dry_run {
        let looked_at = counts.imported + counts.existing + counts.suppressed + counts.refused;
        record(&state, &token, "import_dry_run", Some(&list_id), Some(looked_at), None).await?;
    } else {
        record(&state, &token, "import", Some(&list_id), Some(counts.imported), None).await?;
    }
    if let Some(error) = stopped {
        return Err(ApiError::Unavailable(error.context(format!("the import stopped ({counts})"))));
    }
    Ok(HttpResponse::Ok().json(json!({
        "ok": true,
        "dry_run": dry_run,
        "imported": counts.imported,
        "existing": counts.existing,
        "suppressed": counts.suppressed,
        "refused": counts.refused,
        "refusals": refusals,
    })))
}

/// Whether the request's `Content-Type` is `essence`, parameters and case aside.
fn content_type_is(req: &HttpRequest, essence: &str) -> bool {
    let value = req.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
    value.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(essence)
}

/// `415` unless the body is `essence`.
pub(super) fn require_content_type(req: &HttpRequest, essence: &'static str) -> Result<(), ApiError> {
    if content_type_is(req, essence) { Ok(()) } else { Err(ApiError::UnsupportedMediaType(essence)) }
}
