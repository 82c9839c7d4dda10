//! The `outbox` table: mail waiting to be sent, claimed by a worker with a lease so two workers
//! (or a worker and its restarted self) never send one item at the same time. A crash while an
//! item is leased leaves it to be claimed again when the lease ends: delivery is at least once.
//!
//! A confirmation recorded while its list was in surge is **held** (`held = 1`) until the visitor
//! presses "Send my confirmation email": no query here finds a held item due. A pressed item
//! (`pressed = 1`) goes first in the fair order.

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::UnixSeconds;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    Confirm,
    Welcome,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: i64,
    pub kind: MailKind,
    pub subscriber_id: String,
    pub created_at: UnixSeconds,
    /// Including this one.
    pub attempts: i64,
    /// The keyed hash of the signup's neighbourhood (confirmations only).
    pub network: Option<String>,
}

/// What makes an item due: its time has come, no live lease holds it, and it is not held for a
/// press. `?1` is now.
const DUE: &str = "next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) AND held = 0";

/// The ids of the `limit` oldest due items that no live lease holds, oldest first: what a claim
/// takes when the budget has room for everything due. Read once per claim, so a batch walks
/// past the other workers' leased items once rather than before every item.
pub fn oldest_due(conn: &Connection, now: UnixSeconds, limit: usize) -> rusqlite::Result<Vec<i64>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(&format!("SELECT id FROM outbox WHERE {DUE} ORDER BY next_attempt_at, id LIMIT ?2"))?
        .query_map(params![now, limit], |row| row.get(0))?
        .collect()
}

/// Claims the item `id` if it is still due and no live lease holds it (another worker may have
/// taken it since it was chosen).
pub fn claim_by_id(
    conn: &Connection,
    id: i64,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(&format!(
        "UPDATE outbox SET lease_until = ?3, attempts = attempts + 1 WHERE id = ?2 AND {DUE}
         RETURNING id, kind, subscriber_id, created_at, attempts, network"
    ))?
    .query_row(params![now, id, lease_until], claimed)
    .optional()
}

/// Claims the queued confirmation of `subscriber_id`, due or waiting for a retry, if no live
/// lease holds it and it is not held for a press: it goes out with another list's
/// confirmation, in one mail.
pub fn claim_confirmation_of(
    conn: &Connection,
    subscriber_id: &str,
    now: UnixSeconds,
    lease_until: UnixSeconds,
) -> rusqlite::Result<Option<Claimed>> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = ?3, attempts = attempts + 1
         WHERE subscriber_id = ?1 AND kind = 'confirm' AND (lease_until IS NULL OR lease_until <= ?2) AND held = 0
         RETURNING id, kind, subscriber_id, created_at, attempts, network",
    )?
    .query_row(params![subscriber_id, now, lease_until], claimed)
    .optional()
}

fn claimed(row: &rusqlite::Row<'_>) -> rusqlite::Result<Claimed> {
    let kind: String = row.get(1)?;
    Ok(Claimed {
        id: row.get(0)?,
        kind: if kind == "welcome" { MailKind::Welcome } else { MailKind::Confirm },
        subscriber_id: row.get(2)?,
        created_at: row.get(3)?,
        attempts: row.get(4)?,
        network: row.get(5)?,
    })
}

/// Whether more than `room` items are due and unleased. The span of the queue's ids bounds how
/// many items it holds, so when the budget's room exceeds the whole queue the answer costs two
/// steps of the primary key; only otherwise are due items counted, and never more than `room + 1`.
pub fn more_due_than(conn: &Connection, now: UnixSeconds, room: usize) -> rusqlite::Result<bool> {
    // Two subqueries, not `max(id) - min(id)` in one: SQLite answers a lone min() or max() from
    // the end of the index, but both in one SELECT scan the whole table (measured: the scan of
    // a 10,000-item queue before every claim was the mail drain's largest reader cost).
    let span: Option<i64> = conn
        .prepare_cached("SELECT (SELECT max(id) FROM outbox) - (SELECT min(id) FROM outbox) + 1")?
        .query_row([], |row| row.get(0))?;
    if usize::try_from(span.unwrap_or(0)).unwrap_or(0) <= room {
        return Ok(false);
    }
    Ok(count_due_up_to(conn, now, room + 1)? > room)
}

