//! Field parsers for [`super::Config::check`]: each takes the raw value and returns the checked
//! value or a plain-language message; the caller adds the key. No parser touches the filesystem
//! or the network.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use actix_web::http::header::HeaderName;
use lettre::message::Mailbox;
use url::Url;

use super::{ConfigError, Problem, SmtpSecurity};
use crate::config::presentation::{Language, Locales};

/// Collects problems while the checker carries on, so one run reports every bad key.
#[derive(Debug, Default)]
pub(super) struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem { key: key.into(), message: message.into() });
    }

    pub fn check<T>(&mut self, key: &str, result: Result<T, String>) -> Option<T> {
        result.map_err(|message| self.push(key, message)).ok()
    }

    /// Like [`Self::check`], with a stand-in value so checking can continue; the stand-in is
    /// never used because [`Self::into_result`] fails.
    pub fn check_or_default<T: Default>(&mut self, key: &str, result: Result<T, String>) -> T {
        self.check(key, result).unwrap_or_default()
    }

    pub fn into_result(self) -> Result<(), ConfigError> {
        if self.0.is_empty() { Ok(()) } else { Err(ConfigError { problems: self.0 }) }
    }
}

/// A figment/serde error (wrong type, unknown key) as a [`Problem`] naming the key.
pub(super) fn figment_problem(error: figment::Error) -> Problem {
    let mut path = error.path.clone();
    let message = match &error.kind {
        figment::error::Kind::UnknownField(field, _) => {
            if path.last() != Some(field) {
                path.push(field.clone());
            }
            "unknown key".to_owned()
        }
        kind => kind.to_string(),
    };
    Problem { key: operator_key(&path), message }
}

/// `["lists", "1", "id"]` → `lists[1].id`.
fn operator_key(path: &[String]) -> String {
    let mut key = String::new();
    for segment in path {
        if segment.parse::<usize>().is_ok() {
            key.push_str(&format!("[{segment}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(segment);
        }
    }
    key
}

pub fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

pub fn optional_path(value: &str) -> Option<PathBuf> {
    non_empty(value).map(PathBuf::from)
}

/// `""` means "off"; anything else must parse.
pub fn optional<T>(value: &str, parse: fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    if value.is_empty() { Ok(None) } else { parse(value).map(Some) }
}

pub fn path(value: &str) -> Result<PathBuf, String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    Ok(PathBuf::from(value))
}

pub fn one_of<T: Copy>(value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices.iter().find(|(name, _)| *name == value).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<String> = choices.iter().map(|(name, _)| format!("{name:?}")).collect();
        format!("{value:?} is not one of {}", names.join(", "))
    })
}

pub fn duration(value: &str) -> Result<Duration, String> {
    humantime::parse_duration(value)
        .map_err(|error| format!("{value:?} is not a duration like \"30s\", \"10m\" or \"48h\" ({error})"))
}

pub fn positive_duration(value: &str) -> Result<Duration, String> {
    let parsed = duration(value)?;
    if parsed < Duration::from_secs(1) {
        return Err(format!("{value:?} is too short; use at least \"1s\""));
    }
    Ok(parsed)
}

pub fn at_least_one(value: u32) -> Result<u32, String> {
    if value == 0 { Err("must be at least 1".into()) } else { Ok(value) }
}

/// The writer's page cache: at least 1 MiB (SQLite needs a few pages to work at all), at most
/// 4 GiB, beyond which the page count no longer fits SQLite's setting.
pub fn cache_mib(value: u32) -> Result<u32, String> {
    if (1..=4096).contains(&value) { Ok(value) } else { Err(format!("{value} is not between 1 and 4096 (MiB)")) }
}

pub fn socket_addr(value: &str) -> Result<SocketAddr, String> {
    SocketAddr::from_str(value)
        .map_err(|_| format!("{value:?} is not an address and port like \"127.0.0.1:8080\" or \"[::1]:8080\""))
}

/// A network prefix length between `min` and `max` bits.
pub fn prefix_length(value: u8, min: u8, max: u8) -> Result<u8, String> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not a prefix length between {min} and {max}"))
    }
}

