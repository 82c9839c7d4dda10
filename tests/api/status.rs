//! The status page (`docs/operations.md`, "The status page"): `GET /status` on the metrics
//! listener only. Real traffic goes through `signupd serve` as a process (its own tally, so no
//! other test's counts) and must reach the hourly rollups with the right counts, show on the
//! page with the numbers `signupd stats --json` gives for the same database, and survive a clean
//! restart. In process: the public listener has no `/status`; the page carries the pages' CSP,
//! no script, inline SVG charts with tables, and its stylesheets on the metrics listener.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::helpers::{signupd, spawn_app_with};
use crate::process::{Served, client, config, read_only, serve, tokens_by_recipient};
use crate::signup::{count, post_form, valid};

const LISTS: &str = "[[lists]]\nid = \"news\"\n[[lists]]\nid = \"other\"\n";

// ---------------------------------------------------------------------------------------------
// The page, read back

/// The totals row of one table of a list's section: series → number (`data-series` cells).
fn list_totals(page: &str, list: &str) -> BTreeMap<String, String> {
    let start = page.find(&format!("id=\"list-{list}\"")).unwrap_or_else(|| panic!("no section for {list}"));
    let section = &page[start..];
    let section = &section[..section.find("</section>").expect("the section ends")];
    let mut totals = BTreeMap::new();
    for cell in section.split("<td data-series=\"").skip(1) {
        let (series, rest) = cell.split_once("\">").unwrap();
        let value = &rest[..rest.find('<').unwrap()];
        totals.insert(series.to_owned(), value.to_owned());
    }
    totals
}

