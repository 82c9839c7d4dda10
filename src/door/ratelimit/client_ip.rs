//! Who the client is (`docs/http-api.md`). The TCP peer, unless the peer is a trusted proxy and
//! the request carries the configured client-IP header naming someone. Anything else — a spoofed
//! header from an untrusted peer, garbage — falls back to the peer, so a visitor cannot choose
//! whose budget they spend.
//!
//! Two ways a trusted proxy names the client:
//!
//! - **A single-address header** (`CF-Connecting-IP`, `X-Real-IP`, …): exactly one header line
//!   holding exactly one valid IP. A list, a repeated header or garbage is ignored (the peer is
//!   the client): a proxy that sets such a header overwrites it, so two values mean it was not
//!   the proxy that wrote them.
//! - **`X-Forwarded-For`**, read only when an operator names it as `client_ip_header` (any case).
//!   Every proxy appends the address it was talked to from, so only the right end of the chain
//!   was written by proxies; the left end is whatever the visitor sent. The chain (every
//!   `X-Forwarded-For` line, in order, joined by commas) is read from the right, skipping each
//!   address in `trusted_proxies`; the first address that is not trusted is the client (nginx's
//!   `real_ip_recursive on`). So behind nginx behind Cloudflare, `X-Forwarded-For: <anything>,
//!   <visitor>, <Cloudflare edge>` from loopback is the visitor, whatever `<anything>` says.
//!
//! Decisions for the chain:
//! - every entry trusted: the leftmost is the client (it is the farthest hop anyone vouches for);
//! - an entry that is not an IP address (garbage, an empty entry, an address with a port, a value
//!   that is not ASCII) stops the walk where it is met, and the last trusted address seen — or
//!   the peer, if none — is the client. Whatever lies left of garbage was not written by a proxy
//!   we trust in a form we understand, so it is not believed; the trusted hop that passed the
//!   garbage on is the client, which counts such requests together rather than letting them pick
//!   a budget;
//! - IPv4-mapped IPv6 entries (`::ffff:203.0.113.7`) are compared and counted as IPv4.

use std::fmt;
use std::net::IpAddr;

use actix_web::http::header::{self, HeaderMap};
use ipnet::IpNet;

use crate::config::ServerConfig;
use crate::domain::TrustedProxies;

/// The client's IP address as the rate limit sees it.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, server: &ServerConfig) -> IpAddr {
    let peer = peer.to_canonical();
    if !server.trusted_proxies.contains(peer) {
        return peer;
    }
    // `HeaderName` is lowercase whatever case the operator wrote, so this is case-insensitive.
    if server.client_ip_header == header::X_FORWARDED_FOR {
        return rightmost_untrusted(peer, headers, &server.trusted_proxies);
    }
    let mut values = headers.get_all(&server.client_ip_header);
    let (Some(value), None) = (values.next(), values.next()) else {
        return peer;
    };
    value.to_str().ok().and_then(parse_ip).unwrap_or(peer)
}

/// The `X-Forwarded-For` chain read from the right (module docs); `peer` is trusted.
fn rightmost_untrusted(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let mut last_trusted = peer;
    for line in headers.get_all(header::X_FORWARDED_FOR).rev() {
        let Ok(line) = line.to_str() else {
            return last_trusted;
        };
        for entry in line.rsplit(',') {
            let Some(ip) = parse_ip(entry) else {
                return last_trusted;
            };
            if !trusted.contains(ip) {
                return ip;
            }
            last_trusted = ip;
        }
    }
    last_trusted
}

fn parse_ip(text: &str) -> Option<IpAddr> {
    text.trim().parse::<IpAddr>().ok().map(|ip| ip.to_canonical())
}

/// The network a client is counted by: one IPv4 address, or an IPv6 prefix (default /64: one
/// connection usually holds a whole /64 and could use a new address for every request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientNet(IpNet);

impl ClientNet {
    pub fn of(ip: IpAddr, ipv6_prefix: u8) -> Self {
        let net = match ip.to_canonical() {
            IpAddr::V4(v4) => IpNet::from(IpAddr::V4(v4)),
            IpAddr::V6(v6) => ipnet::Ipv6Net::new(v6, ipv6_prefix.min(128))
                .map(|net| IpNet::V6(net.trunc()))
                .unwrap_or_else(|_| IpNet::from(IpAddr::V6(v6))),
        };
        Self(net)
    }
}

