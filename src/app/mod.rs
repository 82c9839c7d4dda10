//! The assembly room: the command line ([`cli`], one function per subcommand in [`commands`]),
//! the start-up checks that write nothing ([`mod@preflight`]), logging ([`telemetry`]), the hourly
//! cleanup ([`scheduler`]), the container's readiness probe ([`healthcheck`]), and the server
//! itself, put together below (its HTTP server from actix's parts in `http_server`, the metrics
//! listener in `metrics_server`). It imports every room and no room imports it.
//!
//! Assembly: from a checked [`Config`] to a bound, running server.
//!
//! [`Application::build`] does every start-up step in an order that writes nothing until all
//! checks that can fail without writing have passed ([`mod@crate::app::preflight`]: the files and
//! credentials the configuration names, the mail transport, the webhooks — the same checks
//! `check-config` runs; then the data directory usable and the database not newer than this
//! binary), then generates missing secrets, migrates, and binds.
//! Binding before serving lets tests use port 0 and read [`Application::port`] without sleeping.
//! [`Application::run_until_stopped`] serves until the given shutdown future completes, then
//! finishes in-flight requests. Meanwhile `SIGHUP` re-reads `signup.blocked_domains_file`
//! (`reload_on_hangup`); the handler is installed by `build`, so a `SIGHUP` that arrives once
//! the server is bound never takes the signal's default action (ending the process).

pub mod cli;
pub mod commands;
pub mod healthcheck;
pub mod preflight;
pub mod scheduler;
pub mod telemetry;

mod http_server;
mod metrics_server;
mod worker_runtime;

use worker_runtime::{Priority, WorkerRuntime};

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use anyhow::Context;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::app::preflight::{Checked, preflight};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::config::secrets;
use crate::config::tokens::Keyring;
use crate::door::ratelimit::RateLimiter;
use crate::door::signup;
use crate::operator::status;
use crate::outbound::mail;
use crate::outbound::mail::reference::ReferenceKey;
use crate::outbound::webhooks::{self, Webhooks};
use crate::storage::{self, Db};
use crate::web::state::AppState;

/// How long a stopping server waits for in-flight requests. With the workers' own bounds (a
/// claimed mail batch, one intake chunk) a stop takes well under 10 s whatever is queued.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long a connection that signupd closes (after a `408`, or an answer sent before its body
/// was read) waits for the client to close its side before it is dropped: a slow client holds
/// a connection for at most `server.request_timeout` plus this.
const DISCONNECT_GRACE: Duration = Duration::from_secs(1);

/// What differs between production and a test harness.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub clock: Arc<dyn Clock>,
    /// Where credentials are looked for: [`secrets::credentials_dir`].
    pub credentials_dir: Option<PathBuf>,
    /// Run the intake worker, the mail workers, one webhook worker per endpoint, the status
    /// page's rollup worker and the cleanup scheduler in the background.
    /// Tests turn this off and drive the queues with `try_execute_task`, so they never race them.
    pub background_workers: bool,
}

impl BuildOptions {
    /// The system clock, and the credentials directory of the process (`$CREDENTIALS_DIRECTORY`)
    /// or of the configuration file `config_file` (`credentials/` beside it).
    pub fn from_env(config_file: Option<&Path>) -> Self {
        Self {
            clock: Arc::new(SystemClock),
            credentials_dir: secrets::credentials_dir(config_file),
            background_workers: true,
        }
    }
}

/// A bound, not yet serving, signupd.
pub struct Application {
    port: u16,
    server: Server,
    /// The metrics listener (`server.metrics_listen`) and its bound port, when configured.
    metrics: Option<(Server, u16)>,
    state: AppState,
    background_workers: bool,
    /// SIGHUP, listened to from `build` on: it reloads the blocked domains.
    hangup: Signal,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application").field("port", &self.port).finish_non_exhaustive()
    }
}

impl Application {
    /// Builds `config`, loaded from `config_file` (which locates the credentials directory).
    pub async fn build(config: Config, config_file: Option<&Path>) -> anyhow::Result<Self> {
        Self::build_with(config, BuildOptions::from_env(config_file)).await
    }