async fn status_page(metrics_port: u16, query: &str) -> String {
    let response = client().get(format!("http://127.0.0.1:{metrics_port}/status{query}")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

/// The rollups summed over all hours: (list, series) → value.
fn rollups(database: &Path) -> BTreeMap<(String, String), i64> {
    let conn = read_only(database);
    let mut statement = conn.prepare("SELECT list, series, sum(value) FROM rollups GROUP BY list, series").unwrap();
    statement.query_map([], |row| Ok(((row.get(0)?, row.get(1)?), row.get(2)?))).unwrap().map(Result::unwrap).collect()
}

fn rollup(found: &BTreeMap<(String, String), i64>, list: &str, series: &str) -> i64 {
    found.get(&(list.to_owned(), series.to_owned())).copied().unwrap_or(0)
}

/// Polls `probe` until it gives a value: the rollup worker stores on a tick of about 5 s.
async fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Real traffic through `signupd serve`

struct Server {
    dir: TempDir,
    config: PathBuf,
    served: Served,
}

impl Server {
    fn database(&self) -> PathBuf {
        self.dir.path().join("data/signupd.sqlite3")
    }

    fn metrics_port(&self) -> u16 {
        self.served.metrics_port.expect("a metrics listener")
    }

    async fn post(&self, fields: &[(&str, &str)]) -> u16 {
        client().post(self.served.url("/api/signup")).form(fields).send().await.unwrap().status().as_u16()
    }

    async fn stats(&self) -> Value {
        let mut command = signupd();
        command.args(["stats", "--json", "--config"]).arg(&self.config);
        let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_rollups_count_real_traffic_match_stats_and_survive_a_restart() {
    // Arrange: two lists, the metrics listener, a budget that sends everything at once
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), 1000, &format!("[server]\nmetrics_listen = \"127.0.0.1:0\"\n{LISTS}"));
    let served = serve(&config);
    let server = Server { dir, config, served };
    let mail_dir = server.dir.path().join("data/mail");

    // Act: three accepted on news, one on other; refusals of three outcomes; one confirmation
    for email in ["a@example.com", "b@example.com", "c@example.com"] {
        assert_eq!(server.post(&[("email", email), ("consent", "yes"), ("list", "news")]).await, 303);
    }
    assert_eq!(server.post(&[("email", "d@example.com"), ("consent", "yes"), ("list", "other")]).await, 303);
    for _ in 0..2 {
        assert_eq!(server.post(&[("email", "not-an-address"), ("consent", "yes"), ("list", "news")]).await, 400);
    }
    assert_eq!(server.post(&[("email", "e@example.com"), ("list", "other")]).await, 400);
    assert_eq!(server.post(&[("email", "f@example.com"), ("consent", "yes"), ("list", "nope")]).await, 400);
    let confirm =
        eventually("a's confirmation mail", || tokens_by_recipient(&mail_dir).remove("a@example.com")?.confirm).await;
    let confirmed =
        client().post(server.served.url("/api/confirm")).form(&[("token", confirm.as_str())]).send().await.unwrap();
    assert_eq!(confirmed.status(), 303);
    // Four confirmation mails and a's welcome mail.
    eventually("five mails written", || {
        (tokens_by_recipient(&mail_dir).values().map(|t| t.mails).sum::<usize>() == 5).then_some(())
    })
    .await;

    // Assert: the rollup worker stored every count within a few ticks
    let stored = eventually("the rollups of the traffic", || {
        let found = rollups(&server.database());
        (rollup(&found, "", "mails.sent") == 5 && rollup(&found, "news", "confirmations") == 1).then_some(found)
    })
    .await;
    assert_eq!(rollup(&stored, "news", "signups.accepted"), 3, "{stored:?}");
    assert_eq!(rollup(&stored, "other", "signups.accepted"), 1, "{stored:?}");
    assert_eq!(rollup(&stored, "news", "signups.invalid_email"), 2, "{stored:?}");
    assert_eq!(rollup(&stored, "other", "signups.consent_required"), 1, "{stored:?}");
    assert_eq!(rollup(&stored, "none", "signups.unknown_list"), 1, "a signup naming no known list: {stored:?}");
    assert_eq!(rollup(&stored, "other", "confirmations"), 0, "{stored:?}");
    let keys: Vec<String> = stored.keys().map(|(list, series)| format!("{list}/{series}")).collect();
    assert!(
        keys.iter().all(|key| !key.contains('@') && !key.contains("127.0.0.1")),
        "no address or IP in a rollup key: {keys:?}"
    );

    // Act: the confirmed a and the pending b removed (an erasure request): their rows go, their
    // signups and a's confirmation happened all the same, and stay counted
    for email in ["a@example.com", "b@example.com"] {
        let mut remove = signupd();
        remove.args(["remove", email, "--config"]).arg(&server.config);
        let removed = tokio::task::spawn_blocking(move || remove.output().unwrap()).await.unwrap();
        assert_eq!(removed.status.code(), Some(0), "{}", String::from_utf8_lossy(&removed.stderr));
    }

    // Assert: the page's 48-hour totals are the numbers `stats --json` gives, all traffic fresh
    let page = status_page(server.metrics_port(), "").await;
    let stats = server.stats().await;
    let lists = stats["lists"].as_array().unwrap();
    for list in lists {
        let id = list["id"].as_str().unwrap();
        let totals = list_totals(&page, id);
        assert_eq!(totals["signups.accepted"], list["signups"]["last_24h"].to_string(), "{id}: {totals:?} vs {list}");
        assert_eq!(
            totals["confirmations"],
            list["confirmations"]["last_24h"].to_string(),
            "{id}: {totals:?} vs {list}"
        );
    }
    assert_eq!(list_totals(&page, "news")["signups.accepted"], "3");
    assert_eq!(stats["lists"][0]["signups"]["last_24h"], 3, "removed rows still count: {stats}");
    assert_eq!(stats["lists"][0]["confirmations"]["last_24h"], 1, "{stats}");
    assert_eq!(stats["lists"][0]["pending"], 1, "only c is left: {stats}");
    assert_eq!(list_totals(&page, "news")["signups.invalid_email"], "2");
    assert_eq!(list_totals(&page, "news")["rate"], "33%");
    assert_eq!(list_totals(&page, "other")["signups.consent_required"], "1");
    assert!(page.contains("id=\"list-none\""), "the signups that named no list have their section");
    let month = status_page(server.metrics_port(), "?range=30d").await;
    assert_eq!(list_totals(&month, "news"), list_totals(&page, "news"), "the same traffic, summed by day");

    // Act: a clean stop, and a start on the same database
    let Server { dir, config, served } = server;
    served.stop().await;
    let after_stop = rollups(&dir.path().join("data/signupd.sqlite3"));
    let restarted = Server { served: serve(&config), dir, config };

    // Assert: the same numbers on the new process's page
    let again = status_page(restarted.metrics_port(), "").await;
    for list in ["news", "other", "none"] {
        assert_eq!(list_totals(&again, list), list_totals(&page, list), "{list} after a restart");
    }
    let counted: BTreeMap<_, _> = after_stop.into_iter().filter(|((list, _), _)| !list.is_empty()).collect();
    let counted_again: BTreeMap<_, _> =
        rollups(&restarted.database()).into_iter().filter(|((list, _), _)| !list.is_empty()).collect();
    assert_eq!(counted_again, counted, "the counts are as the clean stop left them");
    restarted.served.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The listeners, in process

#[actix_web::test]
async fn status_is_only_on_the_metrics_listener_with_the_pages_csp_charts_tables_and_no_script() {
    // Arrange
    let app = spawn_app_with("[server]\nmetrics_listen = \"127.0.0.1:0\"\n").await;
    let metrics = format!("http://127.0.0.1:{}", app.metrics_port.expect("a metrics listener"));

    // Act + Assert: the public listener has no status page, and asking writes nothing
    let public = app.client.get(app.url("/status")).send().await.unwrap();
    assert_eq!(public.status(), 404);
    for table in ["rollups", "intake", "subscribers", "rate_limits"] {
        assert_eq!(count(&app, table), 0, "{table} after GET /status on the public listener");
    }

    // Act: a signup, stored the way the rollup worker does
    assert_eq!(post_form(&app, &valid("jane@example.com")).await.status().as_u16(), 303);
    signupd::operator::status::record_rollups(&app.state).await.unwrap();
    let response = app.client.get(format!("{metrics}/status")).send().await.unwrap();

    // Assert: an HTML page under the pages' own policy, without script
    assert_eq!(response.status(), 200);
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!(header("content-type").as_deref(), Some("text/html; charset=utf-8"));
    assert_eq!(header("content-security-policy"), Some(signupd::web::middleware::csp_with_form_targets(&[])));
    assert_eq!(header("cache-control").as_deref(), Some("no-store"));
    let page = response.text().await.unwrap();
    assert!(!page.to_lowercase().contains("<script"), "no script");
    assert!(!page.contains(" style="), "no inline style: the CSP has no 'unsafe-inline'");
    assert!(page.matches("<svg ").count() >= 7, "a chart per list series and service-wide");
    assert!(
        page.matches("role=\"img\"").count() == page.matches("<svg ").count(),
        "every chart is an image with a name"
    );
    assert!(page.matches("<table>").count() >= 5, "a table of numbers under the charts");
    assert!(page.contains("stroke-dasharray") || page.contains("class=\"threshold\""), "the budget line");
    assert!(page.contains("not kept per list"), "the page says mail and queues are service-wide");
    let accepted: i64 = list_totals(&page, "news")["signups.accepted"].parse().unwrap();
    assert!(accepted >= 1, "the stored signup is on the page");

    // Assert: the 30-day view, an unknown range, and the stylesheets the page links
    let month = app.client.get(format!("{metrics}/status?range=30d")).send().await.unwrap();
    assert_eq!(month.status(), 200);
    assert!(month.text().await.unwrap().contains("aria-current=\"page\">Last 30 days"));
    assert_eq!(app.client.get(format!("{metrics}/status?range=1y")).send().await.unwrap().status(), 404);
    for sheet in ["/static/style.css", "/static/status.css"] {
        assert!(page.contains(&format!("href=\"{sheet}\"")), "{sheet} linked");
        let css = app.client.get(format!("{metrics}{sheet}")).send().await.unwrap();
        assert_eq!(css.status(), 200, "{sheet}");
        assert!(css.headers()["content-type"].to_str().unwrap().starts_with("text/css"), "{sheet}");
    }
    assert_eq!(app.client.get(app.url("/static/status.css")).send().await.unwrap().status(), 404, "not public");
}

// ---------------------------------------------------------------------------------------------
// The confirmation rate by source

/// The rows of a list's table by source: `data-source` → its cells (signups, confirmations,
/// rate), with `(total)` for the totals row.
fn source_rows(page: &str, list: &str) -> BTreeMap<String, Vec<String>> {
    let start = page.find(&format!("id=\"list-{list}\"")).unwrap_or_else(|| panic!("no section for {list}"));
    let section = &page[start..];
    let section = &section[..section.find("</section>").expect("the section ends")];
    let mut rows = BTreeMap::new();
    for row in section.split("<tr data-source=\"").skip(1) {
        let (key, rest) = row.split_once("\">").unwrap();
        let rest = &rest[..rest.find("</tr>").unwrap()];
        let cells = rest.split("<td>").skip(1).map(|cell| cell[..cell.find("</td>").unwrap()].to_owned()).collect();
        rows.insert(key.to_owned(), cells);
    }
    rows
}

/// The source rollups: (hour, list, source) → (signups, confirmations).
fn source_rollups(database: &Path) -> BTreeMap<(i64, String, String), (i64, i64)> {
    let conn = read_only(database);
    let mut statement = conn.prepare("SELECT hour, list, source, signups, confirmations FROM source_rollups").unwrap();
    statement
        .query_map([], |row| Ok(((row.get(0)?, row.get(1)?, row.get(2)?), (row.get(3)?, row.get(4)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_by_source_counts_real_traffic_and_a_flood_of_made_up_sources_stays_bounded() {
    // Arrange: one list behind a trusted proxy, the metrics listener, every mail sent at once
    let dir = tempfile::tempdir().unwrap();
    let extra = "[server]\nmetrics_listen = \"127.0.0.1:0\"\ntrusted_proxies = [\"127.0.0.1/32\"]\n\
                 client_ip_header = \"CF-Connecting-IP\"\n[[lists]]\nid = \"news\"\n";
    let config = config(dir.path(), 1000, extra);
    let served = serve(&config);
    let server = Server { dir, config, served };
    let mail_dir = server.dir.path().join("data/mail");
    let sign_up = |email: String, source: Option<String>, client_ip: String| {
        let url = server.served.url("/api/signup");
        async move {
            let mut fields = vec![("email", email), ("consent", "yes".to_owned()), ("list", "news".to_owned())];
            if let Some(source) = source {
                fields.push(("source", source));
            }
            let response = client().post(url).header("CF-Connecting-IP", client_ip).form(&fields).send().await.unwrap();
            response.status().as_u16()
        }
    };

    // Act: footer three times (two confirm), blog once, once without a source (confirms)
    let known = [("a", Some("footer")), ("b", Some("footer")), ("c", Some("footer")), ("d", Some("blog")), ("e", None)];
    for (n, (name, source)) in known.iter().enumerate() {
        let status = sign_up(format!("{name}@example.com"), source.map(str::to_owned), format!("198.51.100.{n}")).await;
        assert_eq!(status, 303, "{name}");
    }
    for name in ["a", "b", "e"] {
        let address = format!("{name}@example.com");
        let token =
            eventually("the confirmation mail", || tokens_by_recipient(&mail_dir).remove(&address)?.confirm).await;
        let confirmed =
            client().post(server.served.url("/api/confirm")).form(&[("token", token.as_str())]).send().await.unwrap();
        assert_eq!(confirmed.status(), 303, "{name} confirms");
    }

    // Act: a flood of 130 made-up sources from 130 networks, 16 at a time, with the rollup
    // worker storing on its tick while it runs
    const FLOOD: usize = 130;
    for wave in (0..FLOOD).collect::<Vec<_>>().chunks(16) {
        let requests = wave.iter().map(|&n| {
            sign_up(
                format!("victim{n}@example.org"),
                Some(format!("made-up-{n:03}")),
                format!("10.{}.{}.7", n / 200, n % 200),
            )
        });
        for status in futures_util::future::join_all(requests).await {
            assert_eq!(status, 303);
        }
    }

    // Assert: every signup and confirmation reached the rollups, nothing lost between ticks
    let total = i64::try_from(FLOOD + known.len()).unwrap();
    let stored = eventually("every source's figures stored", || {
        let found = source_rollups(&server.database());
        let signups: i64 = found.values().map(|figures| figures.0).sum();
        let confirmations: i64 = found.values().map(|figures| figures.1).sum();
        (signups == total && confirmations == 3).then_some(found)
    })
    .await;

    // Assert: each hour holds at most 100 sources by name, plus none and other
    let mut per_hour: BTreeMap<i64, usize> = BTreeMap::new();
    for (hour, list, _) in stored.keys() {
        assert_eq!(list, "news");
        *per_hour.entry(*hour).or_default() += 1;
    }
    assert!(per_hour.values().all(|rows| *rows <= 102), "bounded per hour: {per_hour:?}");
    let other: i64 = stored.iter().filter(|((_, _, source), _)| source == "(other)").map(|(_, f)| f.0).sum();
    if per_hour.len() == 1 {
        // 2 named sources of the real traffic and 130 made up: 32 past the bound of 100.
        assert_eq!(other, 32, "{per_hour:?}");
    }
    assert!(
        stored.keys().all(|(_, _, source)| !source.contains('@') && !source.contains("10.")),
        "no address or IP in the source rollups"
    );

    // Assert: the page's table: the real sources with their rates, 20 named in all, the rest
    // summed, no source apart, and the totals the list's accepted signups and confirmations
    let page = status_page(server.metrics_port(), "").await;
    let rows = source_rows(&page, "news");
    assert_eq!(rows["footer"], ["3", "2", "67%"], "{rows:?}");
    assert_eq!(rows["(none)"], ["1", "1", "100%"], "{rows:?}");
    let named: Vec<&String> = rows.keys().filter(|key| !key.starts_with('(')).collect();
    assert_eq!(named.len(), 20, "the 20 largest by name: {named:?}");
    assert_eq!(named[0], "blog", "ties of one signup go by name, and blog sorts before made-up-…");
    let shown: i64 = rows
        .iter()
        .filter(|(key, _)| key.as_str() != "(total)")
        .map(|(_, cells)| cells[0].parse::<i64>().unwrap())
        .sum();
    assert_eq!(shown, total, "every signup in one row of the table");
    // footer's 3 and 19 sources of one signup by name, 1 without a source: the rest summed.
    assert_eq!(rows["(other)"][0], (total - 3 - 19 - 1).to_string(), "the rest, summed");
    assert_eq!(rows["(total)"][..2], [total.to_string(), "3".to_owned()]);
    assert_eq!(list_totals(&page, "news")["signups.accepted"], total.to_string(), "the list's own figure");
    assert!(!page.contains("victim"), "no address on the page");

    // Assert: the 30 days, read from the rollups by day, show the same sources and totals
    let month = status_page(server.metrics_port(), "?range=30d").await;
    let by_day = source_rows(&month, "news");
    for key in ["footer", "(none)", "(other)", "(total)"] {
        assert_eq!(by_day[key], rows[key], "{key}: {by_day:?}");
    }
    assert_eq!(by_day.len(), rows.len(), "{by_day:?}");
    server.served.stop().await;
}
