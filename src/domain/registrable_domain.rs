//! The registrable domain of an address (the Public Suffix List's "eTLD+1", through the `psl`
//! crate, whose list is compiled in): `a.b.example.co.uk` → `example.co.uk`. Whoever owns that
//! domain can receive mail at any of its addresses and any of its subdomains, so the complaint
//! breaker counts all of them as one (`relays::effect`): a catch-all mailbox yields as many
//! addresses as its owner likes, but not more domains.
//!
//! Only the list's ICANN section counts. Its private section names the suffixes under which a
//! company hands out names of its own (`duckdns.org`, `github.io`): free and without limit, so
//! `a.duckdns.org` and `b.duckdns.org` are one owner's one domain, `duckdns.org`, as far as
//! abuse counting goes.

use psl::{Info, Psl, Type};

use super::EmailAddress;

/// The Public Suffix List without its private section: a private rule's match is looked up
/// again among the labels under it, until a rule of the ICANN section (or the list's default
/// rule, a single unknown label) answers.
struct IcannSection;

impl Psl for IcannSection {
    fn find<'a, T>(&self, labels: T) -> Info
    where
        T: Iterator<Item = &'a [u8]>,
    {
        // Reversed, as `Psl::find` takes them: the top-level label first.
        let labels: Vec<&[u8]> = labels.collect();
        let mut usable = labels.len();
        loop {
            let info = psl::List.find(labels[..usable].iter().copied());
            if info.typ != Some(Type::Private) {
                return info;
            }
            // How many labels the private rule matched: its length is theirs and their dots.
            let mut matched = 0;
            let mut length = 0;
            while matched < usable && length < info.len {
                length += labels[matched].len() + usize::from(matched > 0);
                matched += 1;
            }
            if matched <= 1 {
                return Info { len: labels.first().map_or(0, |label| label.len()), typ: None };
            }
            usable = matched - 1;
        }
    }
}

/// A registrable domain: lowercase ASCII (IDN labels in punycode, as [`EmailAddress`] keeps
/// them), never a public suffix of its own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RegistrableDomain(String);

impl RegistrableDomain {
    /// The registrable domain of `address`'s domain. A name the list cannot split (a public
    /// suffix itself, such as `co.uk`, or a single label) is its own registrable domain: it can
    /// only stand for itself.
    pub fn of(address: &EmailAddress) -> Self {
        let host = address.domain().trim_end_matches('.');
        let registrable = IcannSection
            .domain(host.as_bytes())
            .and_then(|domain| std::str::from_utf8(domain.trim().as_bytes()).ok())
            .unwrap_or(host);
        Self(registrable.to_ascii_lowercase())
    }
}

impl AsRef<str> for RegistrableDomain {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RegistrableDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(address: &str) -> String {
        RegistrableDomain::of(&EmailAddress::parse(address).unwrap()).to_string()
    }

    #[test]
    fn addresses_under_one_registrable_domain_share_it_and_icann_suffixes_split_owners() {
        for (address, registrable) in [
            ("ann@example.com", "example.com"),
            ("bob@mail.Example.COM", "example.com"),
            ("cat@a.b.c.example.com", "example.com"),
            ("dan@shop.example.co.uk", "example.co.uk"),
            ("eve@example.co.uk", "example.co.uk"),
            ("fay@alice.github.io", "github.io"),
            ("gus@bob.github.io", "github.io"),
            ("ann@a-forger.duckdns.org", "duckdns.org"),
            ("bob@mail.b-forger.duckdns.org", "duckdns.org"),
            ("cat@shop.blogspot.co.uk", "blogspot.co.uk"),
            ("dan@x.y.compute.amazonaws.com", "amazonaws.com"),
            ("hal@xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
            ("ivy@sub.münchen.de", "xn--mnchen-3ya.de"),
        ] {
            assert_eq!(of(address), registrable, "{address}");
        }
    }

    #[test]
    fn a_name_the_list_cannot_split_stands_for_itself() {
        assert_eq!(of("ann@co.uk"), "co.uk");
        assert_eq!(of("ann@duckdns.org"), "duckdns.org", "a private suffix is its owner's domain");
    }

    #[test]
    fn the_private_section_is_what_the_psl_crate_would_have_split() {
        // Guards the test above against a list in which these names stopped being private.
        for host in ["a-forger.duckdns.org", "alice.github.io"] {
            let suffix = psl::suffix(host.as_bytes()).unwrap();
            assert_eq!(suffix.typ(), Some(Type::Private), "{host}");
            assert_eq!(psl::domain_str(host), Some(host));
        }
    }
}
