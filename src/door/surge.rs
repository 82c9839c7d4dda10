//! Surge mode (`docs/operations.md`, "Under attack"): which lists are in surge, as the writer's
//! counts last said. A list is in surge once its accepted signups pass `signup.surge_alert` in
//! one window, and until a whole window stayed at or below it; while it is, every valid signup
//! to it is answered with a request to press "Send my confirmation email", and its mail is held
//! until the visitor does.
//!
//! The counts live in SQLite and are read by the writer with each signup it records
//! (`storage::counters::count_signup`); this is their last answer kept in memory, for the one
//! answer that does not reach the writer: the honeypot's, which must look like everyone else's.
//! After a restart it is empty until the first signup is recorded.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::clock::UnixSeconds;

/// Per list, until when it is in surge.
#[derive(Debug, Default)]
pub struct SurgeModes {
    until: Mutex<HashMap<String, UnixSeconds>>,
}

impl SurgeModes {
    /// Records what the writer's count for `list` said: in surge until `until` (a time in the
    /// past: not in surge).
    pub fn note(&self, list: &str, until: UnixSeconds) {
        let mut map = self.until.lock().unwrap_or_else(PoisonError::into_inner);
        if until > 0 {
            map.insert(list.to_owned(), until);
        } else {
            map.remove(list);
        }
    }

    pub fn in_surge(&self, list: &str, now: UnixSeconds) -> bool {
        let map = self.until.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(list).is_some_and(|until| *until > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_in_surge_until_the_noted_time() {
        let modes = SurgeModes::default();
        assert!(!modes.in_surge("news", 100));
        modes.note("news", 200);
        assert!(modes.in_surge("news", 199));
        assert!(!modes.in_surge("news", 200));
        assert!(!modes.in_surge("other", 150));
        modes.note("news", 0);
        assert!(!modes.in_surge("news", 150));
    }
}
