//! "Open your inbox": the webmail providers signupd knows, so the check-inbox page can offer one
//! link that opens the visitor's webmail — at the search for the list's sender where the provider
//! has a search that a link can open, else at the inbox (`docs/http-api.md`, "The answers").
//!
//! A provider is found from the address's domain alone (`gmail.com` is Gmail), or, for a domain
//! of its own (a company on Google Workspace or Microsoft 365), from the domain's MX hosts when
//! `signup.check_mx` is on. MX hosts match a provider when they are one of its mail domains or a
//! name under one (`aspmx.l.google.com` is under `google.com`). Of the MX records only the most
//! preferred ones that name a known provider count, and only when all of them at that preference
//! name the same one: a domain that splits its mail between two providers, or between a known one
//! and a host of its own, gets no link, since a wrong link is worse than none.
//!
//! The links never carry the visitor's address (the page does not know it; the redirect to it
//! carries only the provider's id), so a provider whose search URL needs the account (`/u/0/` is
//! the first account signed in to Gmail) opens the one the browser is signed in to.
//!
//! Search URLs, where given, are the ones Buttondown's and taitems' open-source "sniper link"
//! projects use; the others are the providers' webmail addresses.

/// A webmail provider: who it is, how its addresses and MX hosts look, where its webmail is.
#[derive(Debug, PartialEq, Eq)]
pub struct Provider {
    /// Stable, in URLs: `gmail`, `outlook`, …
    pub id: &'static str,
    /// What the link says: "Open Gmail".
    pub name: &'static str,
    /// Address domains that are this provider's (exact; subdomains are not).
    domains: &'static [&'static str],
    /// Mail domains whose hosts, or names under them, receive this provider's mail.
    mx: &'static [&'static str],
    link: Link,
}

