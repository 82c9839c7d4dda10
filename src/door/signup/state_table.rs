//! The signup state table (`docs/http-api.md`), applied to intake items after their answer was sent:
//!
//! | state of (list, address)             | action                                   |
//! | ------------------------------------ | ---------------------------------------- |
//! | unknown                              | insert a pending row; queue confirmation |
//! | pending, last mail ≥ cooldown ago    | queue confirmation                       |
//! | pending, last mail < cooldown ago    | nothing                                  |
//! | pending, first mail still queued     | nothing                                  |
//! | confirmed                            | nothing                                  |
//! | suppressed as `not_me`               | nothing                                  |
//! | bounced or complained (every list)   | nothing                                  |
//! | suppressed as `unsubscribed`         | like unknown (confirming lifts it)       |
//!
//! Queuing is idempotent (one queued confirmation per row at most), and the mail worker
//! re-checks the cooldown with a compare-and-set on the send time when it mints the token, so
//! concurrent requests for one address give one row and at most one mail per cooldown.
//! Duplicate signups never touch an existing row's removal hash, consent or `created_at`.

use rusqlite::Connection;

use crate::clock::UnixSeconds;
use crate::config::secrets::Secret;
use crate::config::tokens::RemovalToken;
use crate::storage::intake::{self, IntakeItem};
use crate::storage::subscribers::{self, NewPending, Press, Status};
use crate::storage::suppressions::{self, Reason};
use crate::storage::{Batch, Command};

/// What the state table did with one intake item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    InsertedPending,
    QueuedResend,
    Nothing,
}

/// An intake item with the hashes applying it may need, computed before it reaches the writer.
pub struct Prepared {
    item: IntakeItem,
    suppression_hash: String,
    /// The address's every-list key, under which its bounces and complaints are stored.
    every_list_hash: String,
    /// Used only if the address is unknown.
    new_id: String,
    new_removal_hash: String,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("intake_id", &self.item.id).finish_non_exhaustive()
    }
}

impl Prepared {
    /// The intake item's id: the order items are applied in.
    pub fn intake_id(&self) -> i64 {
        self.item.id
    }

    pub fn new(item: IntakeItem, hash_key: &Secret) -> Self {
        // Time-ordered (UUIDv7): a new row's id lands at the end of the primary key and of the
        // outbox's subscriber index instead of on a random page of each, which roughly halves
        // the pages a signup dirties (measured: random keys made each signup write ~57 KiB of
        // pages). It reveals only when the row was created, which the subscriber knows.
        let new_id = uuid::Uuid::now_v7().to_string();
        Self {
            suppression_hash: suppressions::hash(hash_key, &item.list_id, &item.email),
            every_list_hash: suppressions::every_list_hash(hash_key, &item.email),
            new_removal_hash: RemovalToken::derive(hash_key, &new_id).removal_hash(),
            new_id,
            item,
        }
    }
}

/// Applies the state table to a chunk of intake items and deletes them. An item that is no
/// longer in `intake` (its address was removed meanwhile) is skipped.
#[derive(Debug)]
pub struct ApplyIntake {
    pub items: Vec<Prepared>,
    pub resend_cooldown: i64,
    pub now: UnixSeconds,
}

impl Command for ApplyIntake {
    type Output = Vec<Action>;
    // Applying a chunk costs a few milliseconds; no request should wait for it in its commit.
    const BACKGROUND: bool = true;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Action>> {
        let conn = batch.conn();
        let mut actions = Vec::with_capacity(self.items.len());
        for prepared in &self.items {
            if let Some(pressed) = intake::take(conn, prepared.item.id)? {
                actions.push(apply(conn, self.resend_cooldown, self.now, prepared, pressed)?);
            }
        }
        Ok(actions)
    }
}