/// A DNS server: an IP address (port 53) or an address and port (`127.0.0.1:5353`, `[::1]:53`).
pub fn name_server(value: &str) -> Result<SocketAddr, String> {
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 53));
    }
    SocketAddr::from_str(value)
        .map_err(|_| format!("{value:?} is not a name server like \"192.0.2.53\" or \"127.0.0.1:5353\""))
}

pub fn max_body_bytes(value: usize) -> Result<usize, String> {
    const CEILING: usize = 1024 * 1024;
    if (256..=CEILING).contains(&value) { Ok(value) } else { Err(format!("{value} is outside 256..={CEILING} bytes")) }
}

pub fn header_name(value: &str) -> Result<HeaderName, String> {
    HeaderName::from_str(value).map_err(|_| format!("{value:?} is not an HTTP header name"))
}

/// An absolute `http`/`https` URL.
pub fn http_url(value: &str) -> Result<Url, String> {
    let url = Url::parse(value).map_err(|error| format!("{value:?} is not a URL ({error})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("{value:?} is not an http:// or https:// URL"));
    }
    Ok(url)
}

/// A webhook endpoint: https, or plain http only to a loopback address (the receiver gets
/// addresses, which must not cross a network in the clear).
pub fn webhook_url(value: &str) -> Result<Url, String> {
    let url = http_url(value)?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if url.scheme() != "https" && !loopback {
        return Err(format!("{value:?} must be https:// (plain http only to a loopback address)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{value:?} must not contain a user name or password"));
    }
    Ok(url)
}

/// The base of every link in mail: no credentials, query or fragment; no trailing slash.
pub fn public_url(value: &str) -> Result<Url, String> {
    let mut url = http_url(value)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{value:?} must not contain a user name or password"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{value:?} must not contain a query or fragment"));
    }
    let path = url.path().trim_end_matches('/').to_owned();
    url.set_path(&path);
    Ok(url)
}

/// Domains reserved for examples (RFC 2606): nobody can receive mail or clicks there, so a value
/// on one is a placeholder the operator has yet to fill in (the package's configuration ships
/// them).
pub fn is_reserved_example(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "example"
        || host.ends_with(".example")
        || ["example.com", "example.net", "example.org"]
            .iter()
            .any(|domain| host == *domain || host.ends_with(&format!(".{domain}")))
}

/// A public URL that is not a placeholder.
pub fn not_a_placeholder(url: Url) -> Result<Url, String> {
    if url.host_str().is_some_and(is_reserved_example) {
        return Err(format!(
            "{:?} is a placeholder on a reserved example domain; set the address people reach signupd at",
            url.as_str()
        ));
    }
    Ok(url)
}

/// A destination's URL that is not a placeholder: no sender's API lives on a reserved example
/// domain, and the shipped example (`https://lists.example.com`) left in place would only show
/// at the first delivery, as a retried DNS failure.
pub fn destination_not_a_placeholder(url: Url) -> Result<Url, String> {
    if url.host_str().is_some_and(is_reserved_example) {
        return Err(format!(
            "{:?} is a placeholder on a reserved example domain; set the URL of your sender (listmonk: its base URL)",
            url.as_str()
        ));
    }
    Ok(url)
}

/// A sender that is not a placeholder.
pub fn sender_not_a_placeholder(from: Mailbox) -> Result<Mailbox, String> {
    if is_reserved_example(from.email.domain()) {
        return Err(format!(
            "{:?} is a placeholder on a reserved example domain; set the address your mail comes from",
            from.email.to_string()
        ));
    }
    Ok(from)
}

pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A language with a catalogue: built in, or the operator's (`server.locales_dir`).
pub fn language(code: &str, locales: &Locales) -> Result<Language, String> {
    locales.find(code).ok_or_else(|| {
        let codes: Vec<String> = locales.codes().iter().map(|code| format!("{code:?}")).collect();
        format!(
            "{code:?} is not a language signupd has texts for; one of {} (or add <code>.ftl to server.locales_dir)",
            codes.join(", ")
        )
    })
}

pub fn placeholder_url() -> Url {
    Url::parse("http://127.0.0.1/").expect("a constant URL parses")
}

