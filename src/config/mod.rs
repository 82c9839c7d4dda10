//! The configuration room: what the operator decided, checked — this module's [`Config`], the
//! secrets and where credentials are found ([`secrets`]), the tokens derived from those secrets
//! and the hashes stored instead of tokens ([`tokens`]), and how each list's pages and mails look
//! and speak ([`presentation`]). It imports only [`crate::domain`].
//!
//! Configuration (`docs/configuration.md`): built-in defaults, then the TOML file from `--config`,
//! `SIGNUPD_CONFIG` or the default path ([`source`] decides which), then `SIGNUPD_…` environment
//! variables with `__` for nesting. The file may not hold `mail.smtp.password` (secrets never
//! in the file, which is often world-readable): that key is refused even when the environment's password would override
//! it, and the password comes from `mail.smtp.password_file`, `SIGNUPD_MAIL__SMTP__PASSWORD` or
//! the credential `smtp_password`.
//!
//! Loading is two steps, like ripgrep's low-level and high-level arguments: figment merges the
//! sources into a [`RawConfig`] of plain strings, then [`Config::check`] turns every value into
//! the type the rest of signupd uses (durations, URLs, CIDRs, mailboxes, list ids, the cron
//! expression). Every failure names its key (`lists[1].id: duplicate list id "news"`), and all
//! failures are reported at once. Loading never writes anything.
//!
//! Decisions the reference leaves to the code:
//! - With no configuration file, the zero-setup demo list `default` applies. A configuration file
//!   must name its lists: a file without `[[lists]]` is an error, so a production config cannot
//!   silently run the demo list.
//! - `public_url` may carry a path (for a reverse proxy that mounts signupd under a prefix); a
//!   trailing slash is dropped, a query or fragment is an error.
//! - `security = "none"` is accepted only for a loopback SMTP host: it sends passwords and
//!   addresses in clear text.

pub mod presentation;
pub mod secrets;
pub mod source;
pub mod tokens;

mod api_tokens;
mod destinations;
mod list_languages;
pub(crate) mod parse;
mod raw;
mod relays;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use actix_web::http::header::HeaderName;
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use lettre::message::Mailbox;
use url::Url;

use crate::config::presentation::{Language, Locales, Rgb};
use crate::domain::TrustedProxies;
use crate::domain::fields::{self, FieldKind, FieldName, FieldSpec};
use crate::domain::{ListId, Tag};
pub use api_tokens::{ApiTokenConfig, Scope};
pub use destinations::{DestinationConfig, DestinationKind, MAX_SINKS};
pub use raw::RawConfig;
use raw::{RawField, RawList};
pub use relays::{RelayConfig, RelayKind};
pub use source::ConfigSource;

/// The checked configuration. Built once at start and shared read-only through `AppState`.
#[derive(Debug, Clone)]
pub struct Config {
    pub server: ServerConfig,
    pub storage: StorageConfig,
    pub secrets: SecretsConfig,
    pub signup: SignupConfig,
    pub mail: MailConfig,
    pub cleanup: CleanupConfig,
    /// At least one list; ids are unique.
    pub lists: Vec<ListConfig>,
    /// Endpoints that receive subscriber events; names are unique.
    pub webhooks: Vec<WebhookConfig>,
    /// The operator's senders that confirmed subscribers are handed to.
    pub destinations: Vec<DestinationConfig>,
    /// The relays whose bounce and complaint events are heard, each at `/api/relay/<name>`.
    pub relays: Vec<RelayConfig>,
    /// Who may call `/api/v1/` and open the admin page; none: `/api/v1/` is not served.
    pub api_tokens: Vec<ApiTokenConfig>,
    /// The merged sources, kept to print the effective configuration (`check-config`).
    effective: RawConfig,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Base of every link in mail, without a trailing slash.
    pub public_url: Url,
    pub trusted_proxies: TrustedProxies,
    pub client_ip_header: HeaderName,
    pub ipv6_prefix: u8,
    pub max_body_bytes: usize,
    /// A request's head and body must both arrive within it; a slower client gets 408.
    pub request_timeout: Duration,
    pub metrics_listen: Option<SocketAddr>,
    pub log_format: LogFormat,
    /// The operator's stylesheet, served after the built-in one; read at start
    /// ([`crate::web::frame::Stylesheets`]).
    pub custom_css_file: Option<PathBuf>,
    /// The operator's catalogues (`server.locales_dir`), read and checked with the rest.
    pub locales: Locales,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    /// The writer connection's SQLite page cache, in MiB: most of signupd's memory under load.
    pub cache_mib: u32,
}

impl StorageConfig {
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("signupd.sqlite3")
    }
}

