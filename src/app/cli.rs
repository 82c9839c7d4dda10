//! The command line (`docs/operations.md`), parsed by clap. Usage errors exit 2 (clap's own handling);
//! runtime errors exit 1 with one line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::operator::export::{Format, StatusFilter};
use crate::operator::import_file::ImportFormat;
use crate::operator::remove::ReasonArg;
use crate::operator::snippet::Generator;

/// Where credentials are looked for, in `--help`.
const CREDENTIALS_HELP: &str = "\
Credentials (the token secret, the hash key, the SMTP password, webhook secrets) not named in the \
configuration are looked for in $CREDENTIALS_DIRECTORY when it is set (systemd's LoadCredential=), \
else in the directory credentials/ beside the --config file when it exists (on a Debian install: \
/etc/signupd/credentials/). There, smtp_password and webhook_<name> may also be kept as \
smtp/password and webhook/<name>.";

#[derive(Debug, Parser)]
#[command(
    name = "signupd",
    version,
    about = "A self-contained double opt-in signup service",
    after_long_help = CREDENTIALS_HELP,
    propagate_version = true
)]
pub struct Cli {
    /// Configuration file (TOML); without it, $SIGNUPD_CONFIG, else /etc/signupd/signupd.toml
    /// when it exists, else the zero-setup demo. Each command says on stderr which it read.
    /// Credentials are looked for in $CREDENTIALS_DIRECTORY, else in credentials/ beside this file.
    // Not clap's `env`: which of the two named the file is part of what a command says
    // (`crate::config::source`).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate, then serve HTTP, run the mail worker and the scheduler.
    Serve,
    /// Run the checks `serve` runs before it writes anything (files, credentials, mail, webhooks),
    /// then print the configuration with secrets redacted.
    CheckConfig,
    /// Apply database migrations and exit.
    Migrate,
    /// Print a new random secret (for token_secret_file or hash_key_file).
    GenSecret,
    /// Print a ready signup form for your own site, made from the configuration: the lists'
    /// fields, consent text, honeypot and return_to, as plain HTML without JavaScript or in a
    /// static site generator's syntax. Reads the configuration only; writes nothing.
    ///
    /// With several lists, a checkbox per list, and each field name once, as the first list that
    /// declares it describes it. A hidden field's value is the embedding page's: a parameter of
    /// the partial, include, component or macro (in plain HTML, an empty value to fill in).
    Snippet {
        /// The list the form signs up for; repeat it to offer a choice of several.
        #[arg(long = "list", value_name = "ID", required = true)]
        lists: Vec<String>,
        /// The syntax to print the form in.
        #[arg(long = "for", value_enum, value_name = "GENERATOR", default_value_t = Generator::Html)]
        generator: Generator,
        /// Where the browser goes after the signup (with signup=check-inbox added): an absolute
        /// http(s) URL whose origin is in the allowed_origins of every list named.
        #[arg(long, value_name = "URL")]
        return_to: Option<String>,
        /// The page's language (one of the first list's `languages`): the form's words in it,
        /// and a hidden `lang` field, so the pages and mails of the signup speak it.
        #[arg(long, value_name = "CODE")]
        lang: Option<String>,
    },
    /// Write subscribers out (streamed, one consistent snapshot), while `serve` keeps running.
    ///
    /// One record per subscriber: email, list, status, created_at, confirmed_at, confirm_method,
    /// consent_version, consent_text, and for confirmed rows an unsubscribe_url (a one-click
    /// link for your own mail). In CSV, a cell that starts with =, +, -, @, a tab or a carriage
    /// return gets a leading ' so a spreadsheet shows it instead of running it as a formula.
    Export {
        /// Only this list (default: every list).
        #[arg(long, value_name = "ID")]
        list: Option<String>,
        #[arg(long, value_enum, default_value_t = StatusFilter::Confirmed)]
        status: StatusFilter,
        #[arg(long, value_enum, default_value_t = Format::Csv)]
        format: Format,
        /// Only rows created at or after this time: RFC 3339 or a date (2026-11-01, UTC).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Write to this new file (mode 0600; an existing file is refused) instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Remove an address (an erasure request), as the manage page would: every table at once,
    /// only the suppression hash kept.
    Remove {
        /// The address.
        email: String,
        /// Only this list (default: every list).
        #[arg(long, value_name = "ID")]
        list: Option<String>,
        /// The suppression to record (default: unsubscribed if confirmed, not_me if pending).
        #[arg(long, value_enum)]
        reason: Option<ReasonArg>,
    },
    /// Everything held about an address (a subject access request, GDPR Art. 15): each list's
    /// row with the consent text it agreed to, queued mail and events, suppressions, the mail
    /// count. Writes nothing but its audit log entry.
    Lookup {
        /// The address.
        email: String,
        /// One JSON document (the Art. 20 file) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The audit log: every operator action, oldest first, with the address's keyed hash, never
    /// the address.
    Audit {
        /// Only entries at or after this time: RFC 3339 or a date (2026-11-01, UTC).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read one bounce (RFC 3464 delivery status notification) or feedback report (RFC 5965)
    /// about a mail signupd sent from standard input, as a Postfix pipe transport delivers it.
    ///
    /// Acts only if it quotes an X-Signupd-Ref this installation sealed: a hard bounce or a
    /// complaint suppresses the address on every list. Exit 0 when handled or ignored, 75
    /// (EX_TEMPFAIL, Postfix tries again later) when it cannot be recorded.
    IngestMail,
    /// Bring an existing list over: each good record of FILE becomes a confirmed subscriber of
    /// the list (confirm_method "import": what you assert, not a confirmation signupd saw).
    ///
    /// Fields: email (required), confirmed_at (RFC 3339), consent_text, consent_version, source,
    /// tags; other columns are ignored. Nothing is mailed and no webhook fires. Suppressed
    /// addresses and addresses the list has already are skipped, never changed. Each refused
    /// record is reported on stderr with its line number; the counts go to stdout.
    Import {
        /// A CSV file with a header row, or JSON lines (one object per line).
        file: PathBuf,
        /// The list the subscribers are imported into.
        #[arg(long, value_name = "ID")]
        list: String,
        /// The file's format (default: from its extension, .csv or .jsonl/.ndjson).
        #[arg(long, value_enum)]
        format: Option<ImportFormat>,
        /// The consent wording for records without a consent_text (required when the file has
        /// no such column).
        #[arg(long, value_name = "TEXT")]
        consent_text: Option<String>,
        /// The consent version for records without a consent_version (A-Z a-z 0-9 . - _, up to
        /// 64). Without it, each text gets one derived from it: "import-" and the first 12 hex
        /// digits of the text's SHA-256. A version names one text: a record whose text differs
        /// from the one the version already names is refused.
        #[arg(long, value_name = "NAME")]
        consent_version: Option<String>,
        /// Check everything and print the counts an import would give; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Per list and per queue figures: subscribers, suppressions, recent signups and
    /// confirmations, queues, the mail budget, the last cleanup.
    Stats {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Copy the database (SQLite's online backup), checked with PRAGMA integrity_check, 0600.
    Backup {
        /// Where to write the copy.
        dest: PathBuf,
        /// Replace DEST if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Post a signed `test` event to each webhook endpoint and print each answer.
    SendTestWebhook {
        /// Only the endpoint with this name.
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Hand a destination the subscribers already confirmed on its lists (or on --list alone):
    /// one subscriber.confirmed event each, through the same durable, ordered queue as the live
    /// events, which the destination's worker in `serve` delivers. A repeat is harmless (the
    /// sender takes a duplicate as success). Prints the count; audited; works while `serve` runs.
    Backfill {
        /// The destination, by the `name` the configuration gives it.
        #[arg(long, value_name = "NAME")]
        destination: String,
        /// Only this list, one the destination hands on.
        #[arg(long, value_name = "ID")]
        list: Option<String>,
        /// Count the subscribers it would queue; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Make one read-only call to each destination that proves its URL, credential and target,
    /// and print each answer.
    SendTestDestination {
        /// Only the destination with this name.
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Ask the configured listener's /readyz (on loopback when it listens on every address):
    /// exit 0 when it answers 200 within 5 s, else 1 with the reason. For container health
    /// checks; the image has no curl.
    Healthcheck,
    /// Check the deployment and say what to fix: the relay (no mail sent), each list's From
    /// domain in DNS, the public URL and the proxy, the data directory, the secrets and the
    /// database. Exit 0 without problems (warnings allowed), else 1. Writes nothing.
    Doctor {
        /// Print the report as JSON (`checks`, `problems`, `warnings`).
        #[arg(long)]
        json: bool,
    },
    /// Send one mail through the configured transport and report the SMTP result.
    SendTestMail {
        /// Recipient address.
        #[arg(long, value_name = "ADDR")]
        to: String,
        /// The list whose sender and name to use (default: the first list).
        #[arg(long, value_name = "ID")]
        list: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn config_is_accepted_after_the_subcommand() {
        let cli = Cli::try_parse_from(["signupd", "serve", "--config", "x.toml"]).unwrap();
        assert_eq!(cli.config, Some(PathBuf::from("x.toml")));
        assert!(matches!(cli.command, Command::Serve));
    }

    #[test]
    fn help_says_where_credentials_are_looked_for() {
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("$CREDENTIALS_DIRECTORY"), "{help}");
        assert!(help.contains("credentials/ beside"), "{help}");
        let short = Cli::command().render_help().to_string();
        assert!(short.contains("credentials/ beside"), "--config's help, shown by -h too: {short}");
    }

    #[test]
    fn an_unknown_subcommand_is_a_usage_error() {
        let error = Cli::try_parse_from(["signupd", "frobnicate"]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
    }
}