impl fmt::Display for ClientNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn server(extra: &str) -> ServerConfig {
        Config::from_toml(&format!("[server]\n{extra}\n[[lists]]\nid = \"a\"")).unwrap().server
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    const PEER: &str = "127.0.0.1";

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_claims() {
        let ip = client_ip(PEER.parse().unwrap(), &headers(&[("cf-connecting-ip", "203.0.113.7")]), &server(""));
        assert_eq!(ip.to_string(), PEER);
    }

    #[test]
    fn a_trusted_peer_names_the_client() {
        let config = server("trusted_proxies = [\"127.0.0.1\"]");
        let ip = client_ip(PEER.parse().unwrap(), &headers(&[("CF-Connecting-IP", " 203.0.113.7 ")]), &config);
        assert_eq!(ip.to_string(), "203.0.113.7");
    }

    #[test]
    fn anything_but_one_valid_ip_falls_back_to_the_peer() {
        let config = server("trusted_proxies = [\"127.0.0.1\"]");
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("no header", &[]),
            ("a list", &[("cf-connecting-ip", "203.0.113.7, 198.51.100.1")]),
            ("garbage", &[("cf-connecting-ip", "not-an-ip")]),
            ("two headers", &[("cf-connecting-ip", "203.0.113.7"), ("cf-connecting-ip", "198.51.100.1")]),
            ("x-forwarded-for is not read", &[("x-forwarded-for", "203.0.113.7")]),
        ];
        for (case, pairs) in cases {
            assert_eq!(client_ip(PEER.parse().unwrap(), &headers(pairs), &config).to_string(), PEER, "{case}");
        }
    }

    #[test]
    fn an_operator_may_name_x_forwarded_for() {
        let config = server("trusted_proxies = [\"127.0.0.1\"]\nclient_ip_header = \"X-Forwarded-For\"");
        let ip = client_ip(PEER.parse().unwrap(), &headers(&[("x-forwarded-for", "203.0.113.7")]), &config);
        assert_eq!(ip.to_string(), "203.0.113.7");
    }

    /// nginx (or Caddy) on this machine behind Cloudflare: the peer is loopback and the chain ends
    /// in the Cloudflare edge the proxy was talked to from.
    fn behind_nginx_behind_cloudflare() -> ServerConfig {
        server("trusted_proxies = [\"127.0.0.1\", \"::1\", \"cloudflare\"]\nclient_ip_header = \"X-Forwarded-For\"")
    }

    const VISITOR: &str = "198.51.100.7";
    const EDGE: &str = "173.245.48.1";

    fn forwarded_for(peer: &str, lines: &[&str], config: &ServerConfig) -> String {
        let pairs: Vec<(&str, &str)> = lines.iter().map(|line| ("X-Forwarded-For", *line)).collect();
        client_ip(peer.parse().unwrap(), &headers(&pairs), config).to_string()
    }

    #[test]
    fn the_visitor_cannot_choose_their_address_by_writing_the_left_of_x_forwarded_for() {
        let config = behind_nginx_behind_cloudflare();
        let chain = format!("1.2.3.4, {VISITOR}, {EDGE}");
        assert_eq!(forwarded_for(PEER, &[&chain], &config), VISITOR);
        let chain = format!("127.0.0.1, {EDGE}, {VISITOR}, {EDGE}");
        assert_eq!(forwarded_for(PEER, &[&chain], &config), VISITOR, "a trusted address written on the left");
    }

    #[test]
    fn x_forwarded_for_lines_are_one_chain_in_order() {
        let config = behind_nginx_behind_cloudflare();
        let cases: &[(&str, &[&str])] = &[
            ("the visitor's own line first", &["1.2.3.4", "198.51.100.7, 173.245.48.1"]),
            ("the edge on a line of its own", &["1.2.3.4, 198.51.100.7", "173.245.48.1"]),
            ("one entry a line", &["1.2.3.4", "198.51.100.7", "173.245.48.1"]),
        ];
        for (case, lines) in cases {
            assert_eq!(forwarded_for(PEER, lines, &config), VISITOR, "{case}");
        }
    }

    #[test]
    fn garbage_in_x_forwarded_for_stops_the_walk_at_the_last_trusted_address() {
        let config = behind_nginx_behind_cloudflare();
        let cases: &[(&str, &[&str], &str)] = &[
            ("garbage left of the edge", &["198.51.100.7, not-an-ip, 173.245.48.1"], EDGE),
            ("an empty entry", &["198.51.100.7,, 173.245.48.1"], EDGE),
            ("an address with a port", &["198.51.100.7:4711, 173.245.48.1"], EDGE),
            ("garbage on the right", &["198.51.100.7, 173.245.48.1, garbage"], PEER),
            ("an empty line", &[""], PEER),
            ("garbage on a later line", &["198.51.100.7, 173.245.48.1", "x"], PEER),
            ("garbage left of the client is never reached", &["x, 198.51.100.7, 173.245.48.1"], VISITOR),
        ];
        for (case, lines, expected) in cases {
            assert_eq!(forwarded_for(PEER, lines, &config), *expected, "{case}");
        }
        let mut map = headers(&[]);
        map.append(header::X_FORWARDED_FOR, HeaderValue::from_bytes(b"198.51.100.7, \xff").unwrap());
        assert_eq!(client_ip(PEER.parse().unwrap(), &map, &config).to_string(), PEER, "not ASCII");
    }

    #[test]
    fn x_forwarded_for_reads_ipv6_and_mapped_ipv4() {
        let config = behind_nginx_behind_cloudflare();
        assert_eq!(forwarded_for("::1", &["2001:db8::1, 2001:db8:7::7, 2606:4700::1"], &config), "2001:db8:7::7");
        assert_eq!(forwarded_for("::ffff:127.0.0.1", &["::ffff:198.51.100.7, ::ffff:173.245.48.1"], &config), VISITOR);
    }

    #[test]
    fn a_chain_of_trusted_addresses_names_its_leftmost() {
        let config = behind_nginx_behind_cloudflare();
        assert_eq!(forwarded_for(PEER, &["173.245.48.1, ::1, 127.0.0.1"], &config), EDGE);
        assert_eq!(forwarded_for(PEER, &[], &config), PEER, "no header");
    }

    #[test]
    fn x_forwarded_for_from_an_untrusted_peer_is_ignored() {
        let config = behind_nginx_behind_cloudflare();
        assert_eq!(forwarded_for("203.0.113.9", &["198.51.100.7"], &config), "203.0.113.9");
    }

    #[test]
    fn x_forwarded_for_may_be_named_in_any_case() {
        let config = server("trusted_proxies = [\"127.0.0.1\"]\nclient_ip_header = \"x-FORWARDED-for\"");
        assert_eq!(forwarded_for(PEER, &["1.2.3.4, 198.51.100.7"], &config), VISITOR);
    }

    #[test]
    fn a_single_address_header_keeps_its_one_line_one_address_rule_behind_loopback() {
        let config =
            server("trusted_proxies = [\"127.0.0.1\", \"::1\", \"cloudflare\"]\nclient_ip_header = \"X-Real-IP\"");
        let ip = |pairs: &[(&str, &str)]| client_ip(PEER.parse().unwrap(), &headers(pairs), &config).to_string();
        assert_eq!(ip(&[("x-real-ip", VISITOR)]), VISITOR);
        assert_eq!(ip(&[("x-real-ip", "1.2.3.4, 198.51.100.7")]), PEER, "a list");
        assert_eq!(ip(&[("x-real-ip", "1.2.3.4"), ("x-real-ip", VISITOR)]), PEER, "two lines");
    }

    #[test]
    fn ipv6_clients_count_by_prefix_and_mapped_ipv4_as_ipv4() {
        let a = ClientNet::of("2001:db8:0:0:1::1".parse().unwrap(), 64);
        let b = ClientNet::of("2001:db8::ffff:2".parse().unwrap(), 64);
        let c = ClientNet::of("2001:db8:0:1::1".parse().unwrap(), 64);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.to_string(), "2001:db8::/64");
        assert_eq!(ClientNet::of("::ffff:203.0.113.7".parse().unwrap(), 64).to_string(), "203.0.113.7/32");
    }
}
