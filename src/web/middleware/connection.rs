//! A client's connection as the HTTP layer writes to it, so that the HTTP layer's own refusals
//! are answered as signupd answers everything else.
//!
//! actix-http decodes each request head in its connection dispatcher, before any service runs.
//! A head it cannot parse (a NUL byte or another control character in a header, a broken request
//! line), a head larger than its buffer, or one that does not arrive within
//! `server.request_timeout`, is answered there with a bare `400`, `431` or `408` — no body, no
//! `X-Request-Id` — after which the connection closes; no route or middleware ever sees it.
//! actix offers no hook between its parser and the socket, so the rewrite happens at the socket:
//! [`Connection`] wraps each accepted stream, and when what the dispatcher writes **ends with**
//! such a bare answer, it writes signupd's instead — `{"ok":false,"error":CODE}` with a fresh
//! `X-Request-Id` — and writes the access-log line for it, at `INFO` like every other request.
//!
//! How the dispatcher's answer is told from the application's: every answer the application
//! gives carries an `X-Request-Id` (the access log sets it), and none of those three statuses
//! with an empty body comes from a route without one. The dispatcher's refusal is the last thing
//! it writes on a connection, so it is found at the end of a write, never in the middle; on a
//! kept-alive or pipelined connection, the answers to the requests before it are written first,
//! unchanged. A refusal that the socket splits across two writes (only possible behind a large
//! unsent answer) stays actix-http's bare one: the check looks at whole writes, never buffers.
//!
//! Reading is passed through untouched, and a write that is not a refusal costs one look at its
//! last bytes. actix-http also logs the refused head as `stream error` at `ERROR`;
//! `crate::app::telemetry` writes that line at `WARN`, since any client can cause it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::http::StatusCode;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::access_log;

/// The dispatcher's refusals are short: a status line, `content-length: 0`, `connection: close`
/// and `date`. Only this many final bytes of a write are searched for one.
const REFUSAL_MAX_LEN: usize = 256;

/// An accepted stream, with the dispatcher's bare refusals rewritten (see the module doc).
#[derive(Debug)]
pub struct Connection<IO> {
    io: IO,
    /// When the head being read started, as near as the socket tells: the connection's opening,
    /// then the end of each write. The refusal's access-log latency.
    since: Instant,
    /// Signupd's answer to a refusal, and how much of it is written.
    answer: Option<(Vec<u8>, usize)>,
}

