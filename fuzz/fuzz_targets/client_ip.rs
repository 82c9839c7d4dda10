//! `ratelimit::client_ip`: who the client is, from the peer address and the configured
//! client-IP header, behind trusted proxies (single addresses, CIDRs and the Cloudflare ranges).
#![no_main]

use std::net::IpAddr;
use std::sync::OnceLock;

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use signupd::config::{Config, ServerConfig};
use signupd::door::ratelimit::{ClientNet, client_ip};

#[derive(Debug, Arbitrary)]
struct Input {
    peer: [u8; 16],
    /// Whether the peer is an IPv4 address (its first four bytes) or IPv6.
    peer_v4: bool,
    /// Use the operator-named `X-Forwarded-For` instead of the default `CF-Connecting-IP`.
    x_forwarded_for: bool,
    /// The headers, as a client or proxy sends them.
    headers: Vec<(u8, Vec<u8>)>,
    ipv6_prefix: u8,
}

/// Two configurations that trust loopback, a private /8, a v6 /32 and Cloudflare's ranges.
fn servers() -> &'static (ServerConfig, ServerConfig) {
    static SERVERS: OnceLock<(ServerConfig, ServerConfig)> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let trusted = r#"trusted_proxies = ["127.0.0.1", "::1", "10.0.0.0/8", "2001:db8::/32", "cloudflare"]"#;
        let load = |extra: &str| {
            Config::from_toml(&format!("[server]\n{trusted}\n{extra}\n[[lists]]\nid = \"a\""))
                .expect("the fuzz configuration is valid")
                .server
        };
        (load(""), load("client_ip_header = \"X-Forwarded-For\""))
    })
}

const NAMES: [&str; 4] = ["cf-connecting-ip", "x-forwarded-for", "x-real-ip", "forwarded"];

fuzz_target!(|input: Input| {
    let (cloudflare, forwarded) = servers();
    let server = if input.x_forwarded_for { forwarded } else { cloudflare };
    let peer = if input.peer_v4 {
        IpAddr::from([input.peer[0], input.peer[1], input.peer[2], input.peer[3]])
    } else {
        IpAddr::from(input.peer)
    };
    let mut headers = HeaderMap::new();
    for (name, value) in &input.headers {
        let Ok(value) = HeaderValue::from_bytes(value) else {
            continue;
        };
        headers.append(HeaderName::from_static(NAMES[usize::from(*name) % NAMES.len()]), value);
    }

    let client = client_ip(peer, &headers, server);
    if !server.trusted_proxies.contains(peer) {
        assert_eq!(client, peer.to_canonical(), "an untrusted peer chose its client address");
    } else if server.client_ip_header == "x-forwarded-for" {
        assert_eq!(client, rightmost_untrusted(peer.to_canonical(), &headers, server), "X-Forwarded-For");
    } else if client != peer.to_canonical() {
        // A trusted proxy named the client: exactly one header, which holds that address.
        let mut values = headers.get_all(&server.client_ip_header);
        let value = values.next().expect("a header named the client");
        assert!(values.next().is_none(), "a repeated header was believed");
        let named: IpAddr = value.to_str().expect("ASCII").trim().parse().expect("an IP address");
        assert_eq!(named.to_canonical(), client);
    }
    let net = ClientNet::of(client, input.ipv6_prefix);
    let _ = net.to_string();
});

/// The X-Forwarded-For rule stated over the whole chain (every line, in order, split at commas;
/// a line that is not text is one unreadable entry): the client is the rightmost entry that is
/// not a trusted address; if that entry is unreadable, the trusted one right of it (or the peer);
/// if every entry is trusted, the leftmost (or the peer when there is none).
fn rightmost_untrusted(peer: IpAddr, headers: &HeaderMap, server: &ServerConfig) -> IpAddr {
    let parse = |entry: &str| entry.trim().parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
    let mut chain: Vec<Option<IpAddr>> = Vec::new();
    for value in headers.get_all("x-forwarded-for") {
        match value.to_str() {
            Ok(text) => chain.extend(text.split(',').map(parse)),
            Err(_) => chain.push(None),
        }
    }
    let trusted = |entry: &Option<IpAddr>| entry.is_some_and(|ip| server.trusted_proxies.contains(ip));
    match chain.iter().rposition(|entry| !trusted(entry)) {
        None => chain.first().copied().flatten().unwrap_or(peer),
        Some(at) => chain[at].or_else(|| chain.get(at + 1).copied().flatten()).unwrap_or(peer),
    }
}
