//! The consent texts `subscriber.confirmed` carries, read once per list and version.
//!
//! Every confirmation with a webhook endpoint or destination names the text its row agreed to.
//! Reading it from `consent_texts` on each confirm was a read of its own beside the row's, with
//! a page cache the writer's commits keep emptying (BENCHMARKS.md, "Destinations"). The texts a
//! version names are known before any of its rows can be confirmed: `serve` records its lists'
//! texts when it starts, a row is created pending only by a signup through a server, and an
//! import (the one writer of texts beside `serve`) creates confirmed rows and refuses a version
//! that already names another text. So the texts of a (list, version) are read the first time
//! one of its rows is confirmed and kept for the life of the process; which one a row agreed to
//! follows from its creation time ([`intake::agreed_text`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::storage::intake;

/// One version's texts, as (first used at, text).
type VersionTexts = Arc<[(UnixSeconds, String)]>;

/// The texts of each (list, version) read so far.
#[derive(Debug, Default)]
pub struct ConsentTexts {
    read: Mutex<HashMap<(String, String), VersionTexts>>,
}

impl ConsentTexts {
    /// The text a row of `list_id` created at `created_at` agreed to under `consent_version`;
    /// `None` when the version has no text. Reads through `conn` on the first call for the
    /// (list, version).
    pub fn agreed(
        &self,
        conn: &Connection,
        list_id: &str,
        consent_version: &str,
        created_at: UnixSeconds,
    ) -> rusqlite::Result<Option<String>> {
        let key = (list_id.to_owned(), consent_version.to_owned());
        let known = self.read.lock().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
        let texts = match known {
            Some(texts) => texts,
            None => {
                let texts: VersionTexts = intake::consent_texts_of(conn, list_id, consent_version)?.into();
                // A version with no text yet is not kept: the next confirmation reads again.
                if !texts.is_empty() {
                    self.read.lock().unwrap_or_else(PoisonError::into_inner).insert(key, texts.clone());
                }
                texts
            }
        };
        Ok(intake::agreed_text(&texts, created_at).map(str::to_owned))
    }
}
