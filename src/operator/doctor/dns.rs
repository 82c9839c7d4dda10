//! Each list's From domain in DNS: SPF, DMARC and, with `[mail.dkim]`, the DKIM key.
//!
//! The records are asked through `signup.dns_servers` when set, else the system's resolver (as
//! `signup.check_mx` asks), and parsed by `mail-auth` (Stalwart's SPF, DKIM and DMARC library),
//! never by hand. The DKIM check goes one step further than reading the record: it signs a probe
//! message with the configured private key, as signupd signs its mail, and verifies the signature
//! against the key published at the selector, as a receiver would. A key that does not match,
//! a revoked key and a missing record are all problems: every mail would fail DKIM.
//!
//! A DNS failure (timeout, SERVFAIL, REFUSED) is a warning naming it: the doctor cannot tell,
//! so it says so and moves on.
//!
//! SPF is not only read but evaluated, by `mail-auth` as a receiver evaluates it: for each
//! address the relay's host resolves to (through the same resolver), whether the record lets
//! that address send as `doctor@<domain>`. A record that parses but leaves the relay out is the
//! common mistake, and every mail then fails SPF.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::config::{ResolveHosts, ResolverOpts};
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use lettre::message::header::ContentType;
use mail_auth::common::parse::TxtRecordParser;
use mail_auth::dkim::DkimError;
use mail_auth::dmarc::{Dmarc, Policy};
use mail_auth::spf::verify::SpfParameters;
use mail_auth::spf::{Mechanism, Qualifier, Spf};
use mail_auth::{AuthenticatedMessage, DkimResult, DnsError, MessageAuthenticator, SpfResult};

use super::{Check, Verdict};
use crate::config::{Config, DkimAlgorithm, DkimConfig, MailTransportKind};

const AREA: &str = "dns";
/// How long one try of one query waits for an answer (one retry).
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// Each lookup (tries and retries together) is cut off after this long.
const LOOKUP_DEADLINE: Duration = Duration::from_secs(6);

/// The DNS checks of `config`: SPF and DMARC of each distinct From domain of the lists, then the
/// DKIM key of `[mail.dkim]` (or the note that the relay must sign).
pub async fn checks(config: &Config) -> Vec<Check> {
    let domains: BTreeSet<String> =
        config.lists.iter().map(|list| list.from.email.domain().to_ascii_lowercase()).collect();
    let authenticator = match authenticator(&config.signup.dns_servers) {
        Ok(authenticator) => authenticator,
        Err(error) => {
            return vec![Check::warning(
                AREA,
                "DNS resolver",
                format!("cannot set up the DNS resolver: {error}"),
                "set signup.dns_servers to name servers this machine can reach, or fix /etc/resolv.conf",
            )];
        }
    };
    let relay = relay_addresses(&authenticator, config).await;
    let helo = config.helo_name().unwrap_or_else(|| "localhost".into());
    let mut checks = Vec::new();
    for domain in &domains {
        let record = spf(&authenticator, domain).await;
        checks.push(match &relay {
            Some(relay) if record.verdict != Verdict::Problem => {
                spf_for_relay(&authenticator, domain, &helo, relay, record).await
            }
            _ => record,
        });
        checks.push(dmarc(&authenticator, domain).await);
    }
    checks.push(match &config.mail.dkim {
        Some(dkim) => dkim_key(&authenticator, dkim).await,
        None => Check::warning(
            AREA,
            "DKIM",
            "no [mail.dkim]: the relay must sign",
            "make sure the relay signs with a key published under each From domain (most providers do once the \
             domain is verified with them), or set [mail.dkim] so signupd signs",
        ),
    });
    checks
}

/// The relay's host and the addresses it resolves to through `authenticator`'s resolver (or
/// why not); `None` when mail goes to no relay.
struct RelayAddresses {
    host: String,
    addresses: Result<Vec<IpAddr>, String>,
}

