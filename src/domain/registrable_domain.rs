//! The registrable domain of an address (the Public Suffix List's "eTLD+1", through the `psl`
//! crate, whose list is compiled in): `a.b.example.co.uk` → `example.co.uk`. Whoever owns that
//! domain can receive mail at any of its addresses and any of its subdomains, so the complaint
//! breaker counts all of them as one (`relays::effect`): a catch-all mailbox yields as many
//! addresses as its owner likes, but not more domains.

use super::EmailAddress;

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
        let registrable = psl::domain_str(host).unwrap_or(host);
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
    fn addresses_under_one_registrable_domain_share_it_and_public_suffixes_split_owners() {
        for (address, registrable) in [
            ("ann@example.com", "example.com"),
            ("bob@mail.Example.COM", "example.com"),
            ("cat@a.b.c.example.com", "example.com"),
            ("dan@shop.example.co.uk", "example.co.uk"),
            ("eve@example.co.uk", "example.co.uk"),
            ("fay@alice.github.io", "alice.github.io"),
            ("gus@bob.github.io", "bob.github.io"),
            ("hal@xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
            ("ivy@sub.münchen.de", "xn--mnchen-3ya.de"),
        ] {
            assert_eq!(of(address), registrable, "{address}");
        }
    }

    #[test]
    fn a_name_the_list_cannot_split_stands_for_itself() {
        assert_eq!(of("ann@co.uk"), "co.uk");
    }
}