impl<IO> Connection<IO> {
    pub fn new(io: IO) -> Self {
        Self { io, since: Instant::now(), answer: None }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Connection<IO> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Connection<IO> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.answer.is_none() {
            match refusal_at_end(buf) {
                None => {
                    let written = Pin::new(&mut this.io).poll_write(cx, buf);
                    if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
                        this.since = Instant::now();
                    }
                    return written;
                }
                // The answers before the refusal go out as they are; the dispatcher then writes
                // the rest again, which starts with the refusal.
                Some(Refusal { start, .. }) if start > 0 => {
                    return Pin::new(&mut this.io).poll_write(cx, &buf[..start]);
                }
                Some(Refusal { status, date, .. }) => {
                    let request_id = access_log::new_request_id();
                    access_log::record(
                        "-",
                        "-",
                        "unmatched".to_owned(),
                        status.as_u16(),
                        this.since.elapsed(),
                        &request_id,
                    );
                    this.answer = Some((answer(status, &request_id, date), 0));
                }
            }
        }
        // Signupd's answer replaces all of `buf`, which is reported written once the answer is.
        let (answer, written) = this.answer.as_mut().expect("set above");
        while *written < answer.len() {
            match Pin::new(&mut this.io).poll_write(cx, &answer[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *written += n,
                other => return other,
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// A bare refusal of the dispatcher's found at the end of a write.
#[derive(Debug, PartialEq)]
struct Refusal<'a> {
    /// Where in the write it starts.
    start: usize,
    status: StatusCode,
    /// Its `Date` header, kept in signupd's answer.
    date: Option<&'a [u8]>,
}

/// The dispatcher's refusal that `written` ends with, if any: a whole response head with status
/// 400, 408 or 431, `content-length: 0` and no `X-Request-Id`, ending exactly where the write ends.
fn refusal_at_end(written: &[u8]) -> Option<Refusal<'_>> {
    if !written.ends_with(b"\r\n\r\n") {
        return None;
    }
    let from = written.len().saturating_sub(REFUSAL_MAX_LEN);
    let start = (from..written.len()).rev().find(|&at| written[at..].starts_with(b"HTTP/1.1 4"))?;
    let mut headers = [httparse::EMPTY_HEADER; 8];
    let mut head = httparse::Response::new(&mut headers);
    match head.parse(&written[start..]) {
        Ok(httparse::Status::Complete(length)) if start + length == written.len() => {}
        _ => return None,
    }
    let status = StatusCode::from_u16(head.code?).ok()?;
    let refused = [StatusCode::BAD_REQUEST, StatusCode::REQUEST_TIMEOUT, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE];
    if !refused.contains(&status) {
        return None;
    }
    let header = |name: &str| {
        head.headers.iter().find(|header| header.name.eq_ignore_ascii_case(name)).map(|header| header.value)
    };
    if header("x-request-id").is_some() || header("content-length") != Some(b"0".as_slice()) {
        return None;
    }
    Some(Refusal { start, status, date: header("date") })
}

/// Signupd's answer for a refusal with `status`: the JSON error every JSON client gets, and the
/// headers of any other answer of signupd's. The connection closes after it, as actix-http's would.
fn answer(status: StatusCode, request_id: &str, date: Option<&[u8]>) -> Vec<u8> {
    let error = match status {
        StatusCode::REQUEST_TIMEOUT => "request_timeout",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "headers_too_large",
        _ => "invalid_request",
    };
    let body = format!(r#"{{"ok":false,"error":"{error}"}}"#);
    let mut answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nx-content-type-options: nosniff\r\nx-request-id: {request_id}\r\n\
         connection: close\r\n",
        body.len()
    )
    .into_bytes();
    if let Some(date) = date {
        answer.extend_from_slice(b"date: ");
        answer.extend_from_slice(date);
        answer.extend_from_slice(b"\r\n");
    }
    answer.extend_from_slice(b"\r\n");
    answer.extend_from_slice(body.as_bytes());
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    const BARE_400: &[u8] =
        b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\ndate: Mon, 07 Dec 2026 20:00:00 GMT\r\n\r\n";

    #[test]
    fn the_dispatchers_bare_refusal_is_found_at_the_end_of_a_write() {
        let found = refusal_at_end(BARE_400).unwrap();
        assert_eq!(found.start, 0);
        assert_eq!(found.status, StatusCode::BAD_REQUEST);
        assert_eq!(found.date, Some(b"Mon, 07 Dec 2026 20:00:00 GMT".as_slice()));

        let pipelined =
            [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-request-id: 1\r\n\r\nok".as_slice(), BARE_400].concat();
        assert_eq!(refusal_at_end(&pipelined).unwrap().start, pipelined.len() - BARE_400.len());
    }

    #[test]
    fn an_answer_of_the_applications_is_never_taken_for_a_refusal() {
        let own_400 = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nx-request-id: 5f0c\r\n\r\n";
        let redirect = b"HTTP/1.1 303 See Other\r\nlocation: /check-inbox\r\ncontent-length: 0\r\n\r\n";
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        let refusal_then_more = [BARE_400, b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nx-request-id: 1\r\n\r\n"].concat();
        let split = &BARE_400[10..];
        for write in [own_400.as_slice(), redirect, with_body, &refusal_then_more, split] {
            assert_eq!(refusal_at_end(write), None, "{}", String::from_utf8_lossy(write));
        }
    }

    #[test]
    fn the_answer_is_signupds_json_error_with_a_request_id() {
        let answer =
            answer(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "abc123", Some(b"Mon, 07 Dec 2026 20:00:00 GMT"));
        let answer = String::from_utf8(answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{head}");
        assert!(head.contains("\r\nx-request-id: abc123\r\n"), "{head}");
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())), "{head}");
        assert!(head.ends_with("\r\ndate: Mon, 07 Dec 2026 20:00:00 GMT"), "{head}");
        assert_eq!(body, r#"{"ok":false,"error":"headers_too_large"}"#);
    }
}