/// How many items are due and unleased, counting no further than `limit` (so the answer costs
/// at most `limit` index steps however long the queue is).
fn count_due_up_to(conn: &Connection, now: UnixSeconds, limit: usize) -> rusqlite::Result<usize> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let count: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM (SELECT 1 FROM outbox WHERE {DUE} LIMIT ?2)"))?
        .query_row(params![now, limit], |row| row.get(0))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

/// The next `limit` due items in the order that prefers people (`docs/operations.md`, "Under
/// attack"), for when more is due than the budget lets out now:
///
/// 1. mail a visitor pressed for, and welcome mails;
/// 2. mail to a neighbourhood from which someone confirmed on or after the day
///    `reputation_since` (`None`: the reputation is off);
/// 3. the rest.
///
/// Within each, the neighbourhood that has had the fewest confirmation mails in the last 60
/// minutes (sliding) goes first, one mail at a time: each item is ranked by its network's
/// mails plus its place in that network's own queue of its class (oldest first), so a network
/// with 10,000 items waiting and one with a single item both get their turn after every round.
/// Then the oldest. An item without a network (a welcome mail, or queued before networks were
/// recorded) is a network of its own.
///
/// **Cost.** The order is read along `outbox_by_network` (pressed, network, due time), one
/// neighbourhood at a time, in two passes: the first due item of every waiting network; then,
/// only from the networks whose next items could still rank among the first `limit`, up to
/// the place where they could not (never past `limit`). So the cost follows how many networks
/// are waiting, not how long the queue is: a worker reads this at every refill of the paced
/// budget, beside the signups, and a sort of the whole queue there (0.7 s for 300,000 items)
/// cost a fifth of the signup rate.
pub fn fair_order(
    conn: &Connection,
    now: UnixSeconds,
    limit: usize,
    reputation_since: Option<i64>,
) -> rusqlite::Result<Vec<i64>> {
    let waiting = waiting_networks(conn, now, reputation_since)?;
    let mut ranked = unnetworked(conn, now, limit)?;
    for network in &waiting {
        ranked.extend(network_items(conn, now, network, 0, 1)?);
    }
    ranked.sort_unstable_by_key(Ranked::key);
    // The rank every further item must reach (or tie) to be among the first `limit`; none
    // while fewer than `limit` are ranked.
    let bound = ranked.get(limit.saturating_sub(1)).filter(|_| limit > 0).map(|last| (last.class, last.share));
    for network in &waiting {
        let places = match bound {
            None => limit,
            Some((class, _)) if network.class < class => limit,
            Some((class, share)) if network.class == class => {
                usize::try_from(share.saturating_sub(network.mails)).unwrap_or(0).min(limit)
            }
            Some(_) => 0,
        };
        if places > 1 {
            ranked.extend(network_items(conn, now, network, 1, places - 1)?);
        }
    }
    ranked.sort_unstable_by_key(Ranked::key);
    Ok(ranked.into_iter().take(limit).map(|item| item.id).collect())
}

/// A neighbourhood with unheld items, pressed or not: its class and its mails in the last 60
/// minutes.
struct Waiting {
    network: String,
    pressed: bool,
    class: Class,
    mails: i64,
}