async fn relay_addresses(authenticator: &MessageAuthenticator, config: &Config) -> Option<RelayAddresses> {
    if config.mail.transport != MailTransportKind::Smtp {
        return None;
    }
    let host = config.mail.smtp.host.clone();
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(address) = literal.parse::<IpAddr>() {
        return Some(RelayAddresses { host, addresses: Ok(vec![address]) });
    }
    let addresses = match tokio::time::timeout(LOOKUP_DEADLINE, authenticator.0.lookup_ip(host.as_str())).await {
        Err(_) => Err(format!("no answer in {} s", LOOKUP_DEADLINE.as_secs())),
        Ok(Err(error)) => Err(error.to_string()),
        Ok(Ok(found)) => {
            let addresses: Vec<IpAddr> = found.iter().collect();
            if addresses.is_empty() { Err("no address".into()) } else { Ok(addresses) }
        }
    };
    Some(RelayAddresses { host, addresses })
}

/// The SPF record's check `record` (not a problem already), with the record evaluated for each
/// of the relay's addresses: a problem when it does not let one of them send.
async fn spf_for_relay(
    authenticator: &MessageAuthenticator,
    domain: &str,
    helo: &str,
    relay: &RelayAddresses,
    record: Check,
) -> Check {
    let host = &relay.host;
    let addresses = match &relay.addresses {
        Ok(addresses) => addresses,
        Err(error) => {
            return Check::warning(
                AREA,
                record.name,
                format!(
                    "{}; the relay's host {host} does not resolve ({error}), so SPF was not tried for it",
                    record.saw
                ),
                record.todo.unwrap_or_else(|| "check mail.smtp.host and signup.dns_servers".into()),
            );
        }
    };
    let sender = format!("doctor@{domain}");
    let mut refused = Vec::new();
    let mut unsure = Vec::new();
    for address in addresses {
        let evaluated = SpfParameters::verify_mail_from(*address, helo, "signupd-doctor", &sender);
        let result = match tokio::time::timeout(LOOKUP_DEADLINE, authenticator.verify_spf(evaluated)).await {
            Ok(output) => output.result(),
            Err(_) => SpfResult::TempError,
        };
        match result {
            SpfResult::Pass => {}
            SpfResult::Fail | SpfResult::SoftFail => refused.push(format!("{address} ({})", spf_words(result))),
            other => unsure.push(format!("{address} ({})", spf_words(other))),
        }
    }
    let relay_todo = format!(
        "add the relay to the SPF record at {domain}, before its all: ip4:/ip6: with its addresses, or your \
         provider's include:"
    );
    if !refused.is_empty() {
        return Check::problem(
            AREA,
            record.name,
            format!(
                "{}: it does not let the relay {host} send for {domain}: {}; receivers fail its mail's SPF",
                record.saw,
                refused.join(", ")
            ),
            relay_todo,
        );
    }
    if !unsure.is_empty() {
        return Check::warning(
            AREA,
            record.name,
            format!("{}: for the relay {host}, SPF gives {}", record.saw, unsure.join(", ")),
            record.todo.unwrap_or(relay_todo),
        );
    }
    let shown: Vec<String> = addresses.iter().map(ToString::to_string).collect();
    let saw = format!("{}; lets the relay {host} ({}) send", record.saw, shown.join(", "));
    match record.todo {
        Some(todo) => Check::warning(AREA, record.name, saw, todo),
        None => Check::ok(AREA, record.name, saw),
    }
}

/// An SPF result as RFC 7208 names it, with what it means for the relay.
fn spf_words(result: SpfResult) -> &'static str {
    match result {
        SpfResult::Pass => "pass",
        SpfResult::Fail => "fail: it may not send",
        SpfResult::SoftFail => "softfail: it should not send",
        SpfResult::Neutral => "neutral: the record says nothing about it",
        SpfResult::None => "none: no record",
        SpfResult::TempError => "temperror: a lookup failed",
        SpfResult::PermError => "permerror: the record cannot be evaluated",
    }
}

