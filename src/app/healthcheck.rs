//! `signupd healthcheck`: whether the `serve` of this configuration is ready, for a container's
//! `HEALTHCHECK` (an image without curl) or any supervisor that runs a command.
//!
//! It asks the configured listener's `/readyz` — the same answer a load balancer gets: 200 only
//! while the database takes writes — and gives up after [`TIMEOUT`]. A listener on every address
//! (`0.0.0.0`, `::`) is asked on the loopback address of its family, which is where the command
//! runs (inside the container). No proxy is used whatever the environment says: an `HTTP_PROXY`
//! meant for outgoing webhooks must not answer for the local server.
//!
//! The answer is one line: on stdout when ready, else the reason on stderr (the caller turns the
//! error into exit code 1). It names the URL asked, never anything from the configuration's
//! secrets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// The longest the check waits for an answer, connection included.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Where to ask a server listening on `listen`: an unspecified address becomes loopback.
pub fn probe_address(listen: SocketAddr) -> SocketAddr {
    let ip = match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, listen.port())
}

/// Asks `/readyz` of the server listening on `listen`. `Ok` with the line to print when it
/// answered 200 within [`TIMEOUT`]; otherwise an error that says why.
pub async fn check(listen: SocketAddr) -> anyhow::Result<String> {
    let url = format!("http://{}/readyz", probe_address(listen));
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let response = client.get(&url).send().await.map_err(|error| anyhow::anyhow!("{url}: {}", why(&error)))?;
    let status = response.status();
    if status == reqwest::StatusCode::OK {
        Ok(format!("ready: {url} answered {status}"))
    } else {
        anyhow::bail!("{url} answered {status}: not ready")
    }
}

/// The reason a request got no answer, in an operator's words: the deepest cause of a failed
/// connection (`Connection refused`), or the timeout.
fn why(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return format!("no answer within {} s", TIMEOUT.as_secs());
    }
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    if error.is_connect() { format!("cannot connect ({cause})") } else { format!("no answer ({cause})") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_is_asked_on_loopback_and_a_named_one_as_it_is() {
        let cases = [
            ("0.0.0.0:8080", "127.0.0.1:8080"),
            ("[::]:8080", "[::1]:8080"),
            ("127.0.0.1:9000", "127.0.0.1:9000"),
            ("192.0.2.7:80", "192.0.2.7:80"),
            ("[2001:db8::1]:443", "[2001:db8::1]:443"),
        ];
        for (listen, asked) in cases {
            let listen: SocketAddr = listen.parse().unwrap();
            assert_eq!(probe_address(listen).to_string(), asked, "listening on {listen}");
        }
    }
}
