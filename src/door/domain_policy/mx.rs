//! `signup.check_mx`: does an address's domain say it receives mail at all?
//!
//! A domain can receive mail when it has an MX record (RFC 5321 §5.1), or, without one, an A or
//! AAAA record (the "implicit MX" of the same section). It says it receives none when it does
//! not exist (NXDOMAIN), when it has neither kind of record, or when its only MX is the null MX
//! of RFC 7505 (`0 .`). Those domains are refused; every other outcome — a timeout, SERVFAIL,
//! REFUSED, a network error — accepts the address: a visitor is never turned away because a
//! name server was slow.
//!
//! # Cost and caching
//!
//! One MX query, and only when it finds no MX, an A and an AAAA query side by side. Each try
//! waits at most [`QUERY_TIMEOUT`] with one retry, and the whole check is cut off after
//! [`CHECK_DEADLINE`], so a dead name server costs a visitor a few seconds once per request.
//! hickory's response cache keeps answers for their TTL, and "no such domain" / "no such
//! record" for the SOA's negative TTL, at least [`NEGATIVE_MIN_TTL`] (so a negative answer
//! without an SOA is cached too) and at most [`NEGATIVE_MAX_TTL`] (so a domain that has just
//! set up its mail is not refused for days). Failures are not cached.
//!
//! # What the timing can tell
//!
//! The check runs before the rate limit and before any database access, and it depends only on
//! the domain, never on whether the address (or anyone at the domain) is pending, confirmed or
//! suppressed: it cannot reveal an address's state (the contract's "one answer for every valid
//! address"). It does depend on the domain: a domain that is in the cache answers faster than
//! one that is not, so a prober can tell that *someone* asked about that domain recently — a
//! fact about the cache, which the prober's own first request also creates, not about a
//! subscriber.
//!
//! # What this module must not do
//!
//! See an address: it gets the domain only. Its log lines name the domain (not personal data on
//! its own) and never the local part.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::NetError;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::{Resolver, TokioResolver};

/// How long one try of one query waits for an answer.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// The whole check gives up (and accepts the address) after this long.
pub const CHECK_DEADLINE: Duration = Duration::from_secs(4);
/// A negative answer is cached at least this long, even without an SOA to say how long.
pub const NEGATIVE_MIN_TTL: Duration = Duration::from_secs(60);
/// A negative answer is cached at most this long, whatever its SOA says.
pub const NEGATIVE_MAX_TTL: Duration = Duration::from_secs(3600);

/// The resolver the check asks; cheap to clone (the cache is shared).
#[derive(Debug, Clone)]
pub struct MailDomainCheck {
    resolver: TokioResolver,
}

/// What the DNS said about one domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It has an MX, or an A/AAAA record, or the DNS could not tell.
    Accepts,
    /// It does not exist, has no mail or address records, or publishes a null MX.
    NoMail,
}

/// One query's outcome, as far as the verdict cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// At least one usable record of the type asked.
    Found,
    /// MX only: every MX record is the null MX (RFC 7505 §3).
    NullMx,
    /// The name exists but has no record of this type (NOERROR, no answer).
    NoRecords,
    /// The name does not exist (NXDOMAIN).
    NoDomain,
    /// No usable answer: timeout, SERVFAIL, REFUSED, network error.
    Unknown,
}

impl MailDomainCheck {
    /// A resolver that asks `servers` (UDP, falling back to TCP for truncated answers), or the
    /// system's resolvers (`/etc/resolv.conf`) when `servers` is empty.
    pub fn new(servers: &[SocketAddr]) -> anyhow::Result<Self> {
        let mut builder = if servers.is_empty() {
            TokioResolver::builder_tokio()
                .context("signup.check_mx: cannot read the system's resolver configuration (/etc/resolv.conf); set signup.dns_servers")?
        } else {
            Resolver::builder_with_config(name_servers(servers), TokioRuntimeProvider::default())
        };
        let options = builder.options_mut();
        options.timeout = QUERY_TIMEOUT;
        // One retry: a single lost UDP datagram should not decide.
        options.attempts = 1;
        // Mail domains are public names; a hosts file entry says nothing about mail.
        options.use_hosts_file = ResolveHosts::Never;
        options.negative_min_ttl = Some(NEGATIVE_MIN_TTL);
        options.negative_max_ttl = Some(NEGATIVE_MAX_TTL);
        let resolver = builder.build().context("signup.check_mx: cannot set up the DNS resolver")?;
        Ok(Self { resolver })
    }

