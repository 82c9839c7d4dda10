//! What the relays' events leave behind (schemas 11 and 15): the receipts of the events already
//! acted on, so a relay's retry acts once, and the complaints about each list's confirmation mail
//! over the last hour, for the complaint breaker. Neither holds an event, an address, a domain or
//! a payload: a receipt is a hash of the relay's name and its event id, a complaint a list id, a
//! keyed hash of the complaining address's registrable domain ([`domain_hash`]) and a time.

use ring::hmac;
use rusqlite::{Connection, params};

use crate::clock::UnixSeconds;
use crate::config::secrets::Secret;
use crate::domain::RegistrableDomain;

/// The window of the complaint breaker, in seconds.
pub const COMPLAINT_WINDOW: i64 = 3600;

/// The key a receipt is stored under: the SHA-256 of the relay's name and the event's id, so
/// two relays' ids never collide and the table holds nothing a relay wrote.
pub fn receipt_key(relay: &str, event_id: &str) -> String {
    let mut input = Vec::with_capacity(relay.len() + 1 + event_id.len());
    input.extend_from_slice(relay.as_bytes());
    input.push(0);
    input.extend_from_slice(event_id.as_bytes());
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &input))
}

/// Whether a live receipt of `key` exists: the event was acted on already.
pub fn seen(conn: &Connection, key: &str, now: UnixSeconds) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM relay_receipts WHERE key = ?1 AND expires_at > ?2")?.exists(params![key, now])
}

/// Records the receipt `key` until `expires_at`; `false` when a live receipt of it exists (the
/// event was acted on already), and then nothing is written.
pub fn first_receipt(
    conn: &Connection,
    key: &str,
    expires_at: UnixSeconds,
    now: UnixSeconds,
) -> rusqlite::Result<bool> {
    let changed = conn
        .prepare_cached(
            "INSERT INTO relay_receipts (key, expires_at) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
             WHERE relay_receipts.expires_at <= ?3",
        )?
        .execute(params![key, expires_at, now])?;
    Ok(changed == 1)
}

/// The key a complaint's registrable domain is stored under: an HMAC under the hash key, so the
/// table names no domain, and one domain always gives one key.
pub fn domain_hash(hash_key: &Secret, domain: &RegistrableDomain) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, hash_key.expose());
    hex::encode(hmac::sign(&key, format!("signupd/complaint-domain/v1\n{domain}").as_bytes()).as_ref())
}

/// What [`record_complaint`] found in the breaker's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complaints {
    /// How many different domains complained about the list in the hour up to now, this one
    /// included.
    pub domains: i64,
    /// Whether this complaint's domain had not complained about the list within that hour: only
    /// such a complaint trips the breaker or extends its hold.
    pub new_domain: bool,
}

/// Records a complaint from the registrable domain `domain` (its [`domain_hash`]) about
/// `list_id`'s confirmation mail at `now`, and what the breaker's window holds with it. More
/// complaints from one domain count as one.
pub fn record_complaint(
    conn: &Connection,
    list_id: &str,
    domain: &str,
    now: UnixSeconds,
) -> rusqlite::Result<Complaints> {
    let since = now - COMPLAINT_WINDOW;
    let counted = conn
        .prepare_cached("SELECT 1 FROM complaints WHERE list_id = ?1 AND domain = ?2 AND at > ?3")?
        .exists(params![list_id, domain, since])?;
    conn.prepare_cached("INSERT INTO complaints (list_id, domain, at) VALUES (?1, ?2, ?3)")?
        .execute(params![list_id, domain, now])?;
    let domains = conn
        .prepare_cached("SELECT count(DISTINCT domain) FROM complaints WHERE list_id = ?1 AND at > ?2")?
        .query_row(params![list_id, since], |row| row.get(0))?;
    Ok(Complaints { domains, new_domain: !counted })
}

/// Deletes the receipts whose time has passed and the complaints older than the breaker's
/// window, for the hourly cleanup.
pub fn delete_expired(conn: &Connection, now: UnixSeconds) -> rusqlite::Result<usize> {
    let receipts = conn.prepare_cached("DELETE FROM relay_receipts WHERE expires_at <= ?1")?.execute([now])?;
    let complaints = conn.prepare_cached("DELETE FROM complaints WHERE at <= ?1")?.execute([now - COMPLAINT_WINDOW])?;
    Ok(receipts + complaints)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migrated database file, kept while its directory lives.
    fn migrated() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    #[test]
    fn a_receipt_is_first_once_until_it_expires() {
        let (_dir, conn) = migrated();
        let key = receipt_key("resend", "msg_1");
        assert_ne!(key, receipt_key("postmark", "msg_1"), "relays' ids never collide");
        assert!(!key.contains("msg_1"));
        assert!(!seen(&conn, &key, 100).unwrap());
        assert!(first_receipt(&conn, &key, 200, 100).unwrap());
        assert!(seen(&conn, &key, 199).unwrap());
        assert!(!seen(&conn, &key, 200).unwrap());
        assert!(!first_receipt(&conn, &key, 300, 150).unwrap(), "a retry within the window");
        assert!(first_receipt(&conn, &key, 400, 200).unwrap(), "once expired, it acts again");
        assert_eq!(delete_expired(&conn, 399).unwrap(), 0);
        assert_eq!(delete_expired(&conn, 400).unwrap(), 1);
    }

    #[test]
    fn complaints_are_counted_by_domain_over_the_last_hour_per_list() {
        let (_dir, conn) = migrated();
        let record = |list: &str, domain: &str, at: UnixSeconds| {
            let complaints = record_complaint(&conn, list, domain, at).unwrap();
            (complaints.domains, complaints.new_domain)
        };
        assert_eq!(record("news", "a", 1000), (1, true));
        assert_eq!(record("other", "b", 1500), (1, true));
        assert_eq!(record("news", "a", 1600), (1, false), "one domain counts once");
        assert_eq!(record("news", "b", 2000), (2, true));
        assert_eq!(record("news", "c", 1000 + COMPLAINT_WINDOW), (3, true), "a's later one is in");
        assert_eq!(record("news", "c", 1001 + COMPLAINT_WINDOW), (3, false), "c was counted");
        assert_eq!(record("news", "d", 1600 + COMPLAINT_WINDOW), (3, true), "a fell out");
        assert_eq!(delete_expired(&conn, 1600 + COMPLAINT_WINDOW).unwrap(), 3);
        let left: i64 = conn.query_row("SELECT count(*) FROM complaints", [], |row| row.get(0)).unwrap();
        assert_eq!(left, 4);
    }

    #[test]
    fn a_domain_is_stored_as_a_keyed_hash_one_per_domain_and_key() {
        let domain = |address: &str| RegistrableDomain::of(&crate::domain::EmailAddress::parse(address).unwrap());
        let key = Secret::from_bytes(vec![7; 32]);
        let hash = domain_hash(&key, &domain("ann@example.com"));
        assert_eq!(hash, domain_hash(&key, &domain("bob@mail.example.com")));
        assert_ne!(hash, domain_hash(&key, &domain("ann@example.org")));
        assert_ne!(hash, domain_hash(&Secret::from_bytes(vec![8; 32]), &domain("ann@example.com")));
        assert!(!hash.contains("example") && hash.len() == 64, "{hash}");
    }
}