#[derive(Debug, Clone)]
pub struct SecretsConfig {
    pub token_secret_file: Option<PathBuf>,
    pub verify_only_secret_files: Vec<PathBuf>,
    pub hash_key_file: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct SignupConfig {
    pub confirm_ttl: Duration,
    pub resend_cooldown: Duration,
    /// Per client (an IPv4 address, an IPv6 `/ipv6_prefix`).
    pub rate_limits: Vec<RateLimitRule>,
    /// Per neighbourhood (an IPv4 `/network_prefix_v4`, an IPv6 `/network_prefix_v6`), on top
    /// of the per-client limits.
    pub network_rate_limits: Vec<RateLimitRule>,
    pub network_prefix_v4: u8,
    pub network_prefix_v6: u8,
    /// Confirmation mails to one address in any 24 hours, across all lists; `None`: no cap.
    pub max_mails_per_address_per_day: Option<u32>,
    /// Accepted signups per list and window past which the operator is alerted and the list is
    /// in surge mode (a person presses to send); `None`: off.
    pub surge_alert: Option<RateLimitRule>,
    /// Complaints about a list's confirmation mail within an hour that put the list in surge
    /// mode for at least an hour, and alert the operator; `None`: off.
    pub complaint_breaker: Option<u32>,
    /// Days a neighbourhood from which someone confirmed keeps its place before the rest in the
    /// mail order; 0: off.
    pub reputation_days: u32,
    /// One domain per line; an address there (or at a subdomain) is refused.
    pub blocked_domains_file: Option<PathBuf>,
    /// Refuse a domain with neither MX nor A/AAAA records.
    pub check_mx: bool,
    /// Name servers for the MX check; empty: the system resolver.
    pub dns_servers: Vec<SocketAddr>,
}

/// At most `max` accepted signups per client network in each fixed `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitRule {
    pub window: Duration,
    pub max: u32,
}

#[derive(Debug, Clone)]
pub struct MailConfig {
    pub transport: MailTransportKind,
    pub file_dir: PathBuf,
    pub max_mails_per_hour: u32,
    /// The most mails that leave at once: the paced budget's bucket (`mail.burst`; 0 in the
    /// file means a minute's share, `max_mails_per_hour / 60`, at least 1).
    pub burst: u32,
    pub retry_base: Duration,
    pub alert_webhook: Option<Url>,
    /// How long a webhook endpoint may take to answer.
    pub webhook_timeout: Duration,
    /// How long an event is retried before it is dropped (and the operator alerted).
    pub webhook_max_age: Duration,
    pub smtp: SmtpConfig,
    /// DKIM signing, for operators who send without a signing relay.
    pub dkim: Option<DkimConfig>,
}

/// One `[[webhooks]]` endpoint (`docs/operations.md`). Its secret is read at start (`crate::outbound::webhooks`).
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Shown in logs and metrics: `a-z`, `0-9` and `-`, like a list id.
    pub name: String,
    /// https, or plain http to a loopback address.
    pub url: Url,
    /// `None`: `$CREDENTIALS_DIRECTORY/webhook_<name>`.
    pub secret_file: Option<PathBuf>,
    pub events: Vec<WebhookEvent>,
    /// Empty: every list.
    pub lists: Vec<String>,
}

impl WebhookConfig {
    /// Whether this endpoint wants `event` about a subscriber of `list`.
    pub fn wants(&self, event: WebhookEvent, list: &str) -> bool {
        self.events.contains(&event) && (self.lists.is_empty() || self.lists.iter().any(|id| id == list))
    }
}

/// The events a webhook endpoint can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookEvent {
    Confirmed,
    Unsubscribed,
}