/// A resolver asking `servers`, or the system's when empty; the same settings as
/// `domain_policy::mx` (short timeout, one retry, no hosts file).
pub(super) fn authenticator(servers: &[SocketAddr]) -> anyhow::Result<MessageAuthenticator> {
    let (config, mut options) = if servers.is_empty() {
        hickory_resolver::system_conf::read_system_conf()?
    } else {
        (crate::door::domain_policy::mx::name_servers(servers), ResolverOpts::default())
    };
    options.timeout = QUERY_TIMEOUT;
    options.attempts = 1;
    options.use_hosts_file = ResolveHosts::Never;
    Ok(MessageAuthenticator::new(config, options)?)
}

/// What a TXT query found.
enum Txt {
    /// The name's TXT records, each with its strings joined.
    Records(Vec<Vec<u8>>),
    /// No such name, or no TXT record at it.
    None,
    /// No answer to go by.
    Failed(String),
}

async fn txt(authenticator: &MessageAuthenticator, name: &str) -> Txt {
    let Ok(mut fqdn) = Name::from_ascii(name) else {
        return Txt::Failed(format!("{name} is not a DNS name"));
    };
    fqdn.set_fqdn(true);
    let lookup = authenticator.0.lookup(fqdn, RecordType::TXT);
    match tokio::time::timeout(LOOKUP_DEADLINE, lookup).await {
        Err(_) => Txt::Failed(format!("no answer in {} s", LOOKUP_DEADLINE.as_secs())),
        Ok(Err(error)) if error.is_nx_domain() || error.is_no_records_found() => Txt::None,
        Ok(Err(error)) => Txt::Failed(error.to_string()),
        Ok(Ok(lookup)) => {
            let records: Vec<Vec<u8>> = lookup
                .answers()
                .iter()
                .filter_map(|record| match &record.data {
                    RData::TXT(txt) => Some(txt.txt_data.concat()),
                    _ => None,
                })
                .collect();
            if records.is_empty() { Txt::None } else { Txt::Records(records) }
        }
    }
}

/// The records at a name that are of type `T`: each one's text and how it parsed. A record that
/// `mail-auth` calls "not of this type" (no or another version tag) is not counted.
fn of_type<T: TxtRecordParser>(records: &[Vec<u8>]) -> Vec<(String, mail_auth::Result<T>)> {
    records
        .iter()
        .filter_map(|record| match T::parse(record) {
            Err(mail_auth::Error::Dns(DnsError::InvalidRecordType)) => None,
            parsed => Some((String::from_utf8_lossy(record).into_owned(), parsed)),
        })
        .collect()
}

fn dns_failure(name: String, asked: &str, error: &str) -> Check {
    Check::warning(
        AREA,
        name,
        format!("cannot ask for the TXT record at {asked}: {error}"),
        "check that signup.dns_servers (or the system's resolver) answers, then run signupd doctor again",
    )
}

