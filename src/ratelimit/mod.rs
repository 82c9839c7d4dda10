//! Who the client is and how often it may sign up: the trusted-proxy rule that picks the client
//! IP, the networks it is counted by (the client's own, and its neighbourhood), and the
//! persistent counters.

mod client_ip;
mod limiter;
mod loopback;
mod neighbourhood;

pub use client_ip::{ClientNet, client_ip};
pub use limiter::{Counter, Decision, RateLimiter, check_and_count};
pub use loopback::loopback_warning;
pub use neighbourhood::Neighbourhood;
