//! The visitors' HTTP server, assembled from its parts: actix-server accepts, each stream is
//! wrapped in [`Connection`] (which answers what the HTTP layer refuses before any route, as
//! signupd answers everything else), and actix-http's HTTP/1.1 service runs the application.
//!
//! This is what actix-web's `HttpServer::listen` builds, less what signupd does not use (HTTP/2,
//! TLS, the `Host` fallback of `AppConfig`, whose default stands: no route reads the connection's
//! host), plus the wrapped stream, for which `HttpServer` has no place.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_http::HttpService;
use actix_server::Server;
use actix_service::{ServiceFactoryExt, fn_service, map_config};
use actix_web::dev::AppConfig;
use actix_web::middleware::from_fn;
use actix_web::rt::net::TcpStream;
use actix_web::{App, web};
use anyhow::Context;

use crate::web::middleware::connection::Connection;
use crate::web::middleware::{access_log, security_headers};
use crate::web::routes;
use crate::web::state::AppState;

/// Serves the application on `listener`. `shutdown_grace`: how long a stopping server waits
/// for in-flight requests; `disconnect_grace`: how long a connection signupd closes waits for
/// the client to close its side.
pub(super) fn server(
    listener: TcpListener,
    state: AppState,
    shutdown_grace: Duration,
    disconnect_grace: Duration,
) -> anyhow::Result<Server> {
    let local_addr = listener.local_addr().context("cannot read the bound address")?;
    let request_timeout = state.config.server.request_timeout;
    let api = !state.api_tokens.is_empty();
    let data = web::Data::new(state);
    // One set of windows for every worker thread.
    let limits = web::Data::new(crate::operator::api::limits::Limits::default());
    let builder = Server::build();
    let stopping = builder.graceful_shutdown_signal();
    let server = builder
        // Signals are handled by the caller's shutdown future, not by actix.
        .disable_signals()
        .shutdown_timeout(shutdown_grace.as_secs())
        .listen("signupd", listener, move || {
            let application = App::new()
                .app_data(data.clone())
                .app_data(limits.clone())
                // The last `wrap` runs first: the access log sees the final status and headers,
                // and the security headers apply to the 408 of a body that came too late.
                .wrap(from_fn(routes::form::body_deadline))
                .wrap(from_fn(security_headers))
                .wrap(from_fn(access_log))
                .configure(routes::configure)
                .configure(|cfg| crate::operator::api::configure(cfg, api));
            let stopping = stopping.clone();
            let http = HttpService::build()
                // Kept-alive connections close as the server stops, as under `HttpServer`.
                .graceful_shutdown_signal(move || {
                    let stopping = stopping.clone();
                    async move { stopping.notified().await }
                })
                // `server.request_timeout` for the head (actix answers 408 and closes); the
                // body's deadline is `routes::form::body_deadline`, since actix stops its timer
                // once the head is in.
                .client_request_timeout(request_timeout)
                .client_disconnect_timeout(disconnect_grace)
                .local_addr(local_addr)
                .h1(map_config(application, |()| AppConfig::default()));
            fn_service(accepted).and_then(http)
        })
        .context("cannot serve on the bound socket")?
        .run();
    Ok(server)
}

/// An accepted stream, ready for the HTTP service: wrapped, with its peer's address and without
/// Nagle's delay (small answers go out at once, as `HttpServer` sets it).
async fn accepted(
    stream: TcpStream,
) -> Result<(Connection<TcpStream>, Option<SocketAddr>), actix_http::error::DispatchError> {
    let peer = stream.peer_addr().ok();
    // A socket that cannot take the option still serves, only with Nagle's delay.
    let _ = stream.set_nodelay(true);
    Ok((Connection::new(stream), peer))
}
