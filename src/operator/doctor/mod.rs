//! `signupd doctor`: everything an operator must get right before the first visitor, checked
//! in one command, each check printed as ok / warning / problem with what it saw and, for
//! anything not ok, what to do. It writes nothing (the database is opened read-only), sends no
//! mail (the relay check stops before `MAIL FROM`), and prints no secret.
//!
//! The checks, in the order an operator fixes them: the machine (the data directory's
//! filesystem and free space, the secrets' modes, the database), the relay ([`relay`]), each
//! list's From domain in DNS ([`dns`]), and the public side ([`public`]). One check failing
//! never stops the others: a report that lists every problem saves a round trip per problem.
//!
//! Much of what it prints comes from outside — DNS records, the relay's replies, file names —
//! and anyone who controls a TXT record could put a terminal's escape sequences or a line break
//! with a fake `ok` line in one. So every [`Check`] escapes control characters (and the
//! invisible marks that reorder text) as it is made: no raw one reaches the terminal or the JSON.

pub mod dns;
pub mod machine;
pub mod public;
pub mod relay;

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::config::Config;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    /// Works, but something an operator should know or improve.
    Warning,
    /// Will not work as configured.
    Problem,
}

/// One check's outcome: what was looked at, what was seen, and what to do when not ok.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `machine`, `relay`, `dns` or `public`.
    pub area: &'static str,
    /// What was checked, in a few words (`SPF of bakery.test`).
    pub name: String,
    #[serde(rename = "status")]
    pub verdict: Verdict,
    /// One line of what was seen; never a secret.
    pub saw: String,
    /// One line of what to do; `None` when ok.
    pub todo: Option<String>,
}

impl Check {
    pub fn ok(area: &'static str, name: impl Into<String>, saw: impl Into<String>) -> Self {
        Self::new(area, name.into(), Verdict::Ok, saw.into(), None)
    }

    pub fn warning(
        area: &'static str,
        name: impl Into<String>,
        saw: impl Into<String>,
        todo: impl Into<String>,
    ) -> Self {
        Self::new(area, name.into(), Verdict::Warning, saw.into(), Some(todo.into()))
    }

    pub fn problem(
        area: &'static str,
        name: impl Into<String>,
        saw: impl Into<String>,
        todo: impl Into<String>,
    ) -> Self {
        Self::new(area, name.into(), Verdict::Problem, saw.into(), Some(todo.into()))
    }

    fn new(area: &'static str, name: String, verdict: Verdict, saw: String, todo: Option<String>) -> Self {
        Self { area, name: escaped(&name), verdict, saw: escaped(&saw), todo: todo.as_deref().map(escaped) }
    }
}

/// `text` with every control character (C0, DEL, C1) and every bidirectional formatting mark
/// written as an escape (`\x1b`, `\r`, `\u{202e}`), so text from outside prints as what it is.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x80 && c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if c.is_control()
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// The whole report, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    pub problems: usize,
    pub warnings: usize,
}

impl Report {
    fn of(checks: Vec<Check>) -> Self {
        let count = |verdict| checks.iter().filter(|check| check.verdict == verdict).count();
        let (problems, warnings) = (count(Verdict::Problem), count(Verdict::Warning));
        Self { checks, problems, warnings }
    }
}

/// Runs every check of `config`; `credentials_dir` is where the secrets are found, as `serve`
/// finds them ([`crate::config::secrets::credentials_dir`]).
pub async fn examine(config: &Config, credentials_dir: Option<&Path>) -> Report {
    let mut checks = machine::checks(config, credentials_dir);
    checks.extend(relay::checks(config, credentials_dir).await);
    checks.extend(dns::checks(config).await);
    checks.extend(public::checks(config).await);
    Report::of(checks)
}

/// Prints `report` for a person: one line per check, and the line of what to do under each
/// that is not ok; then the totals.
pub fn print(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    for check in &report.checks {
        let verdict = match check.verdict {
            Verdict::Ok => "ok     ",
            Verdict::Warning => "warning",
            Verdict::Problem => "problem",
        };
        writeln!(out, "{verdict}  {}: {}: {}", check.area, check.name, check.saw)?;
        if let Some(todo) = &check.todo {
            writeln!(out, "         → {todo}")?;
        }
    }
    let plural = |count: usize, word: &str| if count == 1 { format!("1 {word}") } else { format!("{count} {word}s") };
    writeln!(
        out,
        "{}: {}, {}",
        plural(report.checks.len(), "check"),
        plural(report.problems, "problem"),
        plural(report.warnings, "warning")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_from_outside_are_escaped_in_every_field() {
        let check = Check::problem(
            "dns",
            "SPF of \u{1b}[2Jbakery.test",
            "\"v=spf1 -all\r\nok       dns: DKIM key verified\u{7}\u{9b}\u{202e}\"",
            "fix\tit",
        );
        assert_eq!(check.name, "SPF of \\x1b[2Jbakery.test");
        assert_eq!(check.saw, "\"v=spf1 -all\\r\\nok       dns: DKIM key verified\\x07\\u{9b}\\u{202e}\"");
        assert_eq!(check.todo.as_deref(), Some("fix\\tit"));
        assert_eq!(escaped("münchen.de — ok"), "münchen.de — ok", "printable text is left alone");
    }
}
