//! Cloudflare's published edge ranges, shipped in the binary so `trusted_proxies =
//! ["cloudflare"]` works on a machine that cannot reach cloudflare.com at start.
//!
//! Source: <https://www.cloudflare.com/ips-v4> and <https://www.cloudflare.com/ips-v6>. The lists
//! below are the ones published since 2023-09 (the last change, which added no range since);
//! copied into signupd on 2026-11-29. Compare them with the live lists when you upgrade signupd,
//! and list any new range explicitly in `trusted_proxies` until a release ships it.

/// The date the ranges below were taken from Cloudflare's published lists.
pub const TAKEN_ON: &str = "2026-11-29";

pub const IPV4: &[&str] = &[
    "173.245.48.0/20",
    "103.21.244.0/22",
    "103.22.200.0/22",
    "103.31.4.0/22",
    "141.101.64.0/18",
    "108.162.192.0/18",
    "190.93.240.0/20",
    "188.114.96.0/20",
    "197.234.240.0/22",
    "198.41.128.0/17",
    "162.158.0.0/15",
    "104.16.0.0/13",
    "104.24.0.0/14",
    "172.64.0.0/13",
    "131.0.72.0/22",
];

pub const IPV6: &[&str] = &[
    "2400:cb00::/32",
    "2606:4700::/32",
    "2803:f800::/32",
    "2405:b500::/32",
    "2405:8100::/32",
    "2a06:98c0::/29",
    "2c0f:f248::/32",
];
