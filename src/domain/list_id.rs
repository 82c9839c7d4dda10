//! A list's id: 1-64 characters of `a-z`, `0-9` and `-`. It appears in URLs, mail headers
//! (`List-Id`) and signed tokens, so it is kept to a set that needs no escaping anywhere.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListIdError {
    #[error("a list id must not be empty")]
    Empty,
    #[error("list id {0:?} is longer than 64 characters")]
    TooLong(String),
    #[error("list id {0:?} may contain only a-z, 0-9 and -")]
    BadCharacter(String),
}

impl ListId {
    pub const MAX_LEN: usize = 64;

    pub fn parse(value: &str) -> Result<Self, ListIdError> {
        if value.is_empty() {
            return Err(ListIdError::Empty);
        }
        if value.len() > Self::MAX_LEN {
            return Err(ListIdError::TooLong(value.chars().take(Self::MAX_LEN).collect()));
        }
        if !value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            return Err(ListIdError::BadCharacter(value.to_owned()));
        }
        Ok(Self(value.to_owned()))
    }
}

impl AsRef<str> for ListId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ListId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_lowercase_digits_and_dashes() {
        for good in ["news", "default", "a", "product-2", &"x".repeat(64)] {
            assert_eq!(ListId::parse(good).unwrap().as_ref(), good);
        }
    }

    #[test]
    fn refuses_everything_else() {
        assert_eq!(ListId::parse(""), Err(ListIdError::Empty));
        assert!(matches!(ListId::parse(&"x".repeat(65)), Err(ListIdError::TooLong(_))));
        for bad in ["News", "news letter", "news_letter", "news/../x", "nëws", "a\r\nb"] {
            assert!(matches!(ListId::parse(bad), Err(ListIdError::BadCharacter(_))), "{bad:?} should be refused");
        }
    }
}