impl WebhookEvent {
    pub const ALL: [Self; 2] = [Self::Confirmed, Self::Unsubscribed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirmed => "subscriber.confirmed",
            Self::Unsubscribed => "subscriber.unsubscribed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct DkimConfig {
    pub selector: String,
    pub domain: String,
    pub private_key_file: PathBuf,
    pub algorithm: DkimAlgorithm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DkimAlgorithm {
    Rsa,
    Ed25519,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailTransportKind {
    Smtp,
    File,
}

#[derive(Clone)]
pub struct SmtpConfig {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    pub username: Option<String>,
    pub password_file: Option<PathBuf>,
    /// From `SIGNUPD_MAIL__SMTP__PASSWORD`; `password_file` is preferred.
    pub password: Option<String>,
    pub timeout: Duration,
    /// PEM CA certificates trusted besides the system's store (a relay with a private CA).
    pub ca_file: Option<PathBuf>,
    /// The SHA-256 of the relay's own certificate (DER): that certificate is accepted whatever
    /// its issuer and name, any other refused.
    pub certificate_sha256: Option<[u8; 32]>,
    /// The EHLO name; `None`: the host of `server.public_url` if it is a domain name, else the
    /// machine's host name ([`Config::helo_name`]).
    pub helo_name: Option<String>,
}

impl fmt::Debug for SmtpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("username", &self.username)
            .field("password_file", &self.password_file)
            .field("password", &self.password.as_ref().map(|_| REDACTED))
            .field("timeout", &self.timeout)
            .field("ca_file", &self.ca_file)
            .field("certificate_sha256", &self.certificate_sha256.map(hex::encode))
            .field("helo_name", &self.helo_name)
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    StartTls,
    Tls,
    None,
}

#[derive(Debug, Clone)]
pub struct CleanupConfig {
    /// Six fields, seconds first, UTC; already known to parse.
    pub schedule: String,
    /// Days the audit log keeps an operator action (at least 1).
    pub audit_days: u32,
}

#[derive(Debug, Clone)]
pub struct ListConfig {
    pub id: ListId,
    pub name: String,
    pub from: Mailbox,
    pub reply_to: Option<Mailbox>,
    pub consent_version: String,
    pub consent_text: String,
    /// Serialised origins (`https://example.com`), without the hosted page's own origin.
    pub allowed_origins: Vec<String>,
    pub welcome_mail: bool,
    pub confirm_mode: ConfirmMode,
    /// Subject of the confirmation mail; `None`: the language's own.
    pub confirm_subject: Option<String>,
    /// Subject of the welcome mail; `None`: the language's own.
    pub welcome_subject: Option<String>,
    /// The operator's site, shown on the list's pages and in its mails; `None`: only the list's
    /// name is shown.
    pub site_name: Option<String>,
    /// Where "back to the site" leads, on every page of the list.
    pub site_url: Option<Url>,
    /// Buttons and links; text and link shades are derived to meet WCAG AA in both themes.
    pub accent: Option<Rgb>,
    /// Pages and mails speak this language, unless the visitor's is another of `languages`.
    pub language: Language,
    /// Every language the list serves: `language` first, then the others of `languages`, each
    /// once ([`ListConfig::visitor_language`] picks a visitor's).
    pub languages: Vec<Language>,
    /// The tags a signup for this list may carry.
    pub tags: Vec<Tag>,
    /// Where the confirm POST sends the visitor (with `signup=confirmed`); `None`: the hosted
    /// `/confirmed` page. Its origin is one of `allowed_origins` or `site_url`'s.
    pub confirmed_url: Option<Url>,
    /// What the form asks beyond the address, in the order the form shows it.
    pub fields: Vec<FieldSpec>,
}

impl ListConfig {
    /// The name that stands for the sender: the site's name, or the list's.
    pub fn site(&self) -> &str {
        self.site_name.as_deref().unwrap_or(&self.name)
    }

    /// Whether a signup may send the browser back to `url` (`return_to`): an http(s) URL whose
    /// origin is one of `allowed_origins`. `POST /api/signup` and `signupd snippet` both ask.
    pub fn allows_return_to(&self, url: &Url) -> bool {
        matches!(url.scheme(), "http" | "https") && self.allowed_origins.contains(&url.origin().ascii_serialization())
    }

    pub fn confirm_subject(&self) -> String {
        self.confirm_subject_in(self.language)
    }

    /// The confirmation's subject in `language`: `confirm_subject`, written in the list's
    /// `language`, for that language; the language's own for the others.
    pub fn confirm_subject_in(&self, language: Language) -> String {
        match &self.confirm_subject {
            Some(subject) if language == self.language => subject.clone(),
            _ => language.messages().mail.confirm_subject.to_string(),
        }
    }

    /// Whether `other` is sent by the same sender: the same `from`, display name and address.
    /// One confirmation mail confirms such lists together when the visitor's language is the
    /// same on both rows (the mail queue compares the rows' languages), and the preference page
    /// shows the sender's lists.
    pub fn same_sender(&self, other: &Self) -> bool {
        self.from == other.from
    }

    pub fn welcome_subject(&self) -> String {
        self.welcome_subject_in(self.language)
    }

    /// The welcome mail's subject in `language`, as [`Self::confirm_subject_in`].
    pub fn welcome_subject_in(&self, language: Language) -> String {
        match &self.welcome_subject {
            Some(subject) if language == self.language => subject.clone(),
            _ => language.messages().mail.welcome_subject.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    Button,
    Retype,
}

/// What `check-config` and `Debug` print in place of a secret.
pub const REDACTED: &str = "[redacted]";

/// Every problem found in one configuration, each naming its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The key as an operator would write it: `lists[1].id`, `server.public_url`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", self.key, self.message) }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problems: Vec<String> = self.problems.iter().map(Problem::to_string).collect();
        write!(f, "invalid configuration: {}", problems.join("; "))
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn single(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { problems: vec![Problem { key: key.into(), message: message.into() }] }
    }
}

impl Config {
    /// Defaults, then `file` (if any), then the `SIGNUPD_…` environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(RawConfig::default()));
        let mut refused = Vec::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|error| {
                ConfigError::single("", format!("cannot read config file {}: {error}", path.display()))
            })?;
            let toml = Toml::string(&text);
            refused = secrets_in_file(&toml);
            figment = figment.merge(toml);
        }
        figment = figment.merge(source::environment());
        Self::extract(figment, file.is_some(), refused)
    }

