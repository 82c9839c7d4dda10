//! The `signupd` binary: parse the command line, run one command, map the outcome to an exit
//! code. All behaviour lives in the library.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use signupd::app::cli::{Cli, Command};
use signupd::app::commands;
use signupd::config::ConfigSource;
use signupd::operator::import::ImportRequest;

#[actix_web::main]
async fn main() -> ExitCode {
    // Postfix's pipe(8) gives up a report on any exit but 0 and 75, and a bounce is never bounced
    // again: for `ingest-mail`, a mistake in its command line or a crash must be 75 too.
    let ingesting = std::env::args_os().any(|arg| arg == "ingest-mail");
    if ingesting {
        std::panic::set_hook(Box::new(|info| {
            let _ =
                writeln!(std::io::stderr(), "signupd ingest-mail: cannot record the report, try again later: {info}");
            std::process::exit(i32::from(signupd::operator::ingest_mail::EX_TEMPFAIL));
        }));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if ingesting && error.use_stderr() => {
            let _ =
                writeln!(std::io::stderr(), "signupd ingest-mail: cannot record the report, try again later: {error}");
            return ExitCode::from(signupd::operator::ingest_mail::EX_TEMPFAIL);
        }
        Err(error) => error.exit(),
    };
    let config = &ConfigSource::resolve(cli.config, std::env::var_os(signupd::config::source::ENVIRONMENT));
    if let Command::IngestMail = cli.command {
        return ingest_mail(config).await;
    }
    let result = match cli.command {
        Command::Serve => commands::serve(config).await,
        Command::CheckConfig => commands::check_config(config),
        Command::Migrate => commands::migrate(config).await,
        Command::GenSecret => commands::gen_secret(),
        Command::Snippet { lists, generator, return_to, lang } => {
            commands::snippet(config, &signupd::operator::snippet::SnippetRequest { lists, generator, return_to, lang })
        }
        Command::SendTestMail { to, list } => commands::send_test_mail(config, &to, list.as_deref()).await,
        Command::Export { list, status, format, since, output } => {
            commands::export(config, list, status, format, since.as_deref(), output).await
        }
        Command::Remove { email, list, reason } => commands::remove(config, &email, list.as_deref(), reason).await,
        Command::Import { file, list, format, consent_text, consent_version, dry_run } => {
            let request = ImportRequest { file, list, format, consent_text, consent_version, dry_run };
            commands::import(config, request).await
        }
        Command::Stats { json } => commands::stats(config, json).await,
        Command::Lookup { email, json } => commands::lookup(config, &email, json).await,
        Command::Audit { since, json } => commands::audit(config, since.as_deref(), json).await,
        Command::Backup { dest, force } => commands::backup(config, &dest, force).await,
        Command::SendTestWebhook { name } => commands::send_test_webhook(config, name.as_deref()).await,
        Command::Backfill { destination, list, dry_run } => {
            let request = signupd::operator::backfill::BackfillRequest { destination, list, dry_run };
            commands::backfill(config, request).await
        }
        Command::SendTestDestination { name } => commands::send_test_destination(config, name.as_deref()).await,
        Command::Healthcheck => commands::healthcheck(config).await,
        Command::Doctor { json } => commands::doctor(config, json).await,
        Command::IngestMail => unreachable!("answered above"),
    };
    // Queued log lines first, so an error below is the last line, as it happened.
    signupd::app::telemetry::flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.downcast_ref::<signupd::operator::UsageError>().is_some() => {
            let _ = writeln!(std::io::stderr(), "signupd: usage error: {error}");
            ExitCode::from(2)
        }
        Err(error) => {
            // `{:#}` prints the whole cause chain on one line: "what failed: why: root cause".
            let _ = writeln!(std::io::stderr(), "signupd: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `ingest-mail` answers Postfix's pipe(8): 0 handled or ignored, 75 (EX_TEMPFAIL) for any
/// failure, so the report stays queued until signupd can record it.
/// Its outcome is the first line, the one Postfix's log shows; which configuration it read follows.
async fn ingest_mail(config: &ConfigSource) -> ExitCode {
    let result = commands::ingest_mail(config).await;
    signupd::app::telemetry::flush();
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "signupd ingest-mail: cannot record the report, try again later: {error:#}"
            );
            ExitCode::from(signupd::operator::ingest_mail::EX_TEMPFAIL)
        }
    };
    let _ = writeln!(std::io::stderr(), "signupd: {config}");
    code
}