/// Every neighbourhood with unheld items, pressed ones first: one seek along
/// `outbox_by_network` each.
fn waiting_networks(
    conn: &Connection,
    now: UnixSeconds,
    reputation_since: Option<i64>,
) -> rusqlite::Result<Vec<Waiting>> {
    let recent = super::networks::recent_mails(conn, now)?;
    let mut next_network = conn.prepare_cached(NEXT_NETWORK)?;
    let mut reputed =
        conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM network_reputation WHERE network = ?1 AND day >= ?2)")?;
    let mut waiting = Vec::new();
    for pressed in [true, false] {
        // Every network sorts after the empty string, so the walk starts at the first one.
        let mut after = String::new();
        while let Some(network) =
            next_network.query_row(params![pressed, after], |row| row.get::<_, String>(0)).optional()?
        {
            let class = match (pressed, reputation_since) {
                (true, _) => Class::Pressed,
                (false, Some(since)) if reputed.query_row(params![network, since], |row| row.get(0))? => Class::Reputed,
                (false, _) => Class::Rest,
            };
            let mails = recent.get(&network).copied().unwrap_or(0);
            after.clone_from(&network);
            waiting.push(Waiting { network, pressed, class, mails });
        }
    }
    Ok(waiting)
}

/// The due items of `network` at places `skip + 1` to `skip + places` of its queue, ranked.
fn network_items(
    conn: &Connection,
    now: UnixSeconds,
    network: &Waiting,
    skip: usize,
    places: usize,
) -> rusqlite::Result<Vec<Ranked>> {
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let mut place = count(skip);
    conn.prepare_cached(&network_queue())?
        .query_map(params![now, count(places), network.network, network.pressed, count(skip)], |row| {
            place += 1;
            Ok(Ranked { class: network.class, share: network.mails + place, due: row.get(1)?, id: row.get(0)? })
        })?
        .collect()
}

/// The due items without a network (welcome mails, and confirmations queued before networks
/// were recorded): each is a network of its own with no mails yet, so only the first `limit`
/// of each class can rank.
fn unnetworked(conn: &Connection, now: UnixSeconds, limit: usize) -> rusqlite::Result<Vec<Ranked>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.prepare_cached(&format!(
        "SELECT id, next_attempt_at, kind = 'welcome' OR pressed = 1 AS first FROM outbox
         WHERE network IS NULL AND {DUE} ORDER BY first DESC, next_attempt_at, id LIMIT ?2"
    ))?
    .query_map(params![now, limit], |row| {
        let class = if row.get(2)? { Class::Pressed } else { Class::Rest };
        Ok(Ranked { class, share: 1, due: row.get(1)?, id: row.get(0)? })
    })?
    .collect()
}

/// The network after `?2` with unheld items, pressed (`?1` = 1) or not: one seek along
/// `outbox_by_network`.
const NEXT_NETWORK: &str =
    "SELECT network FROM outbox WHERE held = 0 AND pressed = ?1 AND network > ?2 ORDER BY network LIMIT 1";

/// Due items of network `?3`, pressed (`?4` = 1) or not, oldest first, `?2` of them after the
/// first `?5`: a range of `outbox_by_network`, already in order.
fn network_queue() -> String {
    format!(
        "SELECT id, next_attempt_at FROM outbox INDEXED BY outbox_by_network
         WHERE pressed = ?4 AND network = ?3 AND {DUE} ORDER BY next_attempt_at, id LIMIT ?2 OFFSET ?5"
    )
}

/// The fair order's classes, first first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// Pressed for by a visitor, or a welcome mail.
    Pressed,
    /// To a neighbourhood where someone confirmed within the reputation's days.
    Reputed,
    Rest,
}

/// An item's rank in the fair order.
struct Ranked {
    class: Class,
    /// Its network's mails in the last 60 minutes plus its place in the network's queue.
    share: i64,
    due: UnixSeconds,
    id: i64,
}

impl Ranked {
    fn key(&self) -> (Class, i64, UnixSeconds, i64) {
        (self.class, self.share, self.due, self.id)
    }
}

/// A visitor pressed "Send my confirmation email" for the signup `send_id`: the confirmations
/// it was queued into are released and go first. Returns how many.
pub fn press(conn: &Connection, send_id: i64) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "UPDATE outbox SET held = 0, pressed = 1
         WHERE id IN (SELECT outbox_id FROM send_refs WHERE send_id = ?1) AND kind = 'confirm'",
    )?
    .execute([send_id])
}

