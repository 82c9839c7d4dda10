//! Prometheus metrics (`docs/http-api.md`), served only on `server.metrics_listen`, never on the public
//! listener. Off by default: without a listener no recorder is installed and every counter
//! below is a no-op.
//!
//! Labels only ever hold configured names and fixed words — a configured list id, an outcome,
//! a route pattern — never an address, a subscriber's domain, an IP, a token or a raw path.
//! Gauges that need a query (subscribers per list and status, queue depth and age) are read at
//! scrape time, through a reader, not on any request path.
//!
//! The recorder is process-wide (the `metrics` crate's model), installed once by the first
//! application that asks for a listener; a second one in the same process shares it.

use std::net::TcpListener;
use std::sync::OnceLock;

use actix_web::dev::Server;
use actix_web::{App, HttpResponse, HttpServer, web};
use anyhow::Context;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::state::AppState;

pub const SIGNUPS: &str = "signupd_signups_total";
pub const CONFIRMATIONS: &str = "signupd_confirmations_total";
pub const REMOVALS: &str = "signupd_removals_total";
pub const MAILS: &str = "signupd_mails_total";
pub const WEBHOOKS: &str = "signupd_webhooks_total";
pub const QUEUE_DEPTH: &str = "signupd_queue_depth";
pub const QUEUE_OLDEST: &str = "signupd_queue_oldest_seconds";
pub const SUBSCRIBERS: &str = "signupd_subscribers";
pub const HTTP_DURATION: &str = "signupd_http_request_duration_seconds";
pub const SMTP_DURATION: &str = "signupd_smtp_send_duration_seconds";
pub const TIME_TO_CONFIRM: &str = "signupd_time_to_confirm_seconds";
pub const SURGE_ALERTS: &str = "signupd_surge_alerts_total";

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Each queue and the query for its depth and oldest item, shared with `signupd stats`.
pub const QUEUES: [(&str, &str); 3] = [
    ("intake", "SELECT count(*), min(received_at) FROM intake"),
    ("mail", "SELECT count(*), min(created_at) FROM outbox"),
    ("webhook", "SELECT count(*), min(created_at) FROM webhook_deliveries"),
];

/// The list label: a configured list id, or `none` when the request named no configured list
/// (a visitor's free text must not become a label).
pub fn list_label(state: &AppState, list: Option<&str>) -> String {
    list.and_then(|id| state.config.list(id)).map_or_else(|| "none".to_owned(), |list| list.id.as_ref().to_owned())
}

pub fn signup(list: String, outcome: &'static str) {
    metrics::counter!(SIGNUPS, "list" => list, "outcome" => outcome).increment(1);
}

pub fn confirmation(list: &str, method: &'static str, delay_secs: Option<i64>) {
    metrics::counter!(CONFIRMATIONS, "list" => list.to_owned(), "method" => method).increment(1);
    if let Some(delay) = delay_secs {
        #[allow(clippy::cast_precision_loss, reason = "seconds far below 2^52")]
        metrics::histogram!(TIME_TO_CONFIRM, "list" => list.to_owned()).record(delay.max(0) as f64);
    }
}

pub fn removal(list: &str, reason: &'static str, via: &'static str) {
    metrics::counter!(REMOVALS, "list" => list.to_owned(), "reason" => reason, "via" => via).increment(1);
}

pub fn mail(kind: &'static str, result: &'static str) {
    metrics::counter!(MAILS, "kind" => kind, "result" => result).increment(1);
}

/// A list's signups passed `signup.surge_alert` in one window.
pub fn surge_alert(list: &str) {
    metrics::counter!(SURGE_ALERTS, "list" => list.to_owned()).increment(1);
}

pub fn webhook(result: &'static str) {
    metrics::counter!(WEBHOOKS, "result" => result).increment(1);
}

pub fn smtp_send(duration: std::time::Duration) {
    metrics::histogram!(SMTP_DURATION).record(duration.as_secs_f64());
}

pub fn http_request(route: String, duration: std::time::Duration) {
    metrics::histogram!(HTTP_DURATION, "route" => route).record(duration.as_secs_f64());
}

/// Installs the recorder (once per process) and returns its handle.
fn recorder() -> anyhow::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(HTTP_DURATION.into()),
            &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0],
        )?
        .set_buckets_for_metric(
            Matcher::Full(SMTP_DURATION.into()),
            &[0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0],
        )?
        // From seconds (a scanner) to two days (the link's default lifetime).
        .set_buckets_for_metric(
            Matcher::Full(TIME_TO_CONFIRM.into()),
            &[1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 6.0 * 3600.0, 86_400.0, 172_800.0],
        )?;
    let handle = match builder.install_recorder() {
        Ok(handle) => handle,
        // Another thread installed one first: use it.
        Err(_) => HANDLE.get().cloned().context("cannot install the metrics recorder")?,
    };
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// Binds `server.metrics_listen` (if set) and returns the metrics server, not yet running.
pub fn server(state: &AppState) -> anyhow::Result<Option<(Server, u16)>> {
    let Some(listen) = state.config.server.metrics_listen else {
        return Ok(None);
    };
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen} (server.metrics_listen)"))?;
    let port = listener.local_addr().context("cannot read the metrics address")?.port();
    let handle = recorder()?;
    let data = web::Data::new((state.clone(), handle));
    let server = HttpServer::new(move || App::new().app_data(data.clone()).route("/metrics", web::get().to(scrape)))
        .workers(1)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(listener)
        .context("cannot serve metrics on the bound socket")?
        .run();
    Ok(Some((server, port)))
}

/// `GET /metrics`: refreshes the gauges that need a query, then renders every metric.
async fn scrape(data: web::Data<(AppState, PrometheusHandle)>) -> HttpResponse {
    let (state, handle) = data.get_ref();
    if let Err(error) = refresh_gauges(state).await {
        tracing::warn!(error = format!("{error:#}"), "metrics: cannot read the database for the gauges");
    }
    handle.run_upkeep();
    HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(handle.render())
}

async fn refresh_gauges(state: &AppState) -> anyhow::Result<()> {
    let now = state.clock.now();
    let lists: Vec<String> = state.config.lists.iter().map(|list| list.id.as_ref().to_owned()).collect();
    let (subscribers, queues) = state
        .db
        .run(move |conn| {
            let mut subscribers = Vec::new();
            for list in &lists {
                for status in ["pending", "confirmed"] {
                    let count: i64 = conn.query_row(
                        "SELECT count(*) FROM subscribers WHERE list_id = ?1 AND status = ?2",
                        [list.as_str(), status],
                        |row| row.get(0),
                    )?;
                    subscribers.push((list.clone(), status, count));
                }
            }
            let mut queues = Vec::new();
            for (queue, sql) in QUEUES {
                let (depth, oldest): (i64, Option<i64>) =
                    conn.query_row(sql, [], |row| Ok((row.get(0)?, row.get(1)?)))?;
                queues.push((queue, depth, oldest.map_or(0, |oldest| (now - oldest).max(0))));
            }
            Ok::<_, anyhow::Error>((subscribers, queues))
        })
        .await?;
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    {
        for (list, status, count) in subscribers {
            metrics::gauge!(SUBSCRIBERS, "list" => list, "status" => status).set(count as f64);
        }
        for (queue, depth, oldest) in queues {
            metrics::gauge!(QUEUE_DEPTH, "queue" => queue).set(depth as f64);
            metrics::gauge!(QUEUE_OLDEST, "queue" => queue).set(oldest as f64);
        }
    }
    Ok(())
}