    pub async fn build_with(config: Config, options: BuildOptions) -> anyhow::Result<Self> {
        let background_workers = options.background_workers;
        let state = prepare(config, options).await?;
        let listen = state.config.server.listen;
        let listener =
            TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen} (server.listen)"))?;
        let port = listener.local_addr().context("cannot read the bound address")?.port();
        let server = http_server::server(listener, state.clone(), SHUTDOWN_GRACE, DISCONNECT_GRACE)?;
        let metrics = metrics_server::server(&state)?;
        let hangup = signal(SignalKind::hangup()).context("cannot handle SIGHUP")?;
        Ok(Self { port, server, metrics, state, background_workers, hangup })
    }

    /// The bound port (useful when `server.listen` asked for port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The bound metrics port, when `server.metrics_listen` is set.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|(_, port)| *port)
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` completes, then stops accepting, finishes in-flight requests,
    /// stops the background workers and closes the database. Each part reports how it ended.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let (stop_workers, workers_stopped) = tokio::sync::watch::channel(false);
        let until_stopped = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        let mut workers = Vec::new();
        let runtimes = if self.background_workers {
            let sinks = self.state.webhooks.endpoints().len() + self.state.webhooks.destinations().len();
            // A thread per core even for one sink: its HTTP connections' tasks run beside it.
            let delivery_threads = if sinks == 0 { 1 } else { usize::MAX };
            Some((
                WorkerRuntime::start("signupd-mail", mail::WORKERS, Priority::Normal)?,
                WorkerRuntime::start("signupd-deliver", delivery_threads, Priority::Background)?,
            ))
        } else {
            None
        };
        let reloads = reload_on_hangup(self.state.clone(), self.hangup, until_stopped(workers_stopped.clone()));
        workers.push(("SIGHUP listener", tokio::spawn(reloads)));
        if let Some((mail_runtime, delivery_runtime)) = &runtimes {
            let intake = signup::run_worker(self.state.intake(), until_stopped(workers_stopped.clone()));
            workers.push(("intake worker", tokio::spawn(intake)));
            for _ in 0..mail::WORKERS {
                let mail = mail::run_worker(self.state.mailer(), until_stopped(workers_stopped.clone()));
                workers.push(("mail worker", mail_runtime.spawn(mail)));
            }
            let rollups = status::run_worker(&self.state, until_stopped(workers_stopped.clone()));
            workers.push(("rollup worker", tokio::spawn(rollups)));
            // Off the HTTP thread, at a lower priority: a wave of confirmations queues as many
            // events as it confirms, and handing them on must not slow the confirm pages.
            for endpoint in self.state.webhooks.endpoints() {
                let deliverer = self.state.deliverer(endpoint.clone());
                let deliveries = webhooks::worker::run_worker(deliverer, until_stopped(workers_stopped.clone()));
                workers.push(("webhook worker", delivery_runtime.spawn(deliveries)));
            }
            for destination in self.state.webhooks.destinations() {
                let deliverer = self.state.destination_deliverer(destination.clone());
                let deliveries = webhooks::worker::run_worker(deliverer, until_stopped(workers_stopped.clone()));
                workers.push(("destination worker", delivery_runtime.spawn(deliveries)));
            }
        }
        let mut scheduler = if self.background_workers {
            if let Err(error) = scheduler::run_cleanup(&self.state).await {
                tracing::error!(error = format!("{error:#}"), "start-up cleanup failed");
            }
            Some(scheduler::start(self.state.clone()).await?)
        } else {
            None
        };

        // The metrics listener runs on its own and stops with the rest.
        let metrics = self.metrics.map(|(server, _)| {
            let handle = server.handle();
            (tokio::spawn(server), handle)
        });
        let handle = self.server.handle();
        let server = self.server;
        tokio::pin!(server, shutdown);
        let served = tokio::select! {
            result = &mut server => result.context("the HTTP server failed"),
            () = &mut shutdown => {
                tracing::info!("shutting down: finishing in-flight requests");
                // The workers wind down beside the server: each finishes the step it is in
                // (an intake chunk, a claimed mail batch) and leaves the rest queued in SQLite.
                let _ = stop_workers.send(true);
                // The server future must keep being polled while it stops, or the stop never
                // completes.
                let (stopped, ()) = tokio::join!(server, handle.stop(true));
                stopped.context("the HTTP server failed while stopping")
            }
        };

        if let Some(scheduler) = scheduler.as_mut() {
            scheduler.shutdown().await.context("cannot stop the scheduler")?;
        }
        let _ = stop_workers.send(true);
        if let Some((metrics, handle)) = metrics {
            handle.stop(true).await;
            let _ = metrics.await;
        }
        for (name, worker) in workers {
            worker.await.with_context(|| format!("the {name} panicked"))?;
            tracing::info!(worker = name, "stopped");
        }
        drop(runtimes);
        // The counts of the last tick, which are in memory only, before the database closes.
        if self.background_workers
            && let Err(error) = status::record_rollups(&self.state).await
        {
            tracing::warn!(error = format!("{error:#}"), "cannot store the status page's last counts");
        }
        // Nothing reads or writes any more. Readers first, then the writer (which checkpoints
        // with TRUNCATE, see `storage::writer`): the last connection to close removes the `-wal`
        // and `-shm` files, so a clean stop leaves the database as one file.
        self.state.db.close();
        if let Err(error) = self.state.writer.close().await {
            tracing::warn!(error = format!("{error:#}"), "cannot close the database cleanly");
        }
        served
    }
}

/// Start-up without binding: checks, secrets, database. Shared by `serve` and tests.
pub async fn prepare(config: Config, options: BuildOptions) -> anyhow::Result<AppState> {
    // Every file and credential the configuration names is read before anything is created:
    // the very checks `check-config` runs.
    let Checked {
        stylesheets,
        domains,
        secrets: plan,
        transport,
        webhooks: endpoints,
        destinations,
        relays,
        api_tokens,
    } = preflight(&config, options.credentials_dir.as_deref())?;
    let path = storage::prepare_database_file(&config).await?;
    let secrets =
        tokio::task::spawn_blocking(move || plan.materialize()).await.context("secret generation was cancelled")??;
    let writer = storage::start_writer(path.clone(), config.storage.cache_mib).await?;
    writer
        .execute(signup::RecordConsentTexts::of(&config, options.clock.now()))
        .await
        .context("cannot record the lists' consent texts")?;
    let db = Db::open_readers(&path)?;
    let config = Arc::new(config);
    let limiter = Arc::new(RateLimiter::new(&config.signup, &secrets.hash_key));
    // Held to the rules of `[[webhooks]]`: a redirect is a refusal, not a new destination.
    let http_client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .context("cannot build the HTTP client for the alert webhook")?;
    let keyring = Arc::new(Keyring::new(&secrets.token_secret, &secrets.verify_only));
    let webhooks = Webhooks::with_sinks(&config, endpoints, destinations, keyring.clone())?;
    let references = Arc::new(ReferenceKey::derive(&secrets.hash_key));
    Ok(AppState {
        config,
        db,
        writer,
        keyring,
        webhooks,
        secrets: Arc::new(secrets),
        clock: options.clock,
        limiter,
        transport,
        http_client,
        stylesheets: Arc::new(stylesheets),
        domains,
        surge: Default::default(),
        relays: Arc::new(relays),
        references,
        api_tokens: Arc::new(api_tokens),
    })
}

/// Re-reads the blocked domains file on every SIGHUP until `shutdown`. A file that cannot be
/// read, or has a bad line, is logged and the list in use stays: a typo must not unblock
/// everything, nor stop a running server.
async fn reload_on_hangup(state: AppState, mut hangup: Signal, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            received = hangup.recv() => if received.is_none() { return },
            () = &mut shutdown => return,
        }
        match state.domains.reload().await {
            Ok(Some(domains)) => tracing::info!(domains, "SIGHUP: reloaded signup.blocked_domains_file"),
            Ok(None) => tracing::info!("SIGHUP: no signup.blocked_domains_file to reload"),
            Err(error) => tracing::error!(
                error = format!("{error:#}"),
                domains = state.domains.blocked_count(),
                "SIGHUP: cannot reload signup.blocked_domains_file; the previous list stays"
            ),
        }
    }
}
