//! `server.trusted_proxies`: the peers whose client-IP header is believed. Everything else is the
//! client itself, whatever headers it sends. Checked when the configuration is parsed.

use std::net::IpAddr;

use ipnet::IpNet;

use super::cloudflare;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Vec<IpNet>,
}

impl TrustedProxies {
    /// Each entry is a CIDR (`10.0.0.0/8`), a single address (`127.0.0.1`), or the word
    /// `cloudflare` for Cloudflare's published ranges.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut networks = Vec::new();
        for entry in entries {
            if entry == "cloudflare" {
                for range in cloudflare::IPV4.iter().chain(cloudflare::IPV6) {
                    networks.push(range.parse().map_err(|e| format!("built-in range {range}: {e}"))?);
                }
            } else if let Ok(network) = entry.parse::<IpNet>() {
                networks.push(network.trunc());
            } else if let Ok(ip) = entry.parse::<IpAddr>() {
                networks.push(IpNet::from(ip));
            } else {
                return Err(format!("{entry:?} is not a CIDR like \"10.0.0.0/8\", an IP address, or \"cloudflare\""));
            }
        }
        Ok(Self { networks })
    }

    pub fn is_empty(&self) -> bool {
        self.networks.is_empty()
    }

    /// Whether `peer` is a trusted proxy. IPv4-mapped IPv6 peers (`::ffff:173.245.49.7`) are
    /// compared as IPv4, or they would miss every IPv4 range (DEPENDENCIES trap 10).
    pub fn contains(&self, peer: IpAddr) -> bool {
        let peer = peer.to_canonical();
        self.networks.iter().any(|network| network.contains(&peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(entries: &[&str]) -> TrustedProxies {
        TrustedProxies::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn cloudflare_expands_to_both_families() {
        let cf = proxies(&["cloudflare"]);
        assert!(cf.contains("173.245.49.7".parse().unwrap()));
        assert!(cf.contains("2606:4700::1".parse().unwrap()));
        assert!(!cf.contains("8.8.8.8".parse().unwrap()));
    }

    #[test]
    fn ipv4_mapped_peers_match_ipv4_ranges() {
        let cf = proxies(&["cloudflare"]);
        assert!(cf.contains("::ffff:173.245.49.7".parse().unwrap()));
    }

    #[test]
    fn single_addresses_and_cidrs() {
        let p = proxies(&["127.0.0.1", "10.1.2.3/8"]);
        assert!(p.contains("127.0.0.1".parse().unwrap()));
        assert!(!p.contains("127.0.0.2".parse().unwrap()));
        assert!(p.contains("10.200.0.1".parse().unwrap()));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
        assert!(TrustedProxies::parse(&["cloudfare".into()]).is_err());
    }
}