/// A web origin (`https://example.com[:port]`), returned in its serialised form.
pub fn origin(value: &str) -> Result<String, String> {
    let url = http_url(value)?;
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!("{value:?} is not an origin: write scheme://host[:port] with no path"));
    }
    Ok(url.origin().ascii_serialization())
}

/// Text shown to visitors and put in mail subjects: non-empty, no control characters (a CR or
/// LF would break a mail header).
pub fn display_text(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters such as line breaks".into());
    }
    Ok(value.to_owned())
}

pub fn consent_version(value: &str) -> Result<String, String> {
    let valid = !value.is_empty()
        && value.len() <= 64
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if valid {
        Ok(value.to_owned())
    } else {
        Err(format!("{value:?} must be 1-64 characters of A-Z, a-z, 0-9, '.', '-', '_'"))
    }
}

/// A mailbox such as `Newsletter <no-reply@example.com>`. lettre panics on CR/LF in a display
/// name when the message is built (DEPENDENCIES trap 5), so they are refused here.
pub fn mailbox(value: &str) -> Result<Mailbox, String> {
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters such as line breaks".into());
    }
    Mailbox::from_str(value)
        .map_err(|error| format!("{value:?} is not a mailbox like \"Name <user@example.com>\" ({error})"))
}

/// A certificate's SHA-256 as `openssl x509 -noout -fingerprint -sha256` prints it (or after
/// its `=`): 64 hex digits, colons and case ignored.
pub fn certificate_sha256(value: &str) -> Result<[u8; 32], String> {
    let value = value.rsplit_once('=').map_or(value, |(_, digits)| digits).trim();
    let digits: String = value.chars().filter(|c| *c != ':').collect();
    let bytes = hex::decode(&digits).ok().and_then(|bytes| <[u8; 32]>::try_from(bytes).ok());
    bytes.ok_or_else(|| {
        "must be the SHA-256 of the relay's certificate, 64 hex digits (colons allowed), as \
         `openssl x509 -noout -fingerprint -sha256` prints it"
            .to_owned()
    })
}

/// An EHLO name: a domain name, or an address literal for an IP (`[192.0.2.1]`).
pub fn helo_name(value: &str) -> Result<String, String> {
    let literal = value.strip_prefix('[').and_then(|rest| rest.strip_suffix(']'));
    let valid = match literal {
        Some(address) => address.parse::<IpAddr>().is_ok(),
        None => {
            matches!(url::Host::parse(value), Ok(url::Host::Domain(domain)) if domain == value.to_ascii_lowercase())
                && value.split('.').all(|label| {
                    !label.is_empty()
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        }
    };
    if valid {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "{value:?} is not a host name (letters, digits, hyphens and dots) or an address literal like [192.0.2.1]"
        ))
    }
}

pub fn smtp_host(host: &str, security: SmtpSecurity) -> Result<(), String> {
    if host.is_empty() {
        return Err("must not be empty when mail.transport = \"smtp\"".into());
    }
    if is_reserved_example(host) {
        return Err(format!("{host:?} is a placeholder on a reserved example domain; set your mail relay's host name"));
    }
    let loopback = is_loopback_host(host);
    if security == SmtpSecurity::None && !loopback {
        return Err(format!(
            "{host:?} is not a loopback relay; security = \"none\" would send mail and passwords in clear text \
             (use \"starttls\" for port 587 or \"tls\" for port 465)"
        ));
    }
    Ok(())
}