/// Whether any item is due and unleased (to tell "budget spent" from "nothing to do").
pub fn any_due(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<bool> {
    conn.prepare_cached(&format!("SELECT EXISTS (SELECT 1 FROM outbox WHERE {DUE})"))?
        .query_row([now], |row| row.get(0))
}

pub fn delete(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM outbox WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Releases the lease and schedules the next attempt. `last_error` is an SMTP code and reason,
/// never an address.
pub fn retry_at(conn: &Connection, id: i64, next_attempt_at: UnixSeconds, last_error: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE outbox SET lease_until = NULL, next_attempt_at = ?2, last_error = ?3 WHERE id = ?1")?
        .execute(params![id, next_attempt_at, last_error])?;
    Ok(())
}

/// Releases the lease of an item the relay's refusal of signupd kept back, and takes back the
/// try its claim counted: it keeps its due time (its place in the queue) and its count of
/// tries. The hold itself is in memory (`outbound::mail::relay_hold`).
pub fn release_held(conn: &Connection, id: i64, last_error: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE outbox SET lease_until = NULL, attempts = max(attempts - 1, 0), last_error = ?2 WHERE id = ?1",
    )?
    .execute(params![id, last_error])?;
    Ok(())
}

/// Queues a welcome mail for a confirmed row.
pub fn queue_welcome(conn: &Connection, subscriber_id: &str, now: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at) VALUES ('welcome', ?1, ?2, ?2)",
    )?
    .execute(params![subscriber_id, now])?;
    Ok(())
}

/// Mails claimed in the clock hour containing `now` (for `signupd stats`; the budget itself is
/// the paced bucket of [`super::mail_bucket`]): every claimed mail counts when it is claimed,
/// and a failed send takes its count back. Kept in `rate_limits` under a key that is not an
/// HMAC, so it cannot collide with a client counter.
pub fn reserved_this_hour(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT count FROM rate_limits WHERE key = ?1")?
        .query_row([budget_key(now)], |row| row.get(0))
        .optional()
        .map(Option::unwrap_or_default)
}

/// Counts `mails` claimed in the hour containing `now`.
pub fn reserve(conn: &Connection, now: UnixSeconds, mails: usize) -> rusqlite::Result<()> {
    if mails == 0 {
        return Ok(());
    }
    let expires_at = (now.div_euclid(3600) + 1) * 3600;
    conn.prepare_cached(
        "INSERT INTO rate_limits (key, count, expires_at) VALUES (?1, ?3, ?2)
         ON CONFLICT (key) DO UPDATE SET count = count + excluded.count",
    )?
    .execute(params![budget_key(now), expires_at, i64::try_from(mails).unwrap_or(i64::MAX)])?;
    Ok(())
}

/// Takes back one mail counted at `reserved_at` (a send that failed).
pub fn refund(conn: &Connection, reserved_at: UnixSeconds) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE rate_limits SET count = count - 1 WHERE key = ?1 AND count > 0")?
        .execute([budget_key(reserved_at)])?;
    Ok(())
}

