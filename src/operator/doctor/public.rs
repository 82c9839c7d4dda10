//! The public side: the URL visitors and mail links use resolves, and a reverse proxy in front
//! is one signupd was told to believe — otherwise every visitor counts as one client (the
//! proxy), and the first few signups rate-limit everybody after them.
//!
//! The host is asked through `signup.dns_servers` when set, like every other DNS question of
//! the doctor: an operator who set them has a reason (a resolver that lies, or none at all).

use std::net::IpAddr;

use super::Check;
use crate::config::Config;

const AREA: &str = "public";

pub async fn checks(config: &Config) -> Vec<Check> {
    let url = &config.server.public_url;
    let mut checks = Vec::new();
    let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
    let name = format!("public URL {url}");
    let loopback_url = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback_url {
        checks.push(Check::warning(
            AREA,
            name,
            "it names this machine: links in mails work only here",
            "set server.public_url to the address visitors use, e.g. https://signup.your-domain.org",
        ));
    } else if host.parse::<IpAddr>().is_ok() {
        checks.push(Check::ok(AREA, name, "an IP address"));
    } else {
        let port = url.port_or_known_default().unwrap_or(443);
        let lookup = tokio::time::timeout(std::time::Duration::from_secs(5), resolve(config, &host, port));
        checks.push(match lookup.await {
            Ok(Ok(Some(_))) => Check::ok(AREA, name, format!("{host} resolves")),
            Ok(Ok(None)) => {
                Check::problem(AREA, name, format!("{host} has no address"), "add an A or AAAA record for it")
            }
            Ok(Err(error)) => Check::problem(
                AREA,
                name,
                format!("{host} does not resolve ({error})"),
                "add an A or AAAA record for it, or fix server.public_url",
            ),
            Err(_) => Check::warning(
                AREA,
                name,
                format!("no DNS answer for {host} within 5 s"),
                "check this machine's resolver",
            ),
        });
    }
    checks.push(proxy(config));
    checks
}

/// One address of `host`, through `signup.dns_servers` when set, else the system's resolver.
async fn resolve(config: &Config, host: &str, port: u16) -> Result<Option<IpAddr>, String> {
    if config.signup.dns_servers.is_empty() {
        let found = tokio::net::lookup_host((host, port)).await.map_err(|error| error.to_string())?;
        return Ok(found.map(|address| address.ip()).next());
    }
    let authenticator = super::dns::authenticator(&config.signup.dns_servers).map_err(|error| format!("{error:#}"))?;
    match authenticator.0.lookup_ip(host).await {
        Ok(found) => Ok(found.iter().next()),
        Err(error) if error.is_nx_domain() || error.is_no_records_found() => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// Behind a proxy (an https public URL, while signupd listens on a loopback or private
/// address) without `trusted_proxies`, every request comes from the proxy.
fn proxy(config: &Config) -> Check {
    let listen = config.server.listen.ip();
    let proxied = config.server.public_url.scheme() == "https" && is_private_or_loopback(listen);
    let name = "client addresses";
    let trusted = &config.server.trusted_proxies;
    match (proxied, trusted.is_empty()) {
        (true, true) => {
            let header = config.server.client_ip_header.as_str();
            let lines = if listen.is_loopback() {
                "[server]\ntrusted_proxies = [\"127.0.0.1\", \"::1\"]   # a proxy on this machine (nginx, Caddy)"
            } else {
                "[server]\ntrusted_proxies = [\"cloudflare\"]   # behind Cloudflare; or the proxy's own address"
            };
            Check::problem(
                AREA,
                name,
                format!(
                    "the public URL is https while signupd listens on {} without TLS: a proxy is in front, and signupd does not believe its {header} header, so every visitor counts as the proxy and a few signups rate-limit everyone",
                    config.server.listen
                ),
                format!("add to signupd.toml: {}", lines.replace('\n', " / ")),
            )
        }
        (_, false) => Check::ok(
            AREA,
            name,
            format!("taken from {} when a trusted proxy sends it", config.server.client_ip_header),
        ),
        (false, true) => Check::ok(AREA, name, "the TCP peer is the client (no proxy configured)"),
    }
}

fn is_private_or_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => ip.is_loopback() || ip.is_private() || ip.is_unspecified(),
        IpAddr::V6(ip) => ip.is_loopback() || ip.is_unique_local() || ip.is_unspecified(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::doctor::Verdict;

    fn config(server: &str) -> Config {
        Config::from_toml(&format!("[server]\n{server}\n[[lists]]\nid = \"news\"")).unwrap()
    }

    #[test]
    fn an_https_site_proxied_to_loopback_without_trusted_proxies_is_a_problem_with_the_lines_to_add() {
        let check = proxy(&config("public_url = \"https://signup.bakery.test\"\nlisten = \"127.0.0.1:8080\""));
        assert_eq!(check.verdict, Verdict::Problem, "{check:?}");
        assert!(check.todo.as_deref().unwrap().contains("trusted_proxies = [\"127.0.0.1\", \"::1\"]"), "{check:?}");

        let trusted = config(
            "public_url = \"https://signup.bakery.test\"\nlisten = \"127.0.0.1:8080\"\ntrusted_proxies = [\"127.0.0.1\"]",
        );
        assert_eq!(proxy(&trusted).verdict, Verdict::Ok);
        let direct = config("public_url = \"http://203.0.113.5:8080\"\nlisten = \"0.0.0.0:8080\"");
        assert_eq!(proxy(&direct).verdict, Verdict::Ok, "a plain http URL on a public address: no proxy");
    }
}