async fn spf(authenticator: &MessageAuthenticator, domain: &str) -> Check {
    let name = format!("SPF of {domain}");
    let records = match txt(authenticator, domain).await {
        Txt::Failed(error) => return dns_failure(name, domain, &error),
        Txt::None => Vec::new(),
        Txt::Records(records) => records,
    };
    let spf = of_type::<Spf>(&records);
    let publish = format!(
        "publish one TXT record at {domain} that names your relay, e.g. \"v=spf1 include:<your provider's SPF domain> \
         ~all\" (or -all)"
    );
    let (text, record) = match spf.as_slice() {
        [] => {
            return Check::warning(
                AREA,
                name,
                format!("no SPF record at {domain}: receivers may reject its mail or file it as spam"),
                publish,
            );
        }
        [(text, record)] => (text, record),
        several => {
            let texts: Vec<&str> = several.iter().map(|(text, _)| text.as_str()).collect();
            return Check::problem(
                AREA,
                name,
                format!(
                    "{} SPF records at {domain} (\"{}\"): receivers treat that as an error",
                    several.len(),
                    texts.join("\", \"")
                ),
                "merge them into one TXT record starting v=spf1",
            );
        }
    };
    let record = match record {
        Ok(record) => record,
        Err(error) => {
            return Check::problem(
                AREA,
                name,
                format!("the SPF record \"{text}\" does not parse ({error})"),
                format!("correct it (RFC 7208); {publish}"),
            );
        }
    };
    let all = record.directives.iter().find(|directive| directive.mechanism == Mechanism::All);
    match all.map(|directive| &directive.qualifier) {
        Some(Qualifier::Pass) => Check::problem(
            AREA,
            name,
            format!("\"{text}\" ends in +all: anyone may send mail as {domain}"),
            "replace +all (or a bare all) with ~all or -all, after the mechanisms that name your relay",
        ),
        Some(Qualifier::Neutral) => Check::warning(
            AREA,
            name,
            format!("\"{text}\" ends in ?all: it says nothing about other senders"),
            "replace ?all with ~all or -all",
        ),
        None if record.redirect.is_none() => Check::warning(
            AREA,
            name,
            format!("\"{text}\" has no all: it says nothing about other senders"),
            "end it with ~all or -all",
        ),
        _ => Check::ok(AREA, name, format!("\"{text}\"")),
    }
}

async fn dmarc(authenticator: &MessageAuthenticator, domain: &str) -> Check {
    let name = format!("DMARC of {domain}");
    let at = format!("_dmarc.{domain}");
    let records = match txt(authenticator, &at).await {
        Txt::Failed(error) => return dns_failure(name, &at, &error),
        Txt::None => Vec::new(),
        Txt::Records(records) => records,
    };
    let dmarc = of_type::<Dmarc>(&records);
    let start = format!(
        "publish a TXT record at {at}: \"v=DMARC1; p=none; rua=mailto:<an address that reads the reports>\" to \
         start, then p=quarantine or p=reject once the reports show your mail passes"
    );
    let (text, record) = match dmarc.as_slice() {
        [] => {
            return Check::warning(
                AREA,
                name,
                format!("no DMARC record at {at}: large receivers expect one from bulk senders"),
                start,
            );
        }
        [(text, record)] => (text, record),
        several => {
            return Check::problem(
                AREA,
                name,
                format!("{} DMARC records at {at}: receivers then apply none", several.len()),
                "keep one TXT record starting v=DMARC1",
            );
        }
    };
    match record {
        Err(error) => Check::problem(
            AREA,
            name,
            format!("the DMARC record \"{text}\" does not parse ({error})"),
            format!("correct it (RFC 7489); {start}"),
        ),
        Ok(record) => match record.p {
            Policy::Quarantine | Policy::Reject => Check::ok(AREA, name, format!("\"{text}\"")),
            Policy::None | Policy::Unspecified => Check::warning(
                AREA,
                name,
                format!("\"{text}\": p=none only monitors; mail that fails is still delivered"),
                "once the aggregate reports show your mail passing, move to p=quarantine, then p=reject",
            ),
        },
    }
}

