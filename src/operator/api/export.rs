//! `GET /api/v1/export?list=&status=&since=` (scope `read`): the subscribers `signupd export
//! --format jsonl` writes, one JSON object a line (`application/x-ndjson`), streamed from one
//! read transaction on a blocking thread, so an export of any size holds a chunk in memory at
//! a time; a client that goes away stops it. A failure half-way aborts the connection instead
//! of ending the body, so a cut export never looks complete. The audit entry is written before
//! the first record leaves, without a count (the stream's length is not known then).
//!
//! `GET /api/v1/stats` (scope `read`): the figures of `signupd stats --json`.

use std::io::Write;

use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use tokio::sync::mpsc;

use super::limits::Limits;
use super::{ApiError, authorize, list, record};
use crate::config::Scope;
use crate::operator::export::{self, ExportRequest, Format, StatusFilter};
use crate::operator::stats;
use crate::outbound::mail::message::Links;
use crate::web::routes::form::query_param;
use crate::web::state::AppState;

/// Bytes gathered before a chunk is sent.
const CHUNK_BYTES: usize = 64 * 1024;
/// Chunks waiting for a slow client before the export waits for it.
const CHUNKS_AHEAD: usize = 4;

pub async fn export(
    req: HttpRequest,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Read, "export").await?;
    let list_id = list(&state, query_param(&req, "list").as_deref())?.map(|list| list.id.as_ref().to_owned());
    let status = match query_param(&req, "status").as_deref() {
        None | Some("confirmed") => StatusFilter::Confirmed,
        Some("pending") => StatusFilter::Pending,
        Some("all") => StatusFilter::All,
        Some(_) => return Err(ApiError::bad("invalid_status", "status must be confirmed, pending or all")),
    };
    let since = query_param(&req, "since")
        .map(|since| export::parse_since(&since))
        .transpose()
        .map_err(|_| ApiError::bad("invalid_since", "since must be an RFC 3339 time or a date (2026-11-01)"))?;
    record(&state, &token, "export", list_id.as_deref(), None, None).await?;

    let request = ExportRequest { list: list_id, status, format: Format::Jsonl, since, output: None };
    let (sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(CHUNKS_AHEAD);
    let links = Links::new(&state.config);
    let (keyring, db, config) = (state.keyring.clone(), state.db.clone(), state.config.clone());
    tokio::task::spawn_blocking(move || {
        let mut out = ChunkWriter { sender, buffer: Vec::with_capacity(CHUNK_BYTES) };
        let written = db
            .conn()
            .map_err(anyhow::Error::from)
            .and_then(|mut conn| export::write_records(&mut conn, &request, &config, &keyring, &links, &mut out))
            .and_then(|count| out.flush().map(|()| count).map_err(anyhow::Error::from));
        if let Err(error) = written {
            tracing::error!(error = format!("{error:#}"), "operator API: the export stopped half-way");
            let _ = out.sender.blocking_send(Err(std::io::Error::other("the export stopped")));
        }
    });
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    Ok(HttpResponse::Ok().content_type("application/x-ndjson").streaming(body))
}

/// Hands what is written to the response in chunks; fails once the client is gone.
struct ChunkWriter {
    sender: mpsc::Sender<Result<Bytes, std::io::Error>>,
    buffer: Vec<u8>,
}

impl Write for ChunkWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK_BYTES {
            self.flush()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK_BYTES)));
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

pub async fn stats(
    req: HttpRequest,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> Result<HttpResponse, ApiError> {
    let token = authorize(&req, &state, &limits, Scope::Read, "stats").await?;
    let (config, now) = (state.config.clone(), state.clock.now());
    let figures = state.db.run(move |conn| stats::gather(&config, conn, now)).await.map_err(ApiError::Unavailable)?;
    record(&state, &token, "stats", None, None, None).await?;
    Ok(HttpResponse::Ok().json(figures))
}
