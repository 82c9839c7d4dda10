//! The metrics listener (`server.metrics_listen`): `GET /metrics`, the status page `GET
//! /status` ([`crate::operator::status`]) and, once an `[[api_tokens]]` entry exists, the admin page `GET
//! /admin` ([`crate::operator::admin`]) on a socket of its own, never on the public listener. At each
//! scrape it refreshes the gauges that need a query through a reader, then renders everything
//! `crate::metrics` recorded.
//!
//! The status page is held to the public pages' rules: the same security headers and CSP
//! (`default-src 'none'; style-src 'self'`), so its stylesheets are served here too — the
//! pages' own `/static/style.css` and the charts' `/static/status.css`, both built in.

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpResponse, HttpServer, guard, web};
use anyhow::Context;
use metrics_exporter_prometheus::PrometheusHandle;

use crate::metrics::{QUEUE_DEPTH, QUEUE_OLDEST, SUBSCRIBERS};
use crate::storage::figures;
use crate::storage::subscribers::Status;
use crate::web::middleware::security_headers;
use crate::web::state::AppState;

/// Binds `server.metrics_listen` (if set) and returns the metrics server, not yet running.
pub fn server(state: &AppState) -> anyhow::Result<Option<(Server, u16)>> {
    let Some(listen) = state.config.server.metrics_listen else {
        return Ok(None);
    };
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen} (server.metrics_listen)"))?;
    let port = listener.local_addr().context("cannot read the metrics address")?.port();
    let lists: Vec<String> = state.config.lists.iter().map(|list| list.id.as_ref().to_owned()).collect();
    let destinations: Vec<String> = state.config.destinations.iter().map(|d| d.name.clone()).collect();
    let relays: Vec<String> = state.config.relays.iter().map(|relay| relay.name.clone()).collect();
    let handle = crate::metrics::recorder(&lists, &destinations, &relays)?;
    let data = web::Data::new((state.clone(), handle));
    let admin_state = web::Data::new(state.clone());
    // The admin page's windows; the public listener's API keeps its own.
    let admin_limits = web::Data::new(crate::operator::api::limits::Limits::default());
    let admin = !state.api_tokens.is_empty();
    let server = HttpServer::new(move || {
        // Pages answer GET and HEAD, like the public listener's.
        let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
        App::new()
            .app_data(data.clone())
            .app_data(admin_state.clone())
            .app_data(admin_limits.clone())
            .wrap(from_fn(security_headers))
            .configure(|cfg| {
                if admin {
                    crate::operator::admin::configure(cfg);
                }
            })
            .route("/static/admin.css", read().to(crate::operator::admin::stylesheet))
            .route("/metrics", web::get().to(scrape))
            .route("/status", read().to(crate::operator::status::status_page))
            .route("/static/style.css", read().to(crate::web::routes::stylesheet))
            .route("/static/status.css", read().to(crate::operator::status::stylesheet))
            // A browser opening the status page asks for it by itself.
            .route("/favicon.ico", read().to(|| async { HttpResponse::NoContent().finish() }))
    })
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
    // The gauge is the process's, and this listener's transport knows the truth: set it from
    // the hold as the scrape renders, so it never shows a stale episode (several servers in one
    // process, as the tests run them, each answer with their own).
    crate::metrics::relay_refusing(state.transport.hold().refusing());
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
            for list in lists {
                for status in [Status::Pending, Status::Confirmed] {
                    subscribers.push((list.clone(), status.as_str(), figures::subscribers(conn, &list, status)?));
                }
            }
            Ok::<_, anyhow::Error>((subscribers, figures::queue_depths(conn)?))
        })
        .await?;
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    {
        for (list, status, count) in subscribers {
            metrics::gauge!(SUBSCRIBERS, "list" => list, "status" => status).set(count as f64);
        }
        for queue in queues {
            metrics::gauge!(QUEUE_DEPTH, "queue" => queue.name).set(queue.depth as f64);
            metrics::gauge!(QUEUE_OLDEST, "queue" => queue.name).set(queue.oldest_age(now).unwrap_or(0) as f64);
        }
    }
    Ok(())
}