async fn dkim_key(authenticator: &MessageAuthenticator, dkim: &DkimConfig) -> Check {
    let at = format!("{}._domainkey.{}", dkim.selector, dkim.domain);
    let name = format!("DKIM key {at}");
    let probe = match signed_probe(dkim) {
        Ok(probe) => probe,
        Err(error) => {
            return Check::problem(
                AREA,
                name,
                error,
                "point mail.dkim.private_key_file at the private key (RSA: PKCS#1 PEM; Ed25519: the base64 32-byte seed)",
            );
        }
    };
    let Some(message) = AuthenticatedMessage::parse(&probe) else {
        return Check::problem(AREA, name, "the signed probe message does not parse", "report this as a signupd bug");
    };
    let verified = tokio::time::timeout(LOOKUP_DEADLINE, authenticator.verify_dkim(&message)).await;
    let Ok(outputs) = verified else {
        return dns_failure(name, &at, &format!("no answer in {} s", LOOKUP_DEADLINE.as_secs()));
    };
    let publish = format!(
        "publish the public key of mail.dkim.private_key_file as a TXT record at {at}: \"v=DKIM1; k={}; p=<base64 \
         public key>\"",
        match dkim.algorithm {
            DkimAlgorithm::Rsa => "rsa",
            DkimAlgorithm::Ed25519 => "ed25519",
        }
    );
    let Some(output) = outputs.first() else {
        return Check::problem(AREA, name, "the probe message carries no signature", "report this as a signupd bug");
    };
    match output.result() {
        DkimResult::Pass => Check::ok(
            AREA,
            name,
            format!("the published key verifies a signature made with {}", dkim.private_key_file.display()),
        ),
        DkimResult::TempError(error) => dns_failure(name, &at, &error.to_string()),
        DkimResult::PermError(mail_auth::Error::Dns(DnsError::RecordNotFound(code))) => Check::problem(
            AREA,
            name,
            format!("no DKIM key at {at} ({code}): every mail signupd signs fails DKIM"),
            publish,
        ),
        DkimResult::PermError(mail_auth::Error::Dkim(DkimError::RevokedPublicKey)) => Check::problem(
            AREA,
            name,
            format!("the key at {at} is revoked (empty p=): every mail signupd signs fails DKIM"),
            format!("{publish}, or change mail.dkim.selector to a selector that has it"),
        ),
        DkimResult::PermError(mail_auth::Error::Dns(DnsError::InvalidRecordType)) => Check::problem(
            AREA,
            name,
            format!("no TXT record at {at} is a DKIM key (v=DKIM1 with p=): every mail signupd signs fails DKIM"),
            publish,
        ),
        DkimResult::PermError(error) => Check::problem(
            AREA,
            name,
            format!("the DKIM record at {at} is not usable ({error}): every mail signupd signs fails DKIM"),
            publish,
        ),
        DkimResult::Fail(_) => Check::problem(
            AREA,
            name,
            format!(
                "the key published at {at} is not the public key of {}: every mail signupd signs fails DKIM",
                dkim.private_key_file.display()
            ),
            format!("{publish}, or set mail.dkim.private_key_file to the key that was published"),
        ),
        DkimResult::Neutral(error) => Check::problem(
            AREA,
            name,
            format!("a signature made with the configured key cannot be checked ({error})"),
            publish,
        ),
        DkimResult::None => {
            Check::problem(AREA, name, "the probe signature was not checked", "report this as a signupd bug")
        }
    }
}

/// A small message signed with `[mail.dkim]`'s key by the signer signupd's mail is signed with,
/// formatted for verifying.
fn signed_probe(dkim: &DkimConfig) -> Result<Vec<u8>, String> {
    let signer = crate::outbound::mail::transport::dkim_signer(dkim).map_err(|error| format!("{error:#}"))?;
    let address = format!("doctor@{}", dkim.domain);
    let mailbox = address.parse().map_err(|error| format!("mail.dkim.domain {:?}: {error}", dkim.domain))?;
    let mut message = lettre::Message::builder()
        .from(lettre::message::Mailbox::new(None, mailbox))
        .to(lettre::message::Mailbox::new(None, address.parse().expect("parsed above")))
        .subject("signupd doctor: DKIM probe")
        .header(ContentType::TEXT_PLAIN)
        .body(String::from("A probe signed to check the published DKIM key; never sent.\r\n"))
        .map_err(|error| format!("cannot build the probe message: {error}"))?;
    message.sign(&signer);
    Ok(message.formatted())
}