    /// Defaults, then the given TOML text; the environment is not read. For tests and tools
    /// that need a configuration independent of the process environment.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let toml = Toml::string(text);
        let refused = secrets_in_file(&toml);
        let figment = Figment::from(Serialized::defaults(RawConfig::default())).merge(toml);
        Self::extract(figment, true, refused)
    }

    /// Extracts and checks the merged sources; `refused` (what the file may not hold) comes
    /// first among the problems, all reported at once.
    fn extract(figment: Figment, has_file: bool, mut refused: Vec<Problem>) -> Result<Self, ConfigError> {
        let checked = figment
            .extract()
            .map_err(|error| ConfigError { problems: error.into_iter().map(parse::figment_problem).collect() })
            .and_then(|raw: RawConfig| Self::check(raw, has_file));
        match checked {
            Ok(config) if refused.is_empty() => Ok(config),
            Ok(_) => Err(ConfigError { problems: refused }),
            Err(error) => {
                // A refused key's value is not worth a second complaint (`password = 1234`).
                let others: Vec<Problem> = error
                    .problems
                    .into_iter()
                    .filter(|problem| !refused.iter().any(|refusal| refusal.key == problem.key))
                    .collect();
                refused.extend(others);
                Err(ConfigError { problems: refused })
            }
        }
    }

    /// Turns the merged raw values into a checked configuration, or lists every problem.
    pub fn check(mut raw: RawConfig, has_file: bool) -> Result<Self, ConfigError> {
        let mut problems = parse::Problems::default();
        if raw.lists.is_none() && !has_file {
            raw.lists = Some(vec![RawList::demo()]);
        }

        let s = &raw.server;
        let public_url =
            problems.check("server.public_url", parse::public_url(&s.public_url).and_then(parse::not_a_placeholder));
        let server = ServerConfig {
            listen: problems
                .check("server.listen", parse::socket_addr(&s.listen))
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080))),
            public_url: public_url.clone().unwrap_or_else(parse::placeholder_url),
            trusted_proxies: problems
                .check_or_default("server.trusted_proxies", TrustedProxies::parse(&s.trusted_proxies)),
            client_ip_header: problems
                .check("server.client_ip_header", parse::header_name(&s.client_ip_header))
                .unwrap_or(HeaderName::from_static("cf-connecting-ip")),
            ipv6_prefix: problems.check_or_default("server.ipv6_prefix", parse::prefix_length(s.ipv6_prefix, 1, 128)),
            max_body_bytes: problems.check_or_default("server.max_body_bytes", parse::max_body_bytes(s.max_body_bytes)),
            request_timeout: problems
                .check_or_default("server.request_timeout", parse::positive_duration(&s.request_timeout)),
            metrics_listen: problems
                .check_or_default("server.metrics_listen", parse::optional(&s.metrics_listen, parse::socket_addr)),
            log_format: problems
                .check(
                    "server.log_format",
                    parse::one_of(&s.log_format, &[("text", LogFormat::Text), ("json", LogFormat::Json)]),
                )
                .unwrap_or(LogFormat::Text),
            custom_css_file: parse::optional_path(&s.custom_css_file),
            locales: parse::optional_path(&s.locales_dir).map_or_else(Locales::default, |dir| {
                Locales::load(&dir).unwrap_or_else(|(partial, found)| {
                    for problem in found {
                        problems.push("server.locales_dir", problem.to_string());
                    }
                    partial
                })
            }),
        };

        let storage = StorageConfig {
            data_dir: problems.check_or_default("storage.data_dir", parse::path(&raw.storage.data_dir)),
            cache_mib: problems.check_or_default("storage.cache_mib", parse::cache_mib(raw.storage.cache_mib)),
        };

        let sec = &raw.secrets;
        let secrets = SecretsConfig {
            token_secret_file: parse::optional_path(&sec.token_secret_file),
            verify_only_secret_files: sec
                .verify_only_secret_files
                .iter()
                .enumerate()
                .filter_map(|(i, p)| problems.check(&format!("secrets.verify_only_secret_files[{i}]"), parse::path(p)))
                .collect(),
            hash_key_file: parse::optional_path(&sec.hash_key_file),
        };

        let sig = &raw.signup;
        let signup = SignupConfig {
            confirm_ttl: problems.check_or_default("signup.confirm_ttl", parse::positive_duration(&sig.confirm_ttl)),
            resend_cooldown: problems.check_or_default("signup.resend_cooldown", parse::duration(&sig.resend_cooldown)),
            rate_limits: rate_limit_rules("signup.rate_limits", &sig.rate_limits, &mut problems),
            network_rate_limits: rate_limit_rules(
                "signup.network_rate_limits",
                &sig.network_rate_limits,
                &mut problems,
            ),
            network_prefix_v4: problems
                .check_or_default("signup.network_prefix_v4", parse::prefix_length(sig.network_prefix_v4, 8, 32)),
            network_prefix_v6: problems
                .check_or_default("signup.network_prefix_v6", parse::prefix_length(sig.network_prefix_v6, 16, 128)),
            max_mails_per_address_per_day: (sig.max_mails_per_address_per_day > 0)
                .then_some(sig.max_mails_per_address_per_day),
            surge_alert: problems
                .check("signup.surge_alert.window", parse::positive_duration(&sig.surge_alert.window))
                .filter(|_| sig.surge_alert.max > 0)
                .map(|window| RateLimitRule { window, max: sig.surge_alert.max }),
            complaint_breaker: (sig.complaint_breaker > 0).then_some(sig.complaint_breaker),
            reputation_days: sig.reputation_days,
            blocked_domains_file: parse::optional_path(&sig.blocked_domains_file),
            check_mx: sig.check_mx,
            dns_servers: sig
                .dns_servers
                .iter()
                .enumerate()
                .filter_map(|(i, server)| {
                    problems.check(&format!("signup.dns_servers[{i}]"), parse::name_server(server))
                })
                .collect(),
        };

        let m = &raw.mail;
        let transport = problems
            .check(
                "mail.transport",
                parse::one_of(&m.transport, &[("smtp", MailTransportKind::Smtp), ("file", MailTransportKind::File)]),
            )
            .unwrap_or(MailTransportKind::File);
        let security = problems
            .check(
                "mail.smtp.security",
                parse::one_of(
                    &m.smtp.security,
                    &[("starttls", SmtpSecurity::StartTls), ("tls", SmtpSecurity::Tls), ("none", SmtpSecurity::None)],
                ),
            )
            .unwrap_or(SmtpSecurity::StartTls);
        if transport == MailTransportKind::Smtp {
            problems.check("mail.smtp.host", parse::smtp_host(&m.smtp.host, security));
        }
        // Mail that leaves this machine from a reserved example domain is refused by every
        // receiver: a `from` left as the package's placeholder. A loopback relay may be a local
        // catcher for tests, which takes any sender.
        let mail_leaves_machine = transport == MailTransportKind::Smtp && !parse::is_loopback_host(&m.smtp.host);
        let mut mail = MailConfig {
            transport,
            file_dir: problems.check_or_default("mail.file_dir", parse::path(&m.file_dir)),
            max_mails_per_hour: problems
                .check_or_default("mail.max_mails_per_hour", parse::at_least_one(m.max_mails_per_hour)),
            burst: if m.burst == 0 { (m.max_mails_per_hour / 60).max(1) } else { m.burst },
            retry_base: problems.check_or_default("mail.retry_base", parse::positive_duration(&m.retry_base)),
            alert_webhook: problems
                .check_or_default("mail.alert_webhook", parse::optional(&m.alert_webhook, parse::webhook_url)),
            webhook_timeout: problems
                .check_or_default("mail.webhook_timeout", parse::positive_duration(&m.webhook_timeout)),
            webhook_max_age: problems
                .check_or_default("mail.webhook_max_age", parse::positive_duration(&m.webhook_max_age)),
            smtp: SmtpConfig {
                host: m.smtp.host.clone(),
                port: m.smtp.port,
                security,
                username: parse::non_empty(&m.smtp.username),
                password_file: parse::optional_path(&m.smtp.password_file),
                password: parse::non_empty(&m.smtp.password),
                timeout: problems.check_or_default("mail.smtp.timeout", parse::positive_duration(&m.smtp.timeout)),
                ca_file: parse::optional_path(&m.smtp.ca_file),
                certificate_sha256: problems.check_or_default(
                    "mail.smtp.certificate_sha256",
                    parse::optional(&m.smtp.certificate_sha256, parse::certificate_sha256),
                ),
                helo_name: problems
                    .check_or_default("mail.smtp.helo_name", parse::optional(&m.smtp.helo_name, parse::helo_name)),
            },
            dkim: None,
        };

        let d = &m.dkim;
        let dkim_algorithm = problems.check(
            "mail.dkim.algorithm",
            parse::one_of(&d.algorithm, &[("rsa", DkimAlgorithm::Rsa), ("ed25519", DkimAlgorithm::Ed25519)]),
        );
        let dkim = if d.selector.is_empty() && d.domain.is_empty() && d.private_key_file.is_empty() {
            None
        } else {
            for (key, value) in
                [("selector", &d.selector), ("domain", &d.domain), ("private_key_file", &d.private_key_file)]
            {
                if value.is_empty() {
                    problems.push(format!("mail.dkim.{key}"), "must be set when DKIM signing is configured");
                }
            }
            Some(DkimConfig {
                selector: d.selector.clone(),
                domain: d.domain.clone(),
                private_key_file: PathBuf::from(&d.private_key_file),
                algorithm: dkim_algorithm.unwrap_or(DkimAlgorithm::Rsa),
            })
        };
        mail.dkim = dkim;

        problems.check("cleanup.schedule", parse::cron_schedule(&raw.cleanup.schedule));
        if raw.cleanup.audit_days == 0 {
            problems.push("cleanup.audit_days", "must be at least 1: the audit log answers \"who removed me?\"");
        }
        let cleanup =
            CleanupConfig { schedule: raw.cleanup.schedule.clone(), audit_days: raw.cleanup.audit_days.max(1) };

        let lists = check_lists(raw.lists.as_deref(), &server.locales, mail_leaves_machine, &mut problems);
        let webhooks = check_webhooks(&raw.webhooks, &lists, &mut problems);
        let webhook_names: Vec<&str> = raw.webhooks.iter().map(|hook| hook.name.as_str()).collect();
        let destinations = destinations::check(&raw.destinations, &webhook_names, &lists, &mut problems);
        let relays = relays::check(&raw.relays, &mut problems);
        let api_tokens = api_tokens::check(&raw.api_tokens, &mut problems);

        problems.into_result()?;
        Ok(Self {
            server,
            storage,
            secrets,
            signup,
            mail,
            cleanup,
            lists,
            webhooks,
            destinations,
            relays,
            api_tokens,
            effective: raw,
        })
    }

    /// The list with this id, if configured.
    pub fn list(&self, id: &str) -> Option<&ListConfig> {
        self.lists.iter().find(|list| list.id.as_ref() == id)
    }

    /// The name signupd gives the relay in `EHLO`, which relays and receivers judge a sender by:
    /// `mail.smtp.helo_name`; else the host of `server.public_url` when it is a domain name (not
    /// an address, not `localhost`); else `None`, for the machine's host name.
    pub fn helo_name(&self) -> Option<String> {
        if let Some(name) = &self.mail.smtp.helo_name {
            return Some(name.clone());
        }
        match self.server.public_url.host() {
            Some(url::Host::Domain(domain)) if domain != "localhost" => Some(domain.to_owned()),
            _ => None,
        }
    }

    /// The list a form is for when none is named: the only list, if there is exactly one.
    pub fn default_list(&self) -> Option<&ListConfig> {
        match self.lists.as_slice() {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The effective configuration as TOML, with every secret value replaced by `[redacted]`.
    /// Secret *files* are shown by path; their contents are never read here.
    pub fn to_redacted_toml(&self) -> String {
        // `mail.smtp.password` is never serialised: it is not a key of the file (`check-config`
        // says apart whether one is set).
        let mut shown = self.effective.clone();
        // A chat service's incoming-webhook URL (Slack and its kind) is itself the credential.
        if !shown.mail.alert_webhook.is_empty() {
            shown.mail.alert_webhook = REDACTED.into();
        }
        toml::to_string_pretty(&shown).unwrap_or_else(|error| format!("# cannot print configuration: {error}\n"))
    }
}

/// The environment variable that may carry the relay's password, which the file may not.
pub const SMTP_PASSWORD_ENVIRONMENT: &str = "SIGNUPD_MAIL__SMTP__PASSWORD";

/// What the file itself holds that it must not: `mail.smtp.password`, with any value (an empty
/// one too), whatever the environment merges over it. Read from the file's own table, not the
/// merged figment, where `SIGNUPD_MAIL__SMTP__PASSWORD` would hide it. A file that does not parse
/// has nothing to refuse here: figment reports its syntax error.
fn secrets_in_file(toml: &figment::providers::Data<Toml>) -> Vec<Problem> {
    let Ok(data) = figment::Provider::data(toml) else {
        return Vec::new();
    };
    let in_file =
        data.into_values().any(|dict| figment::value::Value::from(dict).find_ref("mail.smtp.password").is_some());
    if !in_file {
        return Vec::new();
    }
    vec![Problem {
        key: "mail.smtp.password".into(),
        message: format!(
            "a password does not belong in the configuration file, which is not kept secret: remove this key \
             and put the password in the file named by mail.smtp.password_file, in the environment variable \
             {SMTP_PASSWORD_ENVIRONMENT}, or in the credential smtp_password (on a Debian install \
             /etc/signupd/credentials/smtp/password, mode 0600)"
        ),
    }]
}

/// A list of `{window, max}` rules; each bad field is a problem naming it.
fn rate_limit_rules(key: &str, rules: &[raw::RawRateLimit], problems: &mut parse::Problems) -> Vec<RateLimitRule> {
    rules
        .iter()
        .enumerate()
        .filter_map(|(i, rule)| {
            let window = problems.check(&format!("{key}[{i}].window"), parse::positive_duration(&rule.window));
            let max = problems.check(&format!("{key}[{i}].max"), parse::at_least_one(rule.max));
            Some(RateLimitRule { window: window?, max: max? })
        })
        .collect()
}

fn check_webhooks(
    webhooks: &[raw::RawWebhook],
    lists: &[ListConfig],
    problems: &mut parse::Problems,
) -> Vec<WebhookConfig> {
    let mut seen: Vec<&str> = Vec::new();
    webhooks
        .iter()
        .enumerate()
        .filter_map(|(i, hook)| {
            let key = |field: &str| format!("webhooks[{i}].{field}");
            let name = problems
                .check(&key("name"), ListId::parse(&hook.name).map_err(|e| e.to_string().replace("list id", "name")));
            if name.is_some() {
                if seen.contains(&hook.name.as_str()) {
                    problems.push(key("name"), format!("duplicate webhook name {:?}", hook.name));
                }
                seen.push(&hook.name);
            }
            let url = problems.check(&key("url"), parse::webhook_url(&hook.url));
            let events: Vec<WebhookEvent> = if hook.events.is_empty() {
                WebhookEvent::ALL.to_vec()
            } else {
                hook.events
                    .iter()
                    .enumerate()
                    .filter_map(|(j, event)| {
                        let known = WebhookEvent::ALL.into_iter().find(|known| known.as_str() == event);
                        if known.is_none() {
                            problems.push(
                                format!("webhooks[{i}].events[{j}]"),
                                format!(
                                    "unknown event {event:?}; known: subscriber.confirmed, subscriber.unsubscribed"
                                ),
                            );
                        }
                        known
                    })
                    .collect()
            };
            for (j, list) in hook.lists.iter().enumerate() {
                if !lists.iter().any(|configured| configured.id.as_ref() == list) {
                    problems
                        .push(format!("webhooks[{i}].lists[{j}]"), format!("no list with id {list:?} is configured"));
                }
            }
            Some(WebhookConfig {
                name: name?.as_ref().to_owned(),
                url: url?,
                secret_file: parse::optional_path(&hook.secret_file),
                events,
                lists: hook.lists.clone(),
            })
        })
        .collect()
}

fn check_lists(
    lists: Option<&[RawList]>,
    locales: &Locales,
    mail_leaves_machine: bool,
    problems: &mut parse::Problems,
) -> Vec<ListConfig> {
    let Some(lists) = lists else {
        problems.push("lists", "no list configured; add at least one [[lists]] table with an id");
        return Vec::new();
    };
    if lists.is_empty() {
        problems.push("lists", "no list configured; add at least one [[lists]] table with an id");
    }
    let mut seen: Vec<String> = Vec::new();
    lists
        .iter()
        .enumerate()
        .filter_map(|(i, list)| {
            let key = |field: &str| format!("lists[{i}].{field}");
            let id = problems.check(&key("id"), ListId::parse(&list.id).map_err(|e| e.to_string()));
            if let Some(id) = &id {
                if seen.iter().any(|s| s == id.as_ref()) {
                    problems.push(key("id"), format!("duplicate list id {:?}", id.as_ref()));
                }
                seen.push(id.as_ref().to_owned());
            }
            let name = problems.check(&key("name"), parse::display_text(&list.name));
            let from = problems.check(
                &key("from"),
                parse::mailbox(&list.from).and_then(|from| {
                    if mail_leaves_machine { parse::sender_not_a_placeholder(from) } else { Ok(from) }
                }),
            );
            let reply_to = problems.check(&key("reply_to"), parse::optional(&list.reply_to, parse::mailbox));
            let consent_version =
                problems.check(&key("consent_version"), parse::consent_version(&list.consent_version));
            let consent_text = problems.check(&key("consent_text"), parse::display_text(&list.consent_text));
            let allowed_origins: Vec<String> = list
                .allowed_origins
                .iter()
                .enumerate()
                .filter_map(|(j, o)| problems.check(&format!("lists[{i}].allowed_origins[{j}]"), parse::origin(o)))
                .collect();
            let confirm_subject =
                problems.check(&key("confirm_subject"), parse::optional(&list.confirm_subject, parse::display_text));
            let welcome_subject =
                problems.check(&key("welcome_subject"), parse::optional(&list.welcome_subject, parse::display_text));
            let site_name = problems.check(&key("site_name"), parse::optional(&list.site_name, parse::display_text));
            let site_url = problems.check(&key("site_url"), parse::optional(&list.site_url, parse::http_url));
            let accent = problems.check(&key("accent_color"), parse::optional(&list.accent_color, Rgb::parse));
            let language = problems.check(&key("language"), parse::language(&list.language, locales));
            let languages = list_languages::check(language, &list.languages, &key("languages"), locales, problems);
            let tags = list_tags(&list.tags, &key("tags"), problems);
            let fields = list_fields(&list.fields, &key("fields"), problems);
            let confirmed_url = problems.check(
                &key("confirmed_url"),
                parse::optional(&list.confirmed_url, parse::http_url).and_then(|url| {
                    confirmed_url_allowed(url, &allowed_origins, site_url.as_ref().and_then(Option::as_ref))
                }),
            );
            let confirm_mode = problems.check(
                &key("confirm_mode"),
                parse::one_of(&list.confirm_mode, &[("button", ConfirmMode::Button), ("retype", ConfirmMode::Retype)]),
            );
            Some(ListConfig {
                id: id?,
                name: name?,
                from: from?,
                reply_to: reply_to?,
                consent_version: consent_version?,
                consent_text: consent_text?,
                allowed_origins,
                welcome_mail: list.welcome_mail,
                confirm_mode: confirm_mode?,
                confirm_subject: confirm_subject?,
                welcome_subject: welcome_subject?,
                site_name: site_name?,
                site_url: site_url?,
                accent: accent?,
                language: language?,
                languages,
                tags,
                confirmed_url: confirmed_url?,
                fields,
            })
        })
        .collect()
}

/// A list's `tags`: each a valid word, none twice.
fn list_tags(raw: &[String], key: &str, problems: &mut parse::Problems) -> Vec<Tag> {
    let mut tags: Vec<Tag> = Vec::with_capacity(raw.len());
    for (j, value) in raw.iter().enumerate() {
        let Some(tag) = problems.check(&format!("{key}[{j}]"), Tag::parse(value).map_err(|e| e.to_string())) else {
            continue;
        };
        if tags.contains(&tag) {
            problems.push(format!("{key}[{j}]"), format!("duplicate tag {value:?}"));
        } else {
            tags.push(tag);
        }
    }
    tags
}

/// A list's `[[lists.fields]]`: each rule valid for its kind, no name twice, at most
/// [`fields::MAX_FIELDS`].
fn list_fields(raw: &[RawField], key: &str, problems: &mut parse::Problems) -> Vec<FieldSpec> {
    if raw.len() > fields::MAX_FIELDS {
        problems.push(key, format!("at most {} fields per list", fields::MAX_FIELDS));
    }
    let mut specs: Vec<FieldSpec> = Vec::with_capacity(raw.len());
    for (j, field) in raw.iter().enumerate() {
        let key = |part: &str| format!("{key}[{j}].{part}");
        let Some(spec) = field_spec(field, &key, problems) else { continue };
        if specs.iter().any(|seen| seen.name == spec.name) {
            problems.push(key("name"), format!("duplicate field name {:?}", spec.name.as_ref()));
        } else {
            specs.push(spec);
        }
    }
    specs
}

fn field_spec(field: &RawField, key: &dyn Fn(&str) -> String, problems: &mut parse::Problems) -> Option<FieldSpec> {
    let name = problems.check(&key("name"), FieldName::parse(&field.name));
    let label = problems.check(&key("label"), parse::display_text(&field.label));
    let length = |problems: &mut parse::Problems| {
        let max_length = field.max_length.unwrap_or(fields::DEFAULT_MAX_LENGTH);
        if (1..=fields::MAX_LENGTH_CEILING).contains(&max_length) {
            Some(max_length)
        } else {
            problems.push(key("max_length"), format!("must be 1 to {}", fields::MAX_LENGTH_CEILING));
            None
        }
    };
    let kind = match field.kind.as_str() {
        "text" | "hidden" => {
            if !field.options.is_empty() {
                problems.push(key("options"), "only a select field has options");
            }
            let max_length = length(problems)?;
            Some(if field.kind == "text" { FieldKind::Text { max_length } } else { FieldKind::Hidden { max_length } })
        }
        "select" => {
            if field.max_length.is_some() {
                problems.push(key("max_length"), "a select field has options, not a max_length");
            }
            select_options(&field.options, &key("options"), problems).map(|options| FieldKind::Select { options })
        }
        other => {
            problems.push(key("kind"), format!("{other:?} is not text, select or hidden"));
            None
        }
    };
    Some(FieldSpec { name: name?, label: label?, kind: kind?, required: field.required })
}

/// A select's options: at least one, each a short line of text, none twice.
fn select_options(raw: &[String], key: &str, problems: &mut parse::Problems) -> Option<Vec<String>> {
    if raw.is_empty() {
        problems.push(key, "a select field needs at least one option");
        return None;
    }
    let mut options: Vec<String> = Vec::with_capacity(raw.len());
    let mut valid = true;
    for (j, option) in raw.iter().enumerate() {
        let key = format!("{key}[{j}]");
        let checked = parse::display_text(option).and_then(|option| {
            if option.trim() != option || option.chars().count() > fields::DEFAULT_MAX_LENGTH {
                Err(format!("must be at most {} characters without spaces around it", fields::DEFAULT_MAX_LENGTH))
            } else {
                Ok(option)
            }
        });
        match problems.check(&key, checked) {
            Some(option) if options.contains(&option) => {
                problems.push(key, format!("duplicate option {option:?}"));
                valid = false;
            }
            Some(option) => options.push(option),
            None => valid = false,
        }
    }
    valid.then_some(options)
}

/// `confirmed_url` may lead only to the operator's own sites: an origin in `allowed_origins`,
/// or `site_url`'s — never an open redirect.
fn confirmed_url_allowed(
    url: Option<Url>,
    allowed_origins: &[String],
    site_url: Option<&Url>,
) -> Result<Option<Url>, String> {
    let Some(url) = url else {
        return Ok(None);
    };
    let origin = url.origin().ascii_serialization();
    let site_origin = site_url.map(|site| site.origin().ascii_serialization());
    if allowed_origins.contains(&origin) || site_origin.as_ref() == Some(&origin) {
        Ok(Some(url))
    } else {
        Err(format!("the origin {origin} must be in the list's allowed_origins or be site_url's origin"))
    }
}

#[cfg(test)]
mod tests;