/// The cleanup schedule, parsed exactly as tokio-cron-scheduler will parse it (six fields,
/// seconds first), so a bad expression fails at start rather than when the scheduler starts.
pub fn cron_schedule(value: &str) -> Result<(), String> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Required)
        .dom_and_dow(true)
        .build()
        .parse(value)
        .map(|_| ())
        .map_err(|error| format!("{value:?} is not a cron expression with six fields, seconds first ({error})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figment_paths_become_operator_keys() {
        let path: Vec<String> = ["lists", "1", "id"].iter().map(|s| s.to_string()).collect();
        assert_eq!(operator_key(&path), "lists[1].id");
        assert_eq!(operator_key(&["server".into(), "listen".into()]), "server.listen");
    }

    #[test]
    fn origins_are_normalised_and_paths_refused() {
        assert_eq!(origin("https://Example.COM").unwrap(), "https://example.com");
        assert_eq!(origin("https://example.com:8443/").unwrap(), "https://example.com:8443");
        assert_eq!(origin("http://example.com:80").unwrap(), "http://example.com");
        for bad in ["https://example.com/signup", "example.com", "ftp://example.com", "https://a.com/?x=1"] {
            assert!(origin(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn public_url_drops_the_trailing_slash_and_refuses_queries() {
        assert_eq!(public_url("https://example.com/").unwrap().as_str(), "https://example.com/");
        assert_eq!(public_url("https://example.com/signup/").unwrap().as_str(), "https://example.com/signup");
        assert!(public_url("https://example.com/?a=b").is_err());
        assert!(public_url("https://user:pw@example.com").is_err());
        assert!(public_url("/relative").is_err());
    }

    #[test]
    fn durations_accept_human_units() {
        assert_eq!(duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(duration("48h").unwrap(), Duration::from_secs(48 * 3600));
        assert_eq!(duration("1d").unwrap(), Duration::from_secs(86_400));
        assert!(duration("ten minutes").is_err());
        assert!(positive_duration("0s").is_err());
    }

    #[test]
    fn cron_needs_six_fields() {
        assert!(cron_schedule("0 23 * * * *").is_ok());
        assert!(cron_schedule("23 * * * *").is_err());
        assert!(cron_schedule("every hour").is_err());
    }

    #[test]
    fn cleartext_smtp_only_to_loopback() {
        assert!(smtp_host("127.0.0.1", SmtpSecurity::None).is_ok());
        assert!(smtp_host("localhost", SmtpSecurity::None).is_ok());
        assert!(smtp_host("::1", SmtpSecurity::None).is_ok());
        assert!(smtp_host("smtp.bakery.test", SmtpSecurity::None).is_err());
        assert!(smtp_host("smtp.bakery.test", SmtpSecurity::StartTls).is_ok());
    }

    #[test]
    fn a_certificate_pin_is_read_as_openssl_prints_it() {
        let printed = "sha256 Fingerprint=AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";
        let expected = certificate_sha256(&printed.replace("sha256 Fingerprint=", "").to_lowercase()).unwrap();
        assert_eq!(certificate_sha256(printed).unwrap(), expected);
        assert_eq!(expected[..3], [0xAB, 0xCD, 0xEF]);
        for wrong in ["AB:CD", "zz".repeat(32).as_str(), &"ab".repeat(33)] {
            assert!(certificate_sha256(wrong).unwrap_err().contains("64 hex digits"), "{wrong}");
        }
    }

    #[test]
    fn an_ehlo_name_is_a_host_name_or_an_address_literal() {
        for good in ["mail.bakery.test", "vm", "[192.0.2.1]", "[::1]"] {
            assert_eq!(helo_name(good).as_deref(), Ok(good));
        }
        for bad in ["mail bakery", "mail..bakery", "[not-an-ip]", "mail_1.bakery.test", "-"] {
            assert!(helo_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reserved_example_domains_are_placeholders() {
        for host in ["example.com", "signup.example.com", "EXAMPLE.ORG.", "a.b.example.net", "shop.example"] {
            assert!(is_reserved_example(host), "{host}");
        }
        for host in ["example.co", "myexample.com", "example.com.evil.test", "signup.bakery.test", "127.0.0.1"] {
            assert!(!is_reserved_example(host), "{host}");
        }
        assert!(smtp_host("smtp.example.com", SmtpSecurity::StartTls).unwrap_err().contains("placeholder"));
        assert!(not_a_placeholder(public_url("https://signup.example.com").unwrap()).is_err());
        assert!(not_a_placeholder(public_url("https://signup.bakery.test").unwrap()).is_ok());
    }

    #[test]
    fn mailboxes_with_line_breaks_are_refused() {
        assert!(mailbox("News <no-reply@example.com>").is_ok());
        assert!(mailbox("News\r\nBcc: x@y.com <no-reply@example.com>").is_err());
    }
}
