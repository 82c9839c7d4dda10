//! Which email domains a signup accepts, beyond the address's syntax: the operator's blocked
//! domains (`signup.blocked_domains_file`, [`blocked`]) and, when `signup.check_mx` is on,
//! whether the domain receives mail at all ([`mx`]).
//!
//! The signup route asks both at the end of step 4 of its checks (after the address's syntax,
//! the consent and the list; before the rate limit and the database): a blocked domain is
//! `400 domain_not_allowed`, a domain without mail is `400 invalid_email`. Neither writes
//! anything nor depends on the address's state.
//!
//! The blocked list is read at start ([`DomainPolicy::load`]; a file that cannot be read or has
//! a bad line stops the start) and again on `SIGHUP` ([`DomainPolicy::reload`], which
//! [`crate::app`] calls; on failure the list in use stays). It sits behind an `RwLock` that a
//! request holds only for its lookup and a reload only to swap the new list in (the file is read
//! before, the old list dropped after), so requests never wait for the file.
//!
//! The MX check runs before the rate limit, so a flood of signups with made-up domains would
//! turn into a flood of DNS queries. At most [`MAX_LOOKUPS_IN_FLIGHT`] checks ask the DNS at a
//! time; a request that finds them all busy is accepted unchecked (as on a DNS timeout), so the
//! queries a flood can cause are bounded, and a visitor is never made to wait for a queue.
//!
//! [`providers`] says whose webmail a domain's addresses use, for the check-inbox page's "open
//! your inbox" link ([`DomainPolicy::mail_check`]): by the domain, or with `check_mx` by its
//! MX hosts, the ones the check's own MX answer named (no second query).

pub mod blocked;
pub mod mx;
pub mod providers;

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use anyhow::Context;
use tokio::sync::Semaphore;

pub use blocked::BlockedDomains;
pub use mx::{MailDomainCheck, Verdict};
pub use providers::Provider;

use crate::config::SignupConfig;

/// MX checks that may ask the DNS at once (each asks up to three queries).
pub const MAX_LOOKUPS_IN_FLIGHT: usize = 32;

/// What [`DomainPolicy::mail_check`] found about a domain.
#[derive(Debug, Clone, Copy)]
pub struct MailCheck {
    pub verdict: Verdict,
    /// Whose webmail its addresses use, if signupd knows.
    pub provider: Option<&'static Provider>,
}

/// The domain checks of a running signupd; cheap to clone (the list and the resolver are
/// shared).
#[derive(Debug, Clone)]
pub struct DomainPolicy {
    /// `signup.blocked_domains_file`, re-read on reload.
    file: Option<PathBuf>,
    blocked: Arc<RwLock<BlockedDomains>>,
    /// `None` unless `signup.check_mx` is on.
    mail: Option<MailDomainCheck>,
    /// Bounds the MX checks asking the DNS at once.
    lookups: Arc<Semaphore>,
}

impl DomainPolicy {
    /// Reads the blocked domains file (errors name `signup.blocked_domains_file`, the file and
    /// the line) and sets up the resolver when `check_mx` is on.
    pub fn load(config: &SignupConfig) -> anyhow::Result<Self> {
        let blocked = match &config.blocked_domains_file {
            Some(path) => {
                let blocked = BlockedDomains::load(path).context("signup.blocked_domains_file")?;
                tracing::info!(domains = blocked.len(), "read signup.blocked_domains_file");
                blocked
            }
            None => BlockedDomains::none(),
        };
        let mail = config.check_mx.then(|| MailDomainCheck::new(&config.dns_servers)).transpose()?;
        Ok(Self {
            file: config.blocked_domains_file.clone(),
            blocked: Arc::new(RwLock::new(blocked)),
            mail,
            lookups: Arc::new(Semaphore::new(MAX_LOOKUPS_IN_FLIGHT)),
        })
    }

    /// Whether `domain` (an address's domain, lowercase punycode) or a parent of it is blocked.
    pub fn is_blocked(&self, domain: &str) -> bool {
        // A panic while the lock was held cannot have left the list half-written: writers only
        // swap a whole list in.
        self.blocked.read().unwrap_or_else(PoisonError::into_inner).blocks(domain)
    }

    /// With `check_mx` on, asks the DNS whether `domain` receives mail (otherwise accepts), and
    /// names the webmail provider of addresses at `domain`: by the domain itself, or by the MX
    /// hosts the check found. Both depend on the domain only, never on an address's state.
    pub async fn mail_check(&self, domain: &str) -> MailCheck {
        let by_domain = Provider::by_domain(domain);
        let Some(check) = &self.mail else {
            return MailCheck { verdict: Verdict::Accepts, provider: by_domain };
        };
        let Ok(_permit) = self.lookups.try_acquire() else {
            tracing::debug!("check_mx: every lookup slot is busy; accepting the address unchecked");
            return MailCheck { verdict: Verdict::Accepts, provider: by_domain };
        };
        let (verdict, hosts) = check.check_with_hosts(domain).await;
        MailCheck { verdict, provider: by_domain.or_else(|| Provider::by_mx(&hosts)) }
    }

    /// Re-reads the blocked domains file and swaps it in. Returns the number of domains now
    /// blocked, or `None` when no file is configured. On error the list in use stays.
    pub async fn reload(&self) -> anyhow::Result<Option<usize>> {
        let Some(path) = self.file.clone() else {
            return Ok(None);
        };
        let blocked = tokio::task::spawn_blocking(move || BlockedDomains::load(&path))
            .await
            .context("reading signup.blocked_domains_file was cancelled")?
            .context("signup.blocked_domains_file")?;
        let count = blocked.len();
        let old = std::mem::replace(&mut *self.blocked.write().unwrap_or_else(PoisonError::into_inner), blocked);
        drop(old);
        Ok(Some(count))
    }

    /// How many domains are blocked now.
    pub fn blocked_count(&self) -> usize {
        self.blocked.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}
