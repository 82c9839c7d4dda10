//! One function per subcommand. Each returns `anyhow::Result`; `main` turns an error into one
//! line on stderr (with its cause chain) and exit code 1.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::app::{self, Application};
use crate::config::{Config, SmtpSecurity};
use crate::domain::EmailAddress;
use crate::mail::{self, Delivered, SendError, Transport};
use crate::operator::export::{ExportRequest, Format, StatusFilter};
use crate::operator::remove::ReasonArg;
use crate::operator::{self, Beside};
use crate::secrets;
use crate::telemetry;
use crate::webhooks;

/// `signupd serve`: start, tell systemd we are ready, serve until SIGTERM or SIGINT.
pub async fn serve(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    telemetry::init(config.server.log_format);
    // Before anything answers: a SIGTERM right after the first answer must stop us cleanly,
    // not kill us with the signal's default action.
    let shutdown = shutdown_signal()?;
    let application = Application::build(config, config_path).await?;
    let listen = application.state().config.server.listen;
    // `metrics_port` only when `server.metrics_listen` is set (port 0 picks a free one).
    tracing::info!(
        address = %listen.ip(),
        port = application.port(),
        metrics_port = application.metrics_port(),
        "signupd is listening"
    );
    // Readiness after migrations and bind; Ok when not run by systemd.
    if let Err(error) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        tracing::warn!(error = %error, "could not notify systemd of readiness");
    }
    application.run_until_stopped(shutdown).await?;
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    tracing::info!("signupd stopped");
    Ok(())
}

/// `signupd check-config`: validate and print the effective configuration, secrets redacted.
pub fn check_config(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    // Webhook secrets are files: read them too, so a bad one is found before `serve` starts.
    let credentials_dir = secrets::credentials_dir(config_path);
    webhooks::load_endpoints(&config, credentials_dir.as_deref())?;
    crate::presentation::Stylesheets::load(&config)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "# configuration is valid; effective values (secrets redacted):")?;
    out.write_all(config.to_redacted_toml().as_bytes())?;
    Ok(())
}

/// `signupd migrate`: apply pending migrations and exit.
pub async fn migrate(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    telemetry::init(config.server.log_format);
    let path = app::prepare_database_file(&config).await?;
    let writer = app::start_writer(path).await?;
    let applied = writer.migrations_applied();
    writer.close().await?;
    writeln!(std::io::stdout(), "applied {applied} migration(s); schema version {}", crate::storage::LATEST_VERSION)?;
    Ok(())
}

/// `signupd gen-secret`: print a new random secret.
pub fn gen_secret() -> anyhow::Result<()> {
    writeln!(std::io::stdout(), "{}", secrets::generate_secret_text()?)?;
    Ok(())
}

/// Opens the database beside a (possibly) running server, then runs `work` off the async
/// executor: the operator commands' one way in.
async fn beside<T: Send + 'static>(
    config_path: Option<&Path>,
    work: impl FnOnce(&Beside) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let config = load_config(config_path)?;
    let credentials_dir = secrets::credentials_dir(config_path);
    tokio::task::spawn_blocking(move || work(&Beside::open(config, credentials_dir)?))
        .await
        .context("the command was cancelled")?
}

/// `signupd export`: subscribers to stdout or a new 0600 file.
pub async fn export(
    config_path: Option<&Path>,
    list: Option<String>,
    status: StatusFilter,
    format: Format,
    since: Option<&str>,
    output: Option<PathBuf>,
) -> anyhow::Result<()> {
    // A bad --since is a runtime error (exit 1) naming the flag, like every other bad value.
    let since =
        since.map(operator::export::parse_since).transpose().map_err(|error| anyhow::anyhow!("--since: {error}"))?;
    let request = ExportRequest { list, status, format, since, output };
    let written = beside(config_path, move |beside| {
        let mut stdout = std::io::stdout().lock();
        operator::export::run(beside, &request, &mut stdout)
    })
    .await?;
    // The count goes to stderr, so stdout stays a clean export.
    writeln!(std::io::stderr(), "exported {written} record(s)")?;
    Ok(())
}

/// `signupd remove EMAIL`: an erasure request.
pub async fn remove(
    config_path: Option<&Path>,
    email: &str,
    list: Option<&str>,
    reason: Option<ReasonArg>,
) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    let credentials_dir = secrets::credentials_dir(config_path);
    let beside =
        tokio::task::spawn_blocking(move || Beside::open(config, credentials_dir)).await.context("cancelled")??;
    let mut out = Vec::new();
    operator::remove::run(&beside, email, list, reason, &mut out).await?;
    std::io::stdout().write_all(&out)?;
    Ok(())
}

/// `signupd stats [--json]`.
pub async fn stats(config_path: Option<&Path>, json: bool) -> anyhow::Result<()> {
    beside(config_path, move |beside| operator::stats::run(beside, json, &mut std::io::stdout().lock())).await
}

/// `signupd backup DEST [--force]`.
pub async fn backup(config_path: Option<&Path>, dest: &Path, force: bool) -> anyhow::Result<()> {
    let dest = dest.to_owned();
    beside(config_path, move |beside| operator::backup::run(beside, &dest, force, &mut std::io::stdout().lock())).await
}

