//! A request head the HTTP layer refuses before any route (a NUL byte in a header value, a head
//! too large), sent raw over TCP to the real `signupd serve`: the answer is signupd's JSON error
//! with an `X-Request-Id`, the access log has its line, and the line actix-http writes about it
//! is a warning, not an `ERROR` that any client could write — on a fresh connection, after a
//! kept-alive answer, and pipelined behind one (`signupd::web::middleware::connection`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::process;

const NUL_IN_A_HEADER: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\0b\r\n\r\n";
const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// One answer read off the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// Header names lowercased.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{self:?}: {e}"))
    }
}

/// Every answer in `received`, in order (each with a `Content-Length`, as signupd's are).
fn answers(mut received: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    while !received.is_empty() {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut head = httparse::Response::new(&mut headers);
        let httparse::Status::Complete(length) = head.parse(received).unwrap() else {
            panic!("a partial answer: {:?}", String::from_utf8_lossy(received))
        };
        let headers: Vec<(String, String)> = head
            .headers
            .iter()
            .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into_owned()))
            .collect();
        let body_length: usize =
            headers.iter().find(|(name, _)| name == "content-length").map_or(0, |(_, value)| value.parse().unwrap());
        answers.push(Answer {
            status: head.code.unwrap(),
            headers,
            body: received[length..length + body_length].to_vec(),
        });
        received = &received[length + body_length..];
    }
    answers
}

/// Sends each of `requests` on one connection — each after the answer to the one before, or all
/// at once when `pipelined` — and reads until the server closes it.
fn exchange(port: u16, requests: &[&[u8]], pipelined: bool) -> Vec<Answer> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    if pipelined {
        stream.write_all(&requests.concat()).unwrap();
    } else {
        let (last, before) = requests.split_last().unwrap();
        let mut received = Vec::new();
        for (sent, request) in before.iter().enumerate() {
            stream.write_all(request).unwrap();
            // Read until this answer is whole (each is one small write of the server's).
            while answers_complete(&received) <= sent {
                let mut buffer = [0u8; 4096];
                let read = stream.read(&mut buffer).unwrap();
                assert!(read > 0, "closed early: {:?}", String::from_utf8_lossy(&received));
                received.extend_from_slice(&buffer[..read]);
            }
        }
        stream.write_all(last).unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        received.extend_from_slice(&rest);
        return answers(&received);
    }
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received);
    answers(&received)
}

/// How many whole answers `received` holds.
fn answers_complete(received: &[u8]) -> usize {
    let text = String::from_utf8_lossy(received);
    // `/healthz` answers `ok` with a length; a head without a whole body is not counted.
    text.matches("\r\n\r\nok").count()
}

/// The first log line `wanted` accepts, among those read already or, failing that, the next.
fn logged(server: &mut process::Served, wanted: impl Fn(&str) -> bool) -> String {
    let log = server.log();
    match log.lines().find(|line| wanted(line)) {
        Some(line) => line.to_owned(),
        None => server.wait_for(wanted),
    }
}

/// The access-log line of the request answered with `request_id`.
fn access_line(server: &mut process::Served, request_id: &str) -> String {
    logged(server, |line| line.contains("request") && line.contains(request_id))
}

#[test]
fn a_refused_head_gets_signupds_json_400_with_a_request_id_and_an_access_log_line() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let config = process::config(dir.path(), 1000, "");
    let mut server = process::serve(&config);
    let cases: [(&str, &[&[u8]], bool); 3] = [
        ("a fresh connection", &[NUL_IN_A_HEADER], false),
        ("after a kept-alive answer", &[HEALTHZ, NUL_IN_A_HEADER], false),
        ("pipelined behind a good request", &[HEALTHZ, NUL_IN_A_HEADER], true),
    ];

    for (case, requests, pipelined) in cases {
        // Act
        let answers = exchange(server.port, requests, pipelined);

        // Assert
        assert_eq!(answers.len(), requests.len(), "{case}: {answers:?}");
        let (refusal, before) = answers.split_last().unwrap();
        for answer in before {
            assert_eq!((answer.status, answer.body.as_slice()), (200, b"ok".as_slice()), "{case}");
            assert!(answer.header("x-request-id").is_some(), "{case}: {answer:?}");
        }
        assert_eq!(refusal.status, 400, "{case}: {refusal:?}");
        assert_eq!(refusal.header("content-type"), Some("application/json"), "{case}");
        assert_eq!(refusal.header("connection"), Some("close"), "{case}");
        assert_eq!(refusal.json(), json!({"ok": false, "error": "invalid_request"}), "{case}");
        let request_id = refusal.header("x-request-id").unwrap_or_else(|| panic!("{case}: {refusal:?}"));
        assert_eq!(request_id.len(), 32, "{case}: {request_id}");
        assert!(before.iter().all(|answer| answer.header("x-request-id") != Some(request_id)), "{case}: a new id");
        let line = access_line(&mut server, request_id);
        assert!(line.contains(" INFO ") && line.contains("status=400"), "{case}: {line}");
    }
    let warning = logged(&mut server, |line| line.contains("stream error"));
    assert!(warning.contains(" WARN "), "{warning}");
    let log = server.log();
    assert!(!log.lines().any(|line| line.contains("ERROR")), "no ERROR line: {log}");
}

#[test]
fn a_head_too_large_gets_signupds_json_431() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let config = process::config(dir.path(), 1000, "");
    let mut server = process::serve(&config);
    // actix-http's 128 KiB for a head, exactly, and not ended: every byte of it is read (an
    // unread rest would reset the connection under the answer).
    let start = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Large: ";
    let large = format!("{start}{}", "a".repeat(128 * 1024 - start.len()));

    // Act
    let answers = exchange(server.port, &[large.as_bytes()], false);

    // Assert
    assert_eq!(answers.len(), 1, "{answers:?}");
    let answer = &answers[0];
    assert_eq!(answer.status, 431, "{answer:?}");
    assert_eq!(answer.json(), json!({"ok": false, "error": "headers_too_large"}));
    let request_id = answer.header("x-request-id").unwrap();
    assert!(access_line(&mut server, request_id).contains("status=431"));
    assert!(!server.log().lines().any(|line| line.contains("ERROR")), "no ERROR line: {}", server.log());
}

#[test]
fn in_the_json_log_format_the_refusal_is_a_warning_and_an_access_line_too() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let config = process::config(dir.path(), 1000, "[server]\nlog_format = \"json\"\n");
    let mut server = process::serve(&config);

    // Act
    let answers = exchange(server.port, &[NUL_IN_A_HEADER], false);

    // Assert
    let request_id = answers[0].header("x-request-id").unwrap().to_owned();
    let access: Value = serde_json::from_str(&access_line(&mut server, &request_id)).unwrap();
    assert_eq!(access["level"], "INFO", "{access}");
    assert_eq!(access["status"], 400, "{access}");
    let warning: Value = serde_json::from_str(&logged(&mut server, |line| line.contains("stream error"))).unwrap();
    assert_eq!(warning["level"], "WARN", "{warning}");
    let log = server.log();
    assert!(!log.contains("\"ERROR\""), "no ERROR line: {log}");
}
