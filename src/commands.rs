//! One function per subcommand. Each returns `anyhow::Result`; `main` turns an error into one
//! line on stderr (with its cause chain) and exit code 1.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::app::{self, Application};
use crate::config::Config;
use crate::secrets;
use crate::telemetry;

/// `signupd serve`: start, tell systemd we are ready, serve until SIGTERM or SIGINT.
pub async fn serve(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    telemetry::init(config.server.log_format);
    let application = Application::build(config).await?;
    let listen = application.state().config.server.listen;
    tracing::info!(address = %listen.ip(), port = application.port(), "signupd is listening");
    // Readiness after migrations and bind (SPEC §9); Ok when not run by systemd.
    if let Err(error) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        tracing::warn!(error = %error, "could not notify systemd of readiness");
    }
    application.run_until_stopped(shutdown_signal()).await?;
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    tracing::info!("signupd stopped");
    Ok(())
}

/// `signupd check-config`: validate and print the effective configuration, secrets redacted.
pub fn check_config(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "# configuration is valid; effective values (secrets redacted):")?;
    out.write_all(config.to_redacted_toml().as_bytes())?;
    Ok(())
}

/// `signupd migrate`: apply pending migrations and exit.
pub async fn migrate(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    telemetry::init(config.server.log_format);
    let db = app::open_database(&config).await?;
    let applied = tokio::task::spawn_blocking(move || db.migrate())
        .await
        .context("migration was cancelled")??;
    writeln!(
        std::io::stdout(),
        "applied {applied} migration(s); schema version {}",
        crate::storage::LATEST_VERSION
    )?;
    Ok(())
}

/// `signupd gen-secret`: print a new random secret.
pub fn gen_secret() -> anyhow::Result<()> {
    writeln!(std::io::stdout(), "{}", secrets::generate_secret_text()?)?;
    Ok(())
}

fn load_config(path: Option<&Path>) -> anyhow::Result<Config> {
    Ok(Config::load(path)?)
}

/// Completes on SIGTERM (systemd stop) or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = interrupt => tracing::info!("received SIGINT"),
        () = terminate => tracing::info!("received SIGTERM"),
    }
}