/// `signupd send-test-mail --to ADDR [--list ID]`: one mail through the configured transport,
/// with the outcome in plain words and a hint for the usual mistakes.
pub async fn send_test_mail(config_path: Option<&Path>, to: &str, list: Option<&str>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    let to = EmailAddress::parse(to).map_err(|error| anyhow::anyhow!("--to: {error}"))?;
    let list = match list {
        Some(id) => config.list(id).ok_or_else(|| anyhow::anyhow!("--list: no list with id {id:?}"))?,
        None => config.lists.first().ok_or_else(|| anyhow::anyhow!("no list configured"))?,
    };
    let credentials_dir = secrets::credentials_dir(config_path);
    let transport = Transport::from_config(&config.mail, credentials_dir.as_deref())?;
    let message = mail::message::test_mail(&config, list, to.as_ref())?;
    match transport.send(message).await {
        Ok(Delivered::Smtp { code }) => {
            writeln!(std::io::stdout(), "sent: the SMTP server accepted the mail for {} ({code})", to.masked())?;
            Ok(())
        }
        Ok(Delivered::File { path }) => {
            writeln!(std::io::stdout(), "written to {} (mail.transport = \"file\")", path.display())?;
            Ok(())
        }
        Err(error) => Err(anyhow::anyhow!("{}{}", error.detail, smtp_hint(&config, &error))),
    }
}

/// `signupd send-test-webhook [--name NAME]`: a signed `test` event to each endpoint, with each
/// answer (status and time) or the failure and a hint. Exit 1 if any endpoint failed.
pub async fn send_test_webhook(config_path: Option<&Path>, name: Option<&str>) -> anyhow::Result<()> {
    let config = load_config(config_path)?;
    let credentials_dir = secrets::credentials_dir(config_path);
    let endpoints = webhooks::load_endpoints(&config, credentials_dir.as_deref())?;
    let chosen: Vec<_> =
        endpoints.iter().filter(|endpoint| name.is_none_or(|name| endpoint.config.name == name)).collect();
    match (name, chosen.is_empty()) {
        (Some(name), true) => anyhow::bail!("--name: no webhook named {name:?} is configured"),
        (None, true) => anyhow::bail!("no [[webhooks]] endpoint is configured"),
        _ => {}
    }
    let client = webhooks::client()?;
    let timeout = config.mail.webhook_timeout;
    let mut failed = 0;
    let mut out = std::io::stdout().lock();
    for endpoint in chosen {
        let now = crate::clock::Clock::now(&crate::clock::SystemClock);
        let event_id = format!("evt_test_{}", uuid::Uuid::now_v7().simple());
        let body = serde_json::json!({ "type": "test", "timestamp": operator::rfc3339(now), "data": {} }).to_string();
        let started = std::time::Instant::now();
        let answer = webhooks::send(&client, endpoint, &event_id, &body, now, timeout).await;
        let elapsed = started.elapsed().as_millis();
        let name = &endpoint.config.name;
        match answer {
            Ok(status) if status.is_success() => writeln!(out, "{name}: {} in {elapsed} ms", status.as_u16())?,
            Ok(status) => {
                failed += 1;
                let hint = if status.is_redirection() {
                    "signupd does not follow redirects: configure the final URL"
                } else if matches!(status.as_u16(), 401 | 403) {
                    "the receiver refused the signature: check that it uses the same whsec_ secret"
                } else {
                    "the receiver answered, but not with 2xx: check its logs"
                };
                writeln!(out, "{name}: {} in {elapsed} ms (hint: {hint})", status.as_u16())?;
            }
            Err(error) => {
                failed += 1;
                let detail = webhooks::worker::describe(&error, timeout);
                let hint = if detail.contains("refused") {
                    "is the receiver listening on that host and port?"
                } else if detail.contains("within") {
                    "the receiver is too slow: it should answer at once and work afterwards"
                } else {
                    "check the host name (DNS) and, for https, the certificate"
                };
                writeln!(out, "{name}: failed: {detail} (hint: {hint})")?;
            }
        }
    }
    anyhow::ensure!(failed == 0, "{failed} webhook endpoint(s) did not accept the test event");
    Ok(())
}

/// What usually causes this failure, in the operator's terms.
fn smtp_hint(config: &Config, error: &SendError) -> String {
    let smtp = &config.mail.smtp;
    let hint = match (error.code, smtp.port, smtp.security) {
        (Some(535 | 534 | 530), _, _) => {
            "authentication was refused: check mail.smtp.username and the password".to_owned()
        }
        (Some(code), _, _) if code >= 500 => {
            "the server refused the mail for good: check the sender address (lists[].from) is allowed on this relay"
                .to_owned()
        }
        (Some(_), _, _) => "a temporary refusal: try again later; signupd retries such failures by itself".to_owned(),
        (None, 465, SmtpSecurity::StartTls) => "port 465 usually needs security = \"tls\"".to_owned(),
        (None, 587 | 25, SmtpSecurity::Tls) => format!("port {} usually needs security = \"starttls\"", smtp.port),
        (None, _, _) => {
            format!("check that {}:{} is reachable and that mail.smtp.security matches the port", smtp.host, smtp.port)
        }
    };
    format!(" (hint: {hint})")
}

fn load_config(path: Option<&Path>) -> anyhow::Result<Config> {
    Ok(Config::load(path)?)
}

/// Installs the SIGTERM (systemd stop) and SIGINT (Ctrl-C) handlers now; the returned future
/// completes on the first of them.
pub fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("received SIGINT"),
            _ = terminate.recv() => tracing::info!("received SIGTERM"),
        }
    })
}
