//! The start-up check that a loopback listener trusts the proxy in front of it
//! ([`loopback_warning`]): otherwise every visitor would be that one proxy.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

use crate::config::ServerConfig;

/// The warning `serve` logs and `check-config` prints when every visitor would share one
/// rate-limit budget: `server.listen` is a loopback address, so whatever reaches signupd is a
/// proxy or tunnel on this machine (cloudflared, nginx, Caddy), yet neither `127.0.0.1` nor `::1`
/// is in `trusted_proxies`, so that proxy's header is ignored and the proxy is the client.
///
/// Not for local use: when `public_url` is itself a loopback URL (`localhost`, `127.0.0.1`,
/// `[::1]`; the zero-setup demo, a development config), the people signing up are on this
/// machine and no proxy is involved, so there is no warning — it would be noise on the quick
/// start's first command. A deployment always has a public `public_url` (every mail link starts
/// with it), so the check keys on that rather than on whether a configuration file was given.
pub fn loopback_warning(server: &ServerConfig) -> Option<String> {
    let listens_on_loopback = server.listen.ip().to_canonical().is_loopback();
    let trusts_loopback = server.trusted_proxies.contains(IpAddr::V4(Ipv4Addr::LOCALHOST))
        || server.trusted_proxies.contains(IpAddr::V6(Ipv6Addr::LOCALHOST));
    if !listens_on_loopback || trusts_loopback || is_loopback_url(&server.public_url) {
        return None;
    }
    Some(
        "server.listen is a loopback address but server.trusted_proxies names no loopback address: \
         every visitor arrives through the proxy or tunnel on this machine and counts as that one \
         client, so all visitors share one rate-limit budget. Add \"127.0.0.1\" and \"::1\" to \
         server.trusted_proxies (see the deployment table in docs/install.md)"
            .to_owned(),
    )
}

fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(Host::Domain(domain)) => {
            let domain = domain.trim_end_matches('.').to_ascii_lowercase();
            domain == "localhost" || domain.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.to_canonical().is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(extra: &str) -> ServerConfig {
        crate::config::Config::from_toml(&format!("[server]\n{extra}\n[[lists]]\nid = \"a\"")).unwrap().server
    }

    const PUBLIC: &str = "public_url = \"https://signup.newsletter-operator.net\"";

    #[test]
    fn a_public_service_on_loopback_that_trusts_no_loopback_proxy_is_warned_about() {
        let cases = [
            ("nothing trusted", format!("{PUBLIC}\ntrusted_proxies = []")),
            ("only Cloudflare", format!("{PUBLIC}\ntrusted_proxies = [\"cloudflare\"]")),
            ("IPv6 loopback listener", format!("{PUBLIC}\nlisten = \"[::1]:8080\"")),
            ("another loopback address", format!("{PUBLIC}\nlisten = \"127.0.0.2:8080\"")),
            ("a loopback neighbour is not loopback", format!("{PUBLIC}\ntrusted_proxies = [\"127.0.0.2\"]")),
        ];
        for (case, toml) in cases {
            let warning = loopback_warning(&server(&toml));
            assert!(warning.as_deref().is_some_and(|w| w.contains("trusted_proxies")), "{case}: {warning:?}");
        }
    }

    #[test]
    fn no_warning_when_the_proxy_is_trusted_or_nothing_is_in_front() {
        let cases = [
            ("IPv4 loopback trusted", format!("{PUBLIC}\ntrusted_proxies = [\"127.0.0.1\"]")),
            ("IPv6 loopback trusted", format!("{PUBLIC}\ntrusted_proxies = [\"::1\"]")),
            ("loopback range trusted", format!("{PUBLIC}\ntrusted_proxies = [\"127.0.0.0/8\"]")),
            ("a public listener", format!("{PUBLIC}\nlisten = \"0.0.0.0:8080\"")),
            ("the zero-setup demo", String::new()),
            ("a local public_url", "public_url = \"http://localhost:8080\"".to_owned()),
            ("a local IPv6 public_url", "public_url = \"http://[::1]:8080\"".to_owned()),
        ];
        for (case, toml) in cases {
            assert_eq!(loopback_warning(&server(&toml)), None, "{case}");
        }
    }

    /// The lines that decide who the client is, as `packaging/signupd.toml` ships them.
    fn shipped_client_identity() -> String {
        include_str!("../../../packaging/signupd.toml")
            .lines()
            .filter(|line| ["listen", "trusted_proxies", "client_ip_header"].iter().any(|key| line.starts_with(key)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_shipped_configuration_trusts_the_local_tunnel_or_proxy() {
        let shipped = shipped_client_identity();
        assert_eq!(shipped.lines().count(), 3, "{shipped}");
        assert_eq!(loopback_warning(&server(&format!("{PUBLIC}\n{shipped}"))), None, "{shipped}");
    }

    #[test]
    fn the_shipped_configuration_tells_visitors_of_a_tunnel_apart() {
        use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
        let config = server(&format!("{PUBLIC}\n{}", shipped_client_identity()));
        let from_cloudflared = |visitor: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(HeaderName::from_static("cf-connecting-ip"), HeaderValue::from_str(visitor).unwrap());
            crate::door::ratelimit::client_ip("127.0.0.1".parse().unwrap(), &headers, &config).to_string()
        };
        assert_eq!(from_cloudflared("198.51.100.7"), "198.51.100.7");
        assert_eq!(from_cloudflared("2001:db8::7"), "2001:db8::7");
        let direct = crate::door::ratelimit::client_ip("203.0.113.9".parse().unwrap(), &HeaderMap::new(), &config);
        assert_eq!(direct.to_string(), "203.0.113.9", "a peer that is not loopback is its own client");
    }
}
