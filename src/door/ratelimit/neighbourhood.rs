//! The neighbourhood a client belongs to: its IPv4 `/24` or IPv6 `/48` by default
//! (`signup.network_prefix_v4`, `signup.network_prefix_v6`). One provider-assigned /48 holds
//! 65,536 /64s, and a small botnet rents whole /24s: counting only per client would give whoever
//! holds such a block thousands of budgets. The neighbourhood carries the `network_rate_limits`
//! and is the unit the mail budget is shared fairly between.

use std::fmt;
use std::net::IpAddr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Neighbourhood(IpNet);

impl Neighbourhood {
    /// The network of `ip` at the given prefix lengths (IPv4-mapped IPv6 counts as IPv4).
    pub fn of(ip: IpAddr, v4_prefix: u8, v6_prefix: u8) -> Self {
        let net = match ip.to_canonical() {
            IpAddr::V4(v4) => Ipv4Net::new(v4, v4_prefix.min(32)).map(|net| IpNet::V4(net.trunc())),
            IpAddr::V6(v6) => Ipv6Net::new(v6, v6_prefix.min(128)).map(|net| IpNet::V6(net.trunc())),
        };
        Self(net.unwrap_or_else(|_| IpNet::from(ip.to_canonical())))
    }
}

impl fmt::Display for Neighbourhood {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ip: &str) -> String {
        Neighbourhood::of(ip.parse().unwrap(), 24, 48).to_string()
    }

    #[test]
    fn ipv4_by_slash_24_and_ipv6_by_slash_48() {
        assert_eq!(of("203.0.113.7"), "203.0.113.0/24");
        assert_eq!(of("203.0.113.200"), of("203.0.113.7"));
        assert_ne!(of("203.0.114.7"), of("203.0.113.7"));
        assert_eq!(of("2001:db8:1:ffff::1"), "2001:db8:1::/48");
        assert_eq!(of("2001:db8:1:2::1"), of("2001:db8:1:ffff:1::2"), "every /64 of one /48 is one neighbourhood");
        assert_ne!(of("2001:db8:2::1"), of("2001:db8:1::1"));
    }

    #[test]
    fn mapped_ipv4_is_ipv4() {
        assert_eq!(of("::ffff:203.0.113.7"), "203.0.113.0/24");
    }
}