/// Applies one item; `pressed`: its visitor pressed to send by now (read in this command).
fn apply(
    conn: &Connection,
    cooldown: i64,
    now: UnixSeconds,
    prepared: &Prepared,
    pressed: bool,
) -> anyhow::Result<Action> {
    let item = &prepared.item;
    if suppressions::find(conn, &prepared.suppression_hash)? == Some(Reason::NotMe)
        || suppressions::find(conn, &prepared.every_list_hash)?.is_some_and(Reason::never_mailed)
    {
        return Ok(Action::Nothing);
    }
    // Recorded in surge: held until pressed (`docs/operations.md`, "Under attack").
    let press = match (item.send_id, pressed) {
        (None, _) => Press::InTurn,
        (Some(_), false) => Press::Held,
        (Some(_), true) => Press::Pressed,
    };
    let (action, pending_row) = match subscribers::find(conn, &item.list_id, &item.email)? {
        Some(existing) if existing.status == Status::Confirmed => (Action::Nothing, None),
        Some(existing) => match existing.confirmation_sent_at {
            Some(sent_at) if now.saturating_sub(sent_at) >= cooldown => {
                let queued = subscribers::queue_confirmation(conn, &existing.id, item.network.as_deref(), now, press)?;
                (if queued { Action::QueuedResend } else { Action::Nothing }, Some(existing.id))
            }
            _ => (Action::Nothing, Some(existing.id)),
        },
        None => {
            subscribers::insert_pending(
                conn,
                &NewPending {
                    id: &prepared.new_id,
                    list_id: &item.list_id,
                    email: &item.email,
                    consent_version: &item.consent_version,
                    created_at: item.received_at,
                    removal_hash: &prepared.new_removal_hash,
                    source: item.source.as_deref(),
                    tags: item.tags.as_deref(),
                    fields: item.fields.as_deref(),
                    language: item.language.as_deref(),
                },
            )?;
            subscribers::queue_confirmation(conn, &prepared.new_id, item.network.as_deref(), now, press)?;
            (Action::InsertedPending, Some(prepared.new_id.clone()))
        }
    };
    // The send token of a signup in surge acts on the row's queued confirmation, whichever
    // signup queued it: a press after this finds it through the link, a press before it
    // releases it now.
    if let (Some(row), Some(send_id)) = (pending_row, item.send_id) {
        if pressed {
            subscribers::release_confirmation(conn, &row, true)?;
        } else {
            subscribers::link_send(conn, send_id, &row)?;
        }
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::params;

    struct Fixture {
        _dir: tempfile::TempDir,
        conn: Connection,
        key: Secret,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        Fixture { _dir: dir, conn, key: Secret::from_bytes(vec![9; 32]) }
    }

    /// What the intake worker does: read the oldest items, prepare them, apply them.
    fn apply_oldest(conn: &mut Connection, key: &Secret, now: UnixSeconds, limit: usize) -> Vec<Action> {
        let items = intake::oldest(conn, 0, limit).unwrap().into_iter().map(|item| Prepared::new(item, key)).collect();
        let tx = conn.transaction().unwrap();
        let actions = crate::storage::batch::run_alone(&tx, |batch| {
            ApplyIntake { items, resend_cooldown: 600, now }.execute(batch)
        })
        .unwrap();
        tx.commit().unwrap();
        actions
    }

    impl Fixture {
        fn submit(&mut self, email: &str, now: UnixSeconds) -> Action {
            self.conn
                .execute(
                    "INSERT INTO intake (list_id, email, consent_version, received_at) VALUES ('news', ?1, 'v1', ?2)",
                    params![email, now],
                )
                .unwrap();
            let actions = apply_oldest(&mut self.conn, &self.key, now, 10);
            assert_eq!(actions.len(), 1);
            actions[0]
        }

        fn count(&self, sql: &str) -> i64 {
            self.conn.query_row(sql, [], |row| row.get(0)).unwrap()
        }

        /// What the mail worker does when it sends: stamp the send time, dequeue.
        fn send_confirmation(&self, now: UnixSeconds) {
            self.conn.execute("UPDATE subscribers SET confirmation_sent_at = ?1", [now]).unwrap();
            self.conn.execute("DELETE FROM outbox", []).unwrap();
        }
    }

    #[test]
    fn unknown_address_gets_a_pending_row_and_one_queued_confirmation() {
        let mut f = fixture();
        assert_eq!(f.submit("ann@example.com", 1_000), Action::InsertedPending);
        assert_eq!(f.count("SELECT count(*) FROM subscribers WHERE status = 'pending'"), 1);
        assert_eq!(f.count("SELECT count(*) FROM outbox WHERE kind = 'confirm'"), 1);
        assert_eq!(f.count("SELECT count(*) FROM intake"), 0);
    }

    #[test]
    fn new_rows_store_a_removal_hash_that_names_their_id_and_lands_after_the_last_one() {
        let mut f = fixture();
        f.submit("ann@example.com", 1_000);
        f.submit("bob@example.com", 1_001);
        let rows: Vec<(String, String)> = f
            .conn
            .prepare("SELECT id, removal_hash FROM subscribers ORDER BY email")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (id, removal_hash) in &rows {
            assert_eq!(*removal_hash, RemovalToken::derive(&f.key, id).removal_hash());
            assert!(removal_hash.starts_with(&format!("v2:{id}:")), "{removal_hash}");
        }
        let (ann, bob) = (&rows[0].1, &rows[1].1);
        assert!(bob > ann, "the later row's entry sorts after the earlier one's in the removal_hash index");
    }

    #[test]
    fn repeats_before_the_first_mail_or_within_the_cooldown_do_nothing() {
        let mut f = fixture();
        f.submit("ann@example.com", 1_000);
        let removal_hash: String = f.conn.query_row("SELECT removal_hash FROM subscribers", [], |r| r.get(0)).unwrap();
        assert_eq!(f.submit("ann@example.com", 1_001), Action::Nothing, "first mail still queued");
        f.send_confirmation(1_002);
        assert_eq!(f.submit("ann@example.com", 1_002 + 599), Action::Nothing, "within the 10-minute cooldown");
        assert_eq!(f.count("SELECT count(*) FROM outbox"), 0);
        assert_eq!(f.submit("ann@example.com", 1_002 + 600), Action::QueuedResend);
        assert_eq!(f.submit("ann@example.com", 1_002 + 601), Action::Nothing, "one queued confirmation at most");
        let after: String = f.conn.query_row("SELECT removal_hash FROM subscribers", [], |r| r.get(0)).unwrap();
        assert_eq!(after, removal_hash, "duplicates never change the removal hash");
        assert_eq!(f.count("SELECT count(*) FROM subscribers"), 1);
    }

    #[test]
    fn confirmed_and_not_me_addresses_get_nothing() {
        let mut f = fixture();
        f.submit("ann@example.com", 1_000);
        f.conn.execute("UPDATE subscribers SET status = 'confirmed'", []).unwrap();
        f.conn.execute("DELETE FROM outbox", []).unwrap();
        assert_eq!(f.submit("ann@example.com", 100_000), Action::Nothing);

        let hash = suppressions::hash(&f.key, "news", "bob@example.com");
        f.conn
            .execute("INSERT INTO suppressions (hash, reason, created_at) VALUES (?1, 'not_me', 0)", [&hash])
            .unwrap();
        assert_eq!(f.submit("bob@example.com", 100_000), Action::Nothing);
        assert_eq!(f.count("SELECT count(*) FROM subscribers WHERE email = 'bob@example.com'"), 0);
        assert_eq!(f.count("SELECT count(*) FROM outbox"), 0);
    }

    #[test]
    fn an_unsubscribed_address_starts_a_new_double_opt_in() {
        let mut f = fixture();
        let hash = suppressions::hash(&f.key, "news", "cat@example.com");
        f.conn
            .execute("INSERT INTO suppressions (hash, reason, created_at) VALUES (?1, 'unsubscribed', 0)", [&hash])
            .unwrap();
        assert_eq!(f.submit("cat@example.com", 1_000), Action::InsertedPending);
        assert_eq!(f.count("SELECT count(*) FROM suppressions"), 1, "lifted only by confirming");
    }

    #[test]
    fn a_bounced_or_complained_address_gets_nothing_on_any_list_and_others_are_untouched() {
        let mut f = fixture();
        for (email, reason) in [("dan@example.com", "bounced"), ("eve@example.com", "complained")] {
            let hash = suppressions::every_list_hash(&f.key, email);
            f.conn
                .execute(
                    "INSERT INTO suppressions (hash, reason, created_at, list_id) VALUES (?1, ?2, 0, '*')",
                    [&hash, reason],
                )
                .unwrap();
            assert_eq!(suppressions::find(&f.conn, &hash).unwrap().map(Reason::as_str), Some(reason));
            assert_eq!(f.submit(email, 1_000), Action::Nothing, "{reason}");
        }
        assert_eq!(f.count("SELECT count(*) FROM subscribers"), 0);
        assert_eq!(f.count("SELECT count(*) FROM outbox"), 0);
        assert_eq!(f.submit("fay@example.com", 1_000), Action::InsertedPending, "another address is not held back");
    }
}
