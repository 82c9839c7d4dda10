//! Where a signup came from: its `source` (`homepage-footer`) and its `tags` (`beta`). Both are
//! 1-64 characters of `a-z`, `0-9`, `.`, `_` and `-`, so they are safe in a CSV cell, a JSON
//! string, a URL and a comma-joined column without escaping. A source is free (any word the
//! operator's form sends); a tag must also be one of the list's configured `tags`, which the
//! configuration checks with the same rule.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not 1-64 characters of a-z, 0-9, '.', '_' and '-'")]
pub struct AttributionError(String);

/// A signup's `source`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source(String);

/// One of a signup's `tags`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(String);

const MAX_LEN: usize = 64;

fn word(value: &str) -> Result<String, AttributionError> {
    let valid = (1..=MAX_LEN).contains(&value.len())
        && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'));
    if valid { Ok(value.to_owned()) } else { Err(AttributionError(value.chars().take(MAX_LEN).collect())) }
}

impl Source {
    pub fn parse(value: &str) -> Result<Self, AttributionError> {
        word(value).map(Self)
    }
}

impl Tag {
    pub fn parse(value: &str) -> Result<Self, AttributionError> {
        word(value).map(Self)
    }

    /// The stored form of a set of tags: sorted, without repeats, joined by commas; `None` when
    /// there are none.
    pub fn join(tags: &[Self]) -> Option<String> {
        let mut tags: Vec<&str> = tags.iter().map(AsRef::as_ref).collect();
        tags.sort_unstable();
        tags.dedup();
        (!tags.is_empty()).then(|| tags.join(","))
    }

    /// The tags of a stored column (`None` or empty: none).
    pub fn split(column: Option<&str>) -> Vec<String> {
        column.unwrap_or("").split(',').filter(|tag| !tag.is_empty()).map(str::to_owned).collect()
    }
}

impl AsRef<str> for Source {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Tag {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_the_allowed_alphabet_pass() {
        for good in ["homepage-footer", "a", "v1.2_beta", &"x".repeat(64)] {
            assert_eq!(Source::parse(good).unwrap().as_ref(), good);
            assert_eq!(Tag::parse(good).unwrap().as_ref(), good);
        }
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in ["", "Homepage", "a b", "a,b", "ä", "<script>", "=cmd", &"x".repeat(65), "a\n"] {
            assert!(Source::parse(bad).is_err(), "{bad:?}");
            assert!(Tag::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tags_are_stored_sorted_once_each() {
        let tags: Vec<Tag> = ["pricing", "beta", "pricing"].iter().map(|t| Tag::parse(t).unwrap()).collect();
        assert_eq!(Tag::join(&tags).as_deref(), Some("beta,pricing"));
        assert_eq!(Tag::join(&[]), None);
        assert_eq!(Tag::split(Some("beta,pricing")), ["beta", "pricing"]);
        assert!(Tag::split(None).is_empty());
    }
}