    /// Whether `domain` (lowercase punycode, as an address's domain) can receive mail; see the
    /// module documentation for what counts.
    pub async fn check(&self, domain: &str) -> Verdict {
        self.check_with_hosts(domain).await.0
    }

    /// [`Self::check`], with the MX records it found (preference, host), for finding the
    /// domain's webmail provider without asking again; none when the verdict did not come from
    /// an MX answer.
    pub async fn check_with_hosts(&self, domain: &str) -> (Verdict, Vec<(u16, String)>) {
        match tokio::time::timeout(CHECK_DEADLINE, self.ask(domain)).await {
            Ok(checked) => checked,
            Err(_) => {
                tracing::debug!(domain, "MX check: no answer in time; address accepted");
                (Verdict::Accepts, Vec::new())
            }
        }
    }

    async fn ask(&self, domain: &str) -> (Verdict, Vec<(u16, String)>) {
        let Ok(name) = fully_qualified(domain) else {
            tracing::debug!(domain, "MX check: not a DNS name; address accepted");
            return (Verdict::Accepts, Vec::new());
        };
        let lookup = self.resolver.lookup(name.clone(), RecordType::MX).await;
        let hosts = lookup.as_ref().map(exchanges).unwrap_or_default();
        let mx = answer(lookup, RecordType::MX, domain);
        let (a, aaaa) = match mx {
            Answer::Found => return (Verdict::Accepts, hosts),
            Answer::Unknown => return (Verdict::Accepts, Vec::new()),
            Answer::NullMx | Answer::NoDomain => return (Verdict::NoMail, Vec::new()),
            Answer::NoRecords => tokio::join!(
                self.resolver.lookup(name.clone(), RecordType::A),
                self.resolver.lookup(name, RecordType::AAAA)
            ),
        };
        let a = answer(a, RecordType::A, domain);
        let aaaa = answer(aaaa, RecordType::AAAA, domain);
        (verdict_without_mx(a, aaaa), Vec::new())
    }
}

/// An MX answer's mail hosts (preference, host), without the null MX.
fn exchanges(lookup: &hickory_resolver::lookup::Lookup) -> Vec<(u16, String)> {
    lookup
        .answers()
        .iter()
        .filter_map(|record| match &record.data {
            RData::MX(mx) if !mx.exchange.is_root() => Some((mx.preference, mx.exchange.to_ascii())),
            _ => None,
        })
        .collect()
}

/// `domain` as a fully qualified name, so the resolver's search list never turns `example.com`
/// into `example.com.corp.internal`.
fn fully_qualified(domain: &str) -> Result<Name, hickory_resolver::proto::ProtoError> {
    Name::from_ascii(domain).map(|mut name| {
        name.set_fqdn(true);
        name
    })
}

/// RFC 5321 §5.1: without an MX, the domain's own address records are where mail goes.
fn verdict_without_mx(a: Answer, aaaa: Answer) -> Verdict {
    if [a, aaaa].iter().any(|answer| matches!(answer, Answer::Found | Answer::Unknown)) {
        Verdict::Accepts
    } else {
        Verdict::NoMail
    }
}

fn answer(result: Result<hickory_resolver::lookup::Lookup, NetError>, asked: RecordType, domain: &str) -> Answer {
    match result {
        Ok(lookup) => classify(lookup.answers().iter().map(|record| &record.data), asked),
        Err(error) if error.is_nx_domain() => Answer::NoDomain,
        Err(error) if error.is_no_records_found() => Answer::NoRecords,
        Err(error) => {
            tracing::debug!(domain, record_type = %asked, error = %error, "MX check: DNS failure");
            Answer::Unknown
        }
    }
}