fn budget_key(now: UnixSeconds) -> String {
    format!("mail-budget/{}", now.div_euclid(3600))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::storage::networks;

    const NOW: UnixSeconds = 1_000_000;

    /// The fair order as one scan of the whole queue: every due item ranked by a window over
    /// its network and class. What `fair_order` must answer, at any cost.
    fn fair_order_by_scan(conn: &Connection, limit: usize, reputation_since: Option<i64>) -> Vec<i64> {
        let mut order = conn
            .prepare(&format!(
                "SELECT item.id FROM (
                     SELECT id, next_attempt_at, network, kind, pressed,
                            row_number() OVER (PARTITION BY coalesce(network, 'item/' || id), pressed
                                               ORDER BY next_attempt_at, id) AS place
                     FROM outbox WHERE {DUE}
                 ) AS item
                 LEFT JOIN (SELECT network, count(*) AS mails FROM network_mails WHERE sent_at > ?1 - 3600
                            GROUP BY network) AS recent ON recent.network = item.network
                 LEFT JOIN network_reputation AS reputation
                     ON reputation.network = item.network AND reputation.day >= ?3
                 ORDER BY CASE WHEN item.pressed = 1 OR item.kind = 'welcome' THEN 0
                               WHEN reputation.network IS NOT NULL THEN 1 ELSE 2 END,
                          coalesce(recent.mails, 0) + item.place, item.next_attempt_at, item.id
                 LIMIT ?2"
            ))
            .unwrap();
        let limit = i64::try_from(limit).unwrap();
        order
            .query_map(params![NOW, limit, reputation_since.unwrap_or(i64::MAX)], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    /// One queued item: its network (of a few, or none), whether it is held, pressed, a welcome
    /// mail, leased, and how long ago (negative: not yet) it became due.
    #[derive(Debug, Clone)]
    struct Item {
        network: Option<u8>,
        held: bool,
        pressed: bool,
        welcome: bool,
        leased: bool,
        due_ago: i64,
    }

    fn item() -> impl Strategy<Value = Item> {
        (
            prop::option::weighted(0.9, 0u8..12),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.05),
            prop::bool::weighted(0.05),
            -50i64..4_000,
        )
            .prop_map(|(network, held, pressed, welcome, leased, due_ago)| Item {
                // Welcome mails carry no network (`queue_welcome`).
                network: network.filter(|_| !welcome),
                held,
                pressed: pressed && !held,
                welcome,
                leased,
                due_ago,
            })
    }

    fn queue(items: &[Item], mails: &[(u8, i64)], reputed: &[(u8, i64)]) -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        // The items' subscriber rows do not matter here.
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        for item in items {
            conn.execute(
                "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at, lease_until, network, held, pressed)
                 VALUES (?1, 's', 0, ?2, ?3, ?4, ?5, ?6)",
                params![
                    if item.welcome { "welcome" } else { "confirm" },
                    NOW - item.due_ago,
                    item.leased.then_some(NOW + 60),
                    item.network.map(|network| format!("net{network}")),
                    item.held,
                    item.pressed,
                ],
            )
            .unwrap();
        }
        for (network, ago) in mails {
            networks::count_mail(&conn, &format!("net{network}"), NOW - ago).unwrap();
        }
        for (network, days_ago) in reputed {
            networks::record_confirmation(&conn, &format!("net{network}"), NOW - days_ago * 86_400).unwrap();
        }
        conn
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn the_walk_by_network_answers_what_a_scan_of_the_whole_queue_does(
            items in prop::collection::vec(item(), 0..300),
            mails in prop::collection::vec((0u8..12, 0i64..7_200), 0..60),
            reputed in prop::collection::vec((0u8..12, 0i64..200), 0..6),
            limit in prop::sample::select(vec![1usize, 3, 32, 1_000]),
            reputation in prop::bool::ANY,
        ) {
            let conn = queue(&items, &mails, &reputed);
            let since = reputation.then(|| networks::reputation_since(NOW, 90));
            prop_assert_eq!(fair_order(&conn, NOW, limit, since).unwrap(), fair_order_by_scan(&conn, limit, since));
        }
    }

    #[test]
    fn the_walk_steps_along_the_index_and_never_scans_the_queue() {
        let conn = queue(&[], &[], &[]);
        for (statement, params) in [(NEXT_NETWORK.to_owned(), 2), (network_queue(), 5)] {
            let placeholders = vec![rusqlite::types::Value::Null; params];
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {statement}"))
                .unwrap()
                .query_map(rusqlite::params_from_iter(placeholders), |row| row.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let plan = plan.join("; ");
            assert!(plan.contains("USING") && plan.contains("INDEX outbox_by_network"), "{statement}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "no sort: {plan}");
        }
    }
}
