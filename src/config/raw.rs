//! The configuration exactly as an operator writes it (`docs/configuration.md`): plain strings, numbers and
//! lists, with the built-in defaults. Nothing here is checked beyond its serde type; `super`
//! turns a [`RawConfig`] into a checked [`super::Config`] or an error naming the key.
//!
//! `deny_unknown_fields` everywhere: a typo in a key is a startup error, not a silent default.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawConfig {
    pub server: RawServer,
    pub storage: RawStorage,
    pub secrets: RawSecrets,
    pub signup: RawSignup,
    pub mail: RawMail,
    pub cleanup: RawCleanup,
    /// `None` when no source named any list: the zero-setup demo list applies only when there is
    /// no configuration file at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lists: Option<Vec<RawList>>,
    /// Endpoints that receive subscriber events (`docs/operations.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<RawWebhook>,
    /// The operator's senders that confirmed subscribers are handed to (`docs/operations.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub destinations: Vec<RawDestination>,
    /// The relays whose bounce and complaint events signupd hears (`docs/operations.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relays: Vec<RawRelay>,
    /// Who may call the operator API and open the admin page (`docs/operations.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub api_tokens: Vec<RawApiToken>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawApiToken {
    pub name: String,
    /// Empty: `$CREDENTIALS_DIRECTORY/api_token_<name>`.
    pub token_file: String,
    /// `read`, `write`, `admin`.
    pub scopes: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawWebhook {
    pub name: String,
    pub url: String,
    /// Empty: `$CREDENTIALS_DIRECTORY/webhook_<name>`.
    pub secret_file: String,
    /// Empty: every subscriber event.
    pub events: Vec<String>,
    /// Empty: every list.
    pub lists: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawDestination {
    pub name: String,
    /// `listmonk`, `buttondown`, `mailchimp` or `brevo`.
    pub kind: String,
    /// Empty: the vendor's API (listmonk has none: its base URL is required).
    pub url: String,
    /// Empty: `$CREDENTIALS_DIRECTORY/destination_<name>`.
    pub credential_file: String,
    /// The list (listmonk, Brevo) or audience (Mailchimp) id; empty for Buttondown.
    pub target: String,
    /// Empty: every list.
    pub lists: Vec<String>,
    /// Added where the kind has tags (Buttondown, Mailchimp).
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawServer {
    pub listen: String,
    pub public_url: String,
    pub trusted_proxies: Vec<String>,
    pub client_ip_header: String,
    pub ipv6_prefix: u8,
    pub max_body_bytes: usize,
    pub request_timeout: String,
    pub metrics_listen: String,
    pub log_format: String,
    pub custom_css_file: String,
    pub locales_dir: String,
}

impl Default for RawServer {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            public_url: "http://127.0.0.1:8080".into(),
            trusted_proxies: Vec::new(),
            client_ip_header: "CF-Connecting-IP".into(),
            ipv6_prefix: 64,
            max_body_bytes: 4096,
            request_timeout: "10s".into(),
            metrics_listen: String::new(),
            log_format: "text".into(),
            custom_css_file: String::new(),
            locales_dir: String::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawStorage {
    pub data_dir: String,
    pub cache_mib: u32,
}

impl Default for RawStorage {
    fn default() -> Self {
        Self { data_dir: "./data".into(), cache_mib: 16 }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSecrets {
    pub token_secret_file: String,
    pub verify_only_secret_files: Vec<String>,
    pub hash_key_file: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawRelay {
    pub name: String,
    /// `ses`, `resend`, `postmark`, `sendgrid` or `mailgun`.
    pub kind: String,
    /// Empty: `$CREDENTIALS_DIRECTORY/relay_<name>` (none for `ses`).
    pub credential_file: String,
    /// `ses`: the SNS topics (their ARNs) whose messages are believed.
    pub topics: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSignup {
    pub confirm_ttl: String,
    pub resend_cooldown: String,
    pub rate_limits: Vec<RawRateLimit>,
    pub network_rate_limits: Vec<RawRateLimit>,
    pub network_prefix_v4: u8,
    pub network_prefix_v6: u8,
    pub max_mails_per_address_per_day: u32,
    pub surge_alert: RawRateLimit,
    /// Complaints about a list's confirmation mail within an hour that put it in surge mode.
    pub complaint_breaker: u32,
    pub reputation_days: u32,
    pub blocked_domains_file: String,
    pub check_mx: bool,
    pub dns_servers: Vec<String>,
}

impl Default for RawSignup {
    fn default() -> Self {
        Self {
            confirm_ttl: "48h".into(),
            resend_cooldown: "10m".into(),
            rate_limits: vec![
                RawRateLimit { window: "10m".into(), max: 3 },
                RawRateLimit { window: "1d".into(), max: 10 },
            ],
            network_rate_limits: vec![
                RawRateLimit { window: "10m".into(), max: 100 },
                RawRateLimit { window: "1d".into(), max: 1000 },
            ],
            network_prefix_v4: 24,
            network_prefix_v6: 48,
            max_mails_per_address_per_day: 3,
            surge_alert: RawRateLimit { window: "10m".into(), max: 500 },
            complaint_breaker: 3,
            reputation_days: 90,
            blocked_domains_file: String::new(),
            check_mx: false,
            dns_servers: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimit {
    pub window: String,
    pub max: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawMail {
    pub transport: String,
    pub file_dir: String,
    pub max_mails_per_hour: u32,
    pub burst: u32,
    pub retry_base: String,
    pub alert_webhook: String,
    pub webhook_timeout: String,
    pub webhook_max_age: String,
    pub smtp: RawSmtp,
    pub dkim: RawDkim,
}

impl Default for RawMail {
    fn default() -> Self {
        Self {
            transport: "file".into(),
            file_dir: "./data/mail".into(),
            max_mails_per_hour: 1000,
            burst: 0,
            retry_base: "30s".into(),
            alert_webhook: String::new(),
            webhook_timeout: "10s".into(),
            webhook_max_age: "24h".into(),
            smtp: RawSmtp::default(),
            dkim: RawDkim::default(),
        }
    }
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawSmtp {
    pub host: String,
    pub port: u16,
    pub security: String,
    pub username: String,
    pub password_file: String,
    /// Only ever set from the environment (`SIGNUPD_MAIL__SMTP__PASSWORD`): the key in the file
    /// is refused before this is read (`super::secrets_in_file`). Never serialised, so
    /// `check-config` prints no `password` line, set or not; it says apart where one comes from.
    #[serde(skip_serializing)]
    pub password: String,
    pub timeout: String,
    pub ca_file: String,
    pub certificate_sha256: String,
    pub helo_name: String,
}

impl std::fmt::Debug for RawSmtp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = if self.password.is_empty() { "" } else { super::REDACTED };
        f.debug_struct("RawSmtp")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("username", &self.username)
            .field("password_file", &self.password_file)
            .field("password", &password)
            .field("timeout", &self.timeout)
            .field("ca_file", &self.ca_file)
            .field("certificate_sha256", &self.certificate_sha256)
            .field("helo_name", &self.helo_name)
            .finish()
    }
}

impl Default for RawSmtp {
    fn default() -> Self {
        Self {
            host: "localhost".into(),
            port: 587,
            security: "starttls".into(),
            username: String::new(),
            password_file: String::new(),
            password: String::new(),
            timeout: "10s".into(),
            ca_file: String::new(),
            certificate_sha256: String::new(),
            helo_name: String::new(),
        }
    }
}

/// Optional DKIM signing; off while `selector` is empty.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawDkim {
    pub selector: String,
    pub domain: String,
    pub private_key_file: String,
    pub algorithm: String,
}

impl Default for RawDkim {
    fn default() -> Self {
        Self {
            selector: String::new(),
            domain: String::new(),
            private_key_file: String::new(),
            algorithm: "rsa".into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawCleanup {
    pub schedule: String,
    /// Days the audit log keeps an operator action.
    pub audit_days: u32,
}

impl Default for RawCleanup {
    fn default() -> Self {
        Self { schedule: "0 23 * * * *".into(), audit_days: 400 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawList {
    pub id: String,
    pub name: String,
    pub from: String,
    pub reply_to: String,
    pub consent_version: String,
    pub consent_text: String,
    pub allowed_origins: Vec<String>,
    pub welcome_mail: bool,
    pub confirm_mode: String,
    /// Empty: the language's own subject.
    pub confirm_subject: String,
    /// Empty: the language's own subject.
    pub welcome_subject: String,
    pub site_name: String,
    pub site_url: String,
    pub accent_color: String,
    pub language: String,
    /// More languages the list serves beside `language`.
    pub languages: Vec<String>,
    pub tags: Vec<String>,
    /// Empty: the hosted `/confirmed` page.
    pub confirmed_url: String,
    /// `[[lists.fields]]`: what the form asks beyond the address.
    pub fields: Vec<RawField>,
}

/// One `[[lists.fields]]` table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawField {
    pub name: String,
    pub label: String,
    pub kind: String,
    pub required: bool,
    /// `None`: the default for a text or hidden field; refused on a select.
    pub max_length: Option<usize>,
    /// A select's options; refused on the other kinds.
    pub options: Vec<String>,
}

impl Default for RawField {
    fn default() -> Self {
        Self {
            name: String::new(),
            label: String::new(),
            kind: "text".into(),
            required: false,
            max_length: None,
            options: Vec::new(),
        }
    }
}

impl RawList {
    /// The zero-setup demo list, used only when no configuration file is given.
    pub fn demo() -> Self {
        Self { id: "default".into(), ..Self::default() }
    }
}

impl Default for RawList {
    /// The value of every key a `[[lists]]` table leaves out; `id` has no default.
    fn default() -> Self {
        Self {
            id: String::new(),
            name: "Newsletter".into(),
            from: "Newsletter <no-reply@example.com>".into(),
            reply_to: String::new(),
            consent_version: "v1".into(),
            consent_text: "Email me when there is news. I can unsubscribe at any time.".into(),
            allowed_origins: Vec::new(),
            welcome_mail: true,
            confirm_mode: "button".into(),
            confirm_subject: String::new(),
            welcome_subject: String::new(),
            site_name: String::new(),
            site_url: String::new(),
            accent_color: String::new(),
            language: "en".into(),
            languages: Vec::new(),
            tags: Vec::new(),
            confirmed_url: String::new(),
            fields: Vec::new(),
        }
    }
}
