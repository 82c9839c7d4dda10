//! The operator's list of refused domains (`signup.blocked_domains_file`): parsing the file and
//! matching an address's domain against it.
//!
//! # File format
//!
//! One domain per line. `#` starts a comment, on its own line or after a domain; blank lines
//! and surrounding whitespace are ignored, and so is a byte-order mark at the start of the file
//! (editors on some systems write one). An entry is normalised the way
//! [`EmailAddress`](crate::domain::EmailAddress) normalises an address's domain — UTS 46
//! (`idna::domain_to_ascii`: case folding, punycode) — so `Bücher.DE`, `bücher.de` and
//! `xn--bcher-kva.de` are one entry. One trailing dot (`example.com.`, the zone-file spelling)
//! is allowed and dropped. A single label (`zip`) is a valid entry and blocks a whole top-level
//! domain. Anything else — a line with an `@`, a URL, a wildcard, two words — is an error that
//! names the line, so a typo never silently blocks nothing.
//!
//! # Matching
//!
//! An entry blocks the domain itself and every subdomain: `example.com` blocks
//! `example.com` and `a.b.example.com`, never `notexample.com`. The lookup walks the address's
//! domain label by label (at most 127 set lookups for the longest possible domain), so the cost
//! does not grow with the size of the list.
//!
//! # What this module must not do
//!
//! Say which entries the file holds: errors name the file and the line number and quote the
//! offending line only, and [`Debug`](std::fmt::Debug) prints the number of entries.

use std::collections::HashSet;
use std::fmt;
use std::path::Path;

use anyhow::Context;

/// The refused domains, normalised to lowercase punycode without a trailing dot.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BlockedDomains {
    domains: HashSet<String>,
}

/// Why a line of the file is not a domain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {shown} is not a domain name (expected one domain such as example.com per line)")]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// The offending line, trimmed, escaped and shortened for an error message.
    shown: String,
}

impl BlockedDomains {
    /// No domain is blocked: what a configuration without `blocked_domains_file` gets.
    pub fn none() -> Self {
        Self::default()
    }

    /// Parses the file format described in the module documentation.
    pub fn parse(text: &str) -> Result<Self, LineError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut domains = HashSet::new();
        for (index, line) in text.lines().enumerate() {
            let entry = line.split_once('#').map_or(line, |(before, _)| before).trim();
            if entry.is_empty() {
                continue;
            }
            let domain = normalise(entry).ok_or_else(|| LineError { line: index + 1, shown: shown(entry) })?;
            domains.insert(domain);
        }
        Ok(Self { domains })
    }

    /// Reads and parses `path`. Errors name the file (and the line, for a bad entry).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
        Self::parse(&text).with_context(|| path.display().to_string())
    }

    /// Whether `domain` (an address's domain: lowercase punycode, as
    /// [`EmailAddress::domain`](crate::domain::EmailAddress::domain) gives it) or one of its
    /// parent domains is on the list.
    pub fn blocks(&self, domain: &str) -> bool {
        if self.domains.is_empty() {
            return false;
        }
        let mut rest = domain;
        loop {
            if self.domains.contains(rest) {
                return true;
            }
            match rest.split_once('.') {
                Some((_, parent)) => rest = parent,
                None => return false,
            }
        }
    }

    /// How many distinct domains the list holds (for the log line at start and on reload).
    pub fn len(&self) -> usize {
        self.domains.len()
    }

    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }
}

/// Only the size: the entries are the operator's business, not the log's.
impl fmt::Debug for BlockedDomains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockedDomains").field("domains", &self.domains.len()).finish()
    }
}

/// One entry as lowercase punycode, or `None` if it is not a host name. The label rules are the
/// ones an address's domain must meet (RFC 1035 §2.3.1 letters, digits and hyphens after UTS 46),
/// except that one label is enough.
fn normalise(entry: &str) -> Option<String> {
    let entry = entry.strip_suffix('.').unwrap_or(entry);
    // `domain_to_ascii` lets `@`, `/`, `*` and spaces through (its deny list is empty), so the
    // label check below is what refuses addresses, URLs and wildcards.
    let ascii = idna::domain_to_ascii(entry).ok()?;
    let valid = ascii.len() <= 253 && ascii.split('.').all(is_ldh_label);
    valid.then_some(ascii)
}

