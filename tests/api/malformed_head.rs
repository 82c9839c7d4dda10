//! A request head the HTTP layer cannot parse (a NUL byte in a header value), sent raw over TCP
//! to the real `signupd serve`: the answer is a 400, and the line it leaves in the log is a
//! warning, not an `ERROR` that any client could write (`signupd::web::middleware` says why the
//! answer is actix-http's own).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::process;

#[test]
fn a_nul_byte_in_a_header_gets_a_400_and_a_warning_never_an_error_line() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let config = process::config(dir.path(), 1000, "");
    let mut server = process::serve(&config);

    // Act
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\0b\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let line = server.wait_for(|line| line.contains("stream error"));
    let log = server.log();

    // Assert
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(line.contains(" WARN "), "{line}");
    assert!(!log.lines().any(|line| line.contains("ERROR")), "no ERROR line: {log}");
}