/// The records of the type asked among an answer's (which may also hold the CNAMEs that led to
/// them).
fn classify<'a>(records: impl Iterator<Item = &'a RData>, asked: RecordType) -> Answer {
    let mut found = false;
    let mut usable = false;
    for data in records {
        match data {
            RData::MX(mx) if asked == RecordType::MX => {
                found = true;
                // RFC 7505 §3: the null MX has the root as its exchange.
                usable |= !mx.exchange.is_root();
            }
            RData::A(_) if asked == RecordType::A => (found, usable) = (true, true),
            RData::AAAA(_) if asked == RecordType::AAAA => (found, usable) = (true, true),
            _ => {}
        }
    }
    match (found, usable) {
        (false, _) => Answer::NoRecords,
        (true, true) => Answer::Found,
        (true, false) => Answer::NullMx,
    }
}

/// `servers` as a resolver's name servers: UDP, falling back to TCP for truncated answers
/// (`signupd doctor` asks through the same).
pub fn name_servers(servers: &[SocketAddr]) -> ResolverConfig {
    let name_servers = servers
        .iter()
        .map(|server| {
            let mut config = NameServerConfig::udp_and_tcp(server.ip());
            for connection in &mut config.connections {
                connection.port = server.port();
            }
            config
        })
        .collect();
    ResolverConfig::from_name_servers(name_servers)
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use hickory_resolver::proto::rr::rdata::{A, AAAA, CNAME, MX};

    use super::*;

    fn mx(exchange: &str) -> RData {
        RData::MX(MX::new(10, Name::from_ascii(exchange).unwrap()))
    }

    #[test]
    fn an_mx_answer_is_classified_by_its_exchanges() {
        let null = RData::MX(MX::new(0, Name::root()));
        let cname = RData::CNAME(CNAME(Name::from_ascii("alias.example.").unwrap()));
        let cases: [(&str, Vec<RData>, Answer); 5] = [
            ("one MX", vec![mx("mail.example.")], Answer::Found),
            ("null MX", vec![null.clone()], Answer::NullMx),
            ("null MX beside a real one (misconfigured; mail can go)", vec![null, mx("mail.example.")], Answer::Found),
            ("only a CNAME", vec![cname.clone()], Answer::NoRecords),
            ("a CNAME to an MX", vec![cname, mx("mail.example.")], Answer::Found),
        ];
        for (case, records, expected) in cases {
            assert_eq!(classify(records.iter(), RecordType::MX), expected, "{case}");
        }
    }

    #[test]
    fn address_records_count_only_for_their_own_type() {
        let a = RData::A(A(Ipv4Addr::new(192, 0, 2, 1)));
        let aaaa = RData::AAAA(AAAA(Ipv6Addr::LOCALHOST));
        assert_eq!(classify([a.clone()].iter(), RecordType::A), Answer::Found);
        assert_eq!(classify([aaaa.clone()].iter(), RecordType::AAAA), Answer::Found);
        assert_eq!(classify([aaaa].iter(), RecordType::A), Answer::NoRecords);
        assert_eq!(classify([a].iter(), RecordType::MX), Answer::NoRecords);
    }

    #[test]
    fn without_an_mx_any_address_record_or_any_doubt_accepts() {
        use Answer::*;
        let cases = [
            (Found, NoRecords, Verdict::Accepts),
            (NoRecords, Found, Verdict::Accepts),
            (Unknown, NoRecords, Verdict::Accepts),
            (NoDomain, Unknown, Verdict::Accepts),
            (NoRecords, NoRecords, Verdict::NoMail),
            (NoDomain, NoDomain, Verdict::NoMail),
            (NoRecords, NoDomain, Verdict::NoMail),
        ];
        for (a, aaaa, expected) in cases {
            assert_eq!(verdict_without_mx(a, aaaa), expected, "A {a:?}, AAAA {aaaa:?}");
        }
    }
}
