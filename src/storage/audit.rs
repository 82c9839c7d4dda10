//! The `audit_log` table (schema 12): one row per operator action, with the address's keyed
//! hash when it was about one address, never the address (`docs/operations.md`, "Answering the
//! people on the list").

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::clock::UnixSeconds;

/// One operator action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub at: UnixSeconds,
    /// `cli`, or the name of the API token that made the call.
    pub actor: String,
    /// `lookup`, `remove`, `import`, `export`, …
    pub action: String,
    /// The list it concerned; `None`: every list, or none.
    pub list_id: Option<String>,
    /// How many addresses or rows it concerned, where that is a number.
    pub count: Option<i64>,
    /// The address's every-list key (`suppressions::every_list_hash`), for an action about one.
    pub address_hash: Option<String>,
}

pub fn append(conn: &Connection, entry: &Entry) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO audit_log (at, actor, action, list_id, count, address_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![entry.at, entry.actor, entry.action, entry.list_id, entry.count, entry.address_hash])?;
    Ok(())
}

/// Every entry at or after `since`, oldest first.
pub fn since(conn: &Connection, since: UnixSeconds) -> rusqlite::Result<Vec<Entry>> {
    conn.prepare_cached(
        "SELECT at, actor, action, list_id, count, address_hash FROM audit_log WHERE at >= ?1 ORDER BY at, id",
    )?
    .query_map([since], |row| {
        Ok(Entry {
            at: row.get(0)?,
            actor: row.get(1)?,
            action: row.get(2)?,
            list_id: row.get(3)?,
            count: row.get(4)?,
            address_hash: row.get(5)?,
        })
    })?
    .collect()
}

/// Deletes the entries older than `before`, for the hourly cleanup.
pub fn delete_before(conn: &Connection, before: UnixSeconds) -> rusqlite::Result<usize> {
    conn.prepare_cached("DELETE FROM audit_log WHERE at < ?1")?.execute([before])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_back_in_order_from_a_time_and_pruned_before_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).unwrap();
        crate::storage::migrations::migrate(&mut conn).unwrap();
        let entry = |at, action: &str| Entry {
            at,
            actor: "cli".into(),
            action: action.into(),
            list_id: Some("news".into()),
            count: Some(1),
            address_hash: Some("ab".repeat(32)),
        };
        for (at, action) in [(300, "remove"), (100, "lookup"), (200, "export")] {
            append(&conn, &entry(at, action)).unwrap();
        }
        let actions = |since| since_actions(&conn, since);
        assert_eq!(actions(0), ["lookup", "export", "remove"]);
        assert_eq!(actions(200), ["export", "remove"]);
        assert_eq!(delete_before(&conn, 200).unwrap(), 1);
        assert_eq!(actions(0), ["export", "remove"]);
        assert_eq!(since(&conn, 300).unwrap(), [entry(300, "remove")]);
    }

    fn since_actions(conn: &Connection, at: UnixSeconds) -> Vec<String> {
        since(conn, at).unwrap().into_iter().map(|entry| entry.action).collect()
    }
}