#[derive(Debug, PartialEq, Eq)]
enum Link {
    /// A URL with `{sender}`, replaced by the sender's address, percent-encoded.
    Search(&'static str),
    /// The webmail's inbox.
    Inbox(&'static str),
}

/// Every provider signupd knows. An id is never reused: it is in redirects and JSON answers.
pub const PROVIDERS: &[Provider] = &[
    Provider {
        id: "gmail",
        name: "Gmail",
        domains: &["gmail.com", "googlemail.com"],
        mx: &["google.com", "googlemail.com"],
        link: Link::Search("https://mail.google.com/mail/u/0/#search/from%3A({sender})+in%3Aanywhere+newer_than%3A1h"),
    },
    Provider {
        id: "outlook",
        name: "Outlook",
        domains: &[
            "outlook.com",
            "outlook.de",
            "outlook.fr",
            "hotmail.com",
            "hotmail.co.uk",
            "hotmail.de",
            "hotmail.fr",
            "hotmail.it",
            "live.com",
            "live.de",
            "live.fr",
            "live.co.uk",
            "msn.com",
            "passport.com",
        ],
        // Outlook.com's own mail; Microsoft 365's tenants are `*.mail.protection.outlook.com`.
        mx: &["olc.protection.outlook.com", "hotmail.com"],
        link: Link::Inbox("https://outlook.live.com/mail/"),
    },
    Provider {
        id: "microsoft365",
        name: "Outlook",
        domains: &[],
        mx: &["mail.protection.outlook.com"],
        link: Link::Inbox("https://outlook.office.com/mail/"),
    },
    Provider {
        id: "yahoo",
        name: "Yahoo Mail",
        domains: &[
            "yahoo.com",
            "yahoo.co.uk",
            "yahoo.de",
            "yahoo.fr",
            "yahoo.it",
            "yahoo.es",
            "yahoo.ca",
            "ymail.com",
            "rocketmail.com",
            "myyahoo.com",
        ],
        mx: &["yahoodns.net", "yahoo.com"],
        link: Link::Search("https://mail.yahoo.com/d/search/keyword=from:{sender}"),
    },
    Provider {
        id: "aol",
        name: "AOL Mail",
        domains: &["aol.com", "aim.com"],
        // AOL's mail is received by Yahoo's hosts: its MX match Yahoo.
        mx: &[],
        link: Link::Search("https://mail.aol.com/d/search/keyword=from:{sender}"),
    },
    Provider {
        id: "icloud",
        name: "iCloud Mail",
        domains: &["icloud.com", "me.com", "mac.com"],
        mx: &["mail.icloud.com"],
        link: Link::Inbox("https://www.icloud.com/mail/"),
    },
    Provider {
        id: "proton",
        name: "Proton Mail",
        domains: &["proton.me", "pm.me", "protonmail.com", "protonmail.ch"],
        mx: &["protonmail.ch"],
        link: Link::Search("https://mail.proton.me/u/0/all-mail#from={sender}"),
    },
    Provider {
        id: "gmx",
        name: "GMX",
        domains: &["gmx.de", "gmx.net", "gmx.at", "gmx.ch", "gmx.com", "gmx.fr"],
        mx: &["gmx.net", "gmx.com"],
        link: Link::Inbox("https://www.gmx.net/"),
    },
    Provider {
        id: "webde",
        name: "WEB.DE",
        domains: &["web.de"],
        mx: &["web.de"],
        link: Link::Inbox("https://web.de/"),
    },
    Provider {
        id: "fastmail",
        name: "Fastmail",
        domains: &["fastmail.com", "fastmail.fm"],
        mx: &["messagingengine.com"],
        link: Link::Inbox("https://app.fastmail.com/"),
    },
    Provider {
        id: "zoho",
        name: "Zoho Mail",
        domains: &["zoho.com", "zohomail.com", "zohomail.eu"],
        mx: &["zoho.com", "zoho.eu", "zohomail.com"],
        link: Link::Inbox("https://mail.zoho.com/"),
    },
    Provider {
        id: "yandex",
        name: "Yandex Mail",
        domains: &["yandex.com", "yandex.ru", "ya.ru", "yandex.ua", "yandex.by", "yandex.kz"],
        mx: &["yandex.net", "yandex.ru"],
        link: Link::Inbox("https://mail.yandex.com/"),
    },
    Provider {
        id: "mailru",
        name: "Mail.ru",
        domains: &["mail.ru", "inbox.ru", "list.ru", "bk.ru"],
        mx: &["mail.ru"],
        link: Link::Search("https://e.mail.ru/search/?q_from={sender}"),
    },
];

impl Provider {
    /// The provider whose `id` this is.
    pub fn by_id(id: &str) -> Option<&'static Self> {
        PROVIDERS.iter().find(|provider| provider.id == id)
    }

    /// The provider of addresses at `domain` (lowercase, as an address's domain).
    pub fn by_domain(domain: &str) -> Option<&'static Self> {
        PROVIDERS.iter().find(|provider| provider.domains.contains(&domain))
    }

