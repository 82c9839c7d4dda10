//! Who the client is (`docs/http-api.md`). The TCP peer, unless the peer is a trusted proxy and the
//! request carries the configured client-IP header with exactly one valid IP. Anything else —
//! a spoofed header from an untrusted peer, a list of addresses, garbage — falls back to the
//! peer, so a visitor cannot choose whose budget they spend.
//!
//! `X-Forwarded-For` is never read unless an operator names it as `client_ip_header`: its
//! leftmost entry is whatever the visitor wrote.

use std::fmt;
use std::net::IpAddr;

use actix_web::http::header::HeaderMap;
use ipnet::IpNet;

use crate::config::ServerConfig;

/// The client's IP address as the rate limit sees it.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, server: &ServerConfig) -> IpAddr {
    let peer = peer.to_canonical();
    if !server.trusted_proxies.contains(peer) {
        return peer;
    }
    let mut values = headers.get_all(&server.client_ip_header);
    let (Some(value), None) = (values.next(), values.next()) else {
        return peer;
    };
    value.to_str().ok().and_then(|text| text.trim().parse::<IpAddr>().ok()).map(|ip| ip.to_canonical()).unwrap_or(peer)
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