fn is_ldh_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// The line as it may appear in an error: escaped, at most 60 characters.
fn shown(entry: &str) -> String {
    let mut shown: String = entry.chars().take(60).collect();
    if shown.len() < entry.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(text: &str) -> BlockedDomains {
        BlockedDomains::parse(text).unwrap()
    }

    #[test]
    fn comments_blank_lines_and_whitespace_are_ignored() {
        let blocked = list(
            "\u{feff}# disposable mail\n\
             \n\
             mailinator.com   # trailing comment\n\
             \t spam.example \r\n\
             #commented-out.example\n\
             ###\n",
        );
        assert_eq!(blocked.len(), 2);
        assert!(blocked.blocks("mailinator.com"));
        assert!(blocked.blocks("spam.example"));
        assert!(!blocked.blocks("commented-out.example"), "a commented-out line blocks nothing");
    }

    #[test]
    fn entries_are_normalised_like_an_address_domain() {
        let cases = [
            ("upper case", "Example.COM", "example.com"),
            ("IDN in Unicode", "Bücher.de", "xn--bcher-kva.de"),
            ("IDN already in punycode", "XN--BCHER-KVA.DE", "xn--bcher-kva.de"),
            ("full-width letters", "ｅｘａｍｐｌｅ.com", "example.com"),
            ("trailing dot", "example.org.", "example.org"),
            ("top-level domain", "zip", "zip"),
        ];
        for (case, entry, normalised) in cases {
            let blocked = list(entry);
            assert!(blocked.blocks(normalised), "{case}: {entry:?} should block {normalised:?}");
            assert_eq!(blocked.len(), 1, "{case}");
        }
    }

    #[test]
    fn an_entry_blocks_its_subdomains_and_nothing_else() {
        let blocked = list("example.com\nzip\n");
        let cases = [
            ("the domain itself", "example.com", true),
            ("a subdomain", "mail.example.com", true),
            ("a deeper subdomain", "a.b.example.com", true),
            ("a longer name ending the same way", "notexample.com", false),
            ("a sibling", "example.net", false),
            ("the parent", "com", false),
            ("a name that contains it", "example.com.evil.net", false),
            ("a blocked top-level domain", "anything.zip", true),
        ];
        for (case, domain, expected) in cases {
            assert_eq!(blocked.blocks(domain), expected, "{case}: {domain}");
        }
    }

    #[test]
    fn an_invalid_line_is_refused_with_its_number() {
        let cases = [
            ("an address", "jane@example.com"),
            ("a URL", "https://example.com/"),
            ("a wildcard", "*.example.com"),
            ("two words", "example.com example.net"),
            ("an empty label", "example..com"),
            ("a leading dot", ".example.com"),
            ("a hyphen at a label's end", "example-.com"),
            ("a label over 63 octets", &format!("{}.com", "a".repeat(64))),
            ("an underscore", "my_domain.com"),
            ("a bad punycode label", "xn--a.com"),
        ];
        for (case, entry) in cases {
            let text = format!("# header\n\nok.example\n{entry}\n");
            let error = BlockedDomains::parse(&text).expect_err(case);
            assert_eq!(error.line, 4, "{case}");
            let message = error.to_string();
            assert!(message.starts_with("line 4: "), "{case}: {message}");
        }
    }

    #[test]
    fn a_long_invalid_line_is_shortened_in_the_error() {
        let error = BlockedDomains::parse(&"x y".repeat(100)).unwrap_err();
        assert!(error.to_string().len() < 200, "{error}");
    }

    #[test]
    fn an_empty_file_blocks_nothing() {
        assert!(list("").is_empty());
        assert!(list("# nothing yet\n\n").is_empty());
        assert!(!list("").blocks("example.com"));
    }

    #[test]
    fn debug_shows_the_size_not_the_entries() {
        let shown = format!("{:?}", list("secret-partner.example\n"));
        assert!(!shown.contains("secret-partner"), "{shown}");
        assert!(shown.contains('1'), "{shown}");
    }

    #[test]
    fn load_names_the_file_and_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blocked.txt");
        std::fs::write(&path, "example.com\nnot a domain\n").unwrap();
        let message = format!("{:#}", BlockedDomains::load(&path).unwrap_err());
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("line 2"), "{message}");

        let missing = dir.path().join("missing.txt");
        let message = format!("{:#}", BlockedDomains::load(&missing).unwrap_err());
        assert!(message.contains(&missing.display().to_string()), "{message}");

        std::fs::write(&path, b"example.com\n\xff\n").unwrap();
        let message = format!("{:#}", BlockedDomains::load(&path).unwrap_err());
        assert!(message.contains("not UTF-8"), "{message}");
    }

    fn label() -> impl Strategy<Value = String> {
        // No `--` in the third and fourth place: `xn--` labels must be valid punycode.
        "[a-z0-9]{1,8}(-[a-z0-9]{1,4})?"
    }

    fn domain() -> impl Strategy<Value = String> {
        prop::collection::vec(label(), 1..4).prop_map(|labels| labels.join("."))
    }

    proptest! {
        /// Matching by suffix of whole labels, against a brute-force reading of the rule.
        #[test]
        fn blocks_exactly_the_entry_and_its_subdomains(entry in domain(), candidate in domain(), prefix in domain()) {
            let blocked = list(&entry);
            let expected = candidate == entry || candidate.ends_with(&format!(".{entry}"));
            prop_assert_eq!(blocked.blocks(&candidate), expected);
            let subdomain = format!("{prefix}.{entry}");
            prop_assert!(blocked.blocks(&subdomain));
            // `notexample.com` for `example.com`: the same characters, not the same labels.
            let glued = format!("{prefix}{entry}");
            prop_assert!(!blocked.blocks(&glued));
        }

        /// Any text either parses or names a line that exists; it never panics.
        #[test]
        fn parsing_never_panics(text in "\\PC*(\n\\PC*){0,5}") {
            if let Err(error) = BlockedDomains::parse(&text) {
                prop_assert!(error.line >= 1 && error.line <= text.lines().count());
            }
        }

        /// An entry's own spelling in upper case, with a comment and padding, blocks the same.
        #[test]
        fn case_comments_and_padding_do_not_change_an_entry(entry in domain()) {
            let padded = format!("  {}  # note\n", entry.to_uppercase());
            prop_assert_eq!(list(&padded), list(&entry));
        }
    }
}
