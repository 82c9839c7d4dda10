//! Types that are valid by construction: every string from outside becomes one of these through
//! a fallible `parse`, so code that holds one never checks it again — `ListId`, `EmailAddress`,
//! `TrustedProxies`, a signup's `Source` and `Tag`, an address's `RegistrableDomain`, a list's declared fields and a signup's values for
//! them — and the data one of them needs, Cloudflare's published ranges
//! ([`cloudflare`]). A leaf: the configuration is built from these.

mod attribution;
pub mod cloudflare;
mod email_address;
pub mod fields;
mod list_id;
mod registrable_domain;
mod trusted_proxies;

pub use attribution::{AttributionError, Source, Tag};
pub use email_address::{EmailAddress, EmailAddressError, canonical_mailbox};
pub use fields::{FieldKind, FieldName, FieldProblem, FieldSpec, FieldValues, InvalidField};
pub use list_id::{ListId, ListIdError};
pub use registrable_domain::RegistrableDomain;
pub use trusted_proxies::TrustedProxies;