    /// The provider that receives a domain's mail, from its MX records (preference, host): see
    /// the module documentation for the rule.
    pub fn by_mx(records: &[(u16, String)]) -> Option<&'static Self> {
        let known = |host: &str| PROVIDERS.iter().find(|provider| provider.receives_for(host));
        let best = records.iter().filter(|(_, host)| known(host).is_some()).map(|(preference, _)| *preference).min()?;
        let mut at_best = records.iter().filter(|(preference, _)| *preference == best).map(|(_, host)| known(host));
        let first = at_best.next()??;
        at_best.all(|other| other == Some(first)).then_some(first)
    }

    fn receives_for(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.mx
            .iter()
            .any(|domain| host == *domain || host.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.')))
    }

    /// Where the link goes for mail from `sender` (the list's address).
    pub fn url(&self, sender: &str) -> String {
        match self.link {
            Link::Search(template) => {
                let encoded: String = url::form_urlencoded::byte_serialize(sender.as_bytes()).collect();
                template.replace("{sender}", &encoded)
            }
            Link::Inbox(url) => url.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mx(records: &[(u16, &str)]) -> Option<&'static str> {
        let records: Vec<(u16, String)> =
            records.iter().map(|(preference, host)| (*preference, (*host).to_owned())).collect();
        Provider::by_mx(&records).map(|provider| provider.id)
    }

    #[test]
    fn ids_and_domains_are_unique_and_every_link_is_https() {
        for (n, provider) in PROVIDERS.iter().enumerate() {
            assert_eq!(Provider::by_id(provider.id).map(|found| found.id), Some(provider.id));
            assert!(PROVIDERS[n + 1..].iter().all(|other| other.id != provider.id), "{} twice", provider.id);
            for domain in provider.domains {
                assert_eq!(Provider::by_domain(domain).map(|found| found.id), Some(provider.id), "{domain}");
            }
            assert!(provider.url("news@example.org").starts_with("https://"), "{}", provider.id);
        }
    }

    #[test]
    fn an_address_domain_names_its_provider_exactly() {
        let cases = [
            ("gmail.com", Some("gmail")),
            ("googlemail.com", Some("gmail")),
            ("hotmail.de", Some("outlook")),
            ("ymail.com", Some("yahoo")),
            ("aol.com", Some("aol")),
            ("me.com", Some("icloud")),
            ("pm.me", Some("proton")),
            ("gmx.de", Some("gmx")),
            ("web.de", Some("webde")),
            ("fastmail.fm", Some("fastmail")),
            ("ya.ru", Some("yandex")),
            ("bk.ru", Some("mailru")),
            // Not a subdomain, not a look-alike, not a company's own domain.
            ("mail.gmail.com", None),
            ("gmail.co", None),
            ("notgmail.com", None),
            ("example.org", None),
        ];
        for (domain, expected) in cases {
            assert_eq!(Provider::by_domain(domain).map(|provider| provider.id), expected, "{domain}");
        }
    }

    /// A case of the MX rule: what it shows, the records, the provider found.
    type MxCase = (&'static str, &'static [(u16, &'static str)], Option<&'static str>);

    #[test]
    fn mx_hosts_name_a_provider_only_when_the_best_known_preference_has_one() {
        let cases: [MxCase; 11] = [
            ("Google Workspace", &[(1, "aspmx.l.google.com."), (5, "alt1.aspmx.l.google.com.")], Some("gmail")),
            ("Google's newer single MX", &[(1, "smtp.google.com")], Some("gmail")),
            ("Microsoft 365", &[(0, "example-org.mail.protection.outlook.com.")], Some("microsoft365")),
            ("Outlook.com", &[(10, "hotmail-com.olc.protection.outlook.com.")], Some("outlook")),
            ("Proton, two hosts", &[(10, "mail.protonmail.ch."), (20, "mailsec.protonmail.ch.")], Some("proton")),
            ("Yahoo", &[(1, "mta5.am0.yahoodns.net.")], Some("yahoo")),
            (
                "a host of its own first, a known provider as backup",
                &[(5, "mx.example.org."), (10, "aspmx.l.google.com.")],
                Some("gmail"),
            ),
            ("two providers at one preference", &[(10, "aspmx.l.google.com."), (10, "mail.protonmail.ch.")], None),
            (
                "a known provider beside an unknown host at one preference",
                &[(10, "aspmx.l.google.com."), (10, "mx.example.org.")],
                None,
            ),
            ("a look-alike host", &[(10, "google.com.evil.example.")], None),
            ("no records", &[], None),
        ];
        for (case, records, expected) in cases {
            assert_eq!(mx(records), expected, "{case}");
        }
        assert_eq!(mx(&[(10, "notgoogle.com.")]), None, "a suffix match is a whole label");
        assert_eq!(mx(&[(10, "ASPMX.L.GOOGLE.COM.")]), Some("gmail"), "any case");
    }

    #[test]
    fn a_search_link_carries_the_sender_percent_encoded_and_an_inbox_link_does_not() {
        let gmail = Provider::by_id("gmail").unwrap();
        assert_eq!(
            gmail.url("news+list@example.org"),
            "https://mail.google.com/mail/u/0/#search/from%3A(news%2Blist%40example.org)+in%3Aanywhere+newer_than%3A1h"
        );
        let outlook = Provider::by_id("outlook").unwrap();
        assert_eq!(outlook.url("news@example.org"), "https://outlook.live.com/mail/");
        assert_eq!(
            Provider::by_id("proton").unwrap().url("a&b@example.org"),
            "https://mail.proton.me/u/0/all-mail#from=a%26b%40example.org"
        );
    }
}
