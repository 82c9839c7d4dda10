//! A webhook receiver for the tests: a small HTTP/1.1 server on 127.0.0.1 that records every
//! request (method, path, headers, body) before it answers, and answers as scripted: a status,
//! a 302 redirect, no answer at all until the client gives up, or a connection closed without a
//! byte of answer. One thread per connection, so a hanging answer holds up no other request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the receiver answers the next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// This status, with an empty body.
    Status(u16),
    /// Reads the request and never answers; the connection closes when the client gives up.
    Hang,
    /// Reads the request and closes the connection without answering.
    Close,
    /// `302 Found` to this URL.
    Redirect(String),
}

/// A request as received, with the reply it got.
#[derive(Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub reply: Reply,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorded")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("headers", &self.headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .field("reply", &self.reply)
            .finish()
    }
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| panic!("{:?} is not JSON: {error}", self.text()))
    }

    /// The `webhook-id` header (panics without one).
    pub fn webhook_id(&self) -> String {
        self.header("webhook-id").unwrap_or_else(|| panic!("no webhook-id in {:?}", self.headers)).to_owned()
    }
}

#[derive(Debug)]
pub struct Receiver {
    pub port: u16,
    reply: Arc<Mutex<Reply>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Receiver {
    /// A receiver on a free port.
    pub fn start(reply: Reply) -> Self {
        Self::serve(TcpListener::bind("127.0.0.1:0").unwrap(), reply)
    }

    /// A receiver on `port` (one that nothing listened on a moment ago).
    pub fn start_on(port: u16, reply: Reply) -> Self {
        let listener =
            TcpListener::bind(("127.0.0.1", port)).unwrap_or_else(|error| panic!("bind 127.0.0.1:{port}: {error}"));
        Self::serve(listener, reply)
    }

    fn serve(listener: TcpListener, reply: Reply) -> Self {
        let port = listener.local_addr().unwrap().port();
        let reply = Arc::new(Mutex::new(reply));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (script, recorded) = (reply.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (script, recorded) = (script.clone(), recorded.clone());
                std::thread::spawn(move || handle(stream, &script, &recorded));
            }
        });
        Self { port, reply, requests }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How the following requests are answered.
    pub fn reply_with(&self, reply: Reply) {
        *self.reply.lock().unwrap() = reply;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

/// One HTTP/1.1 request as read: the method, the target, the headers (names lowercased, in the
/// order received) and the body (`Content-Length` bytes).
pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Reads one request from `stream` (10 s at most between bytes); `None` for a connection that
/// closes before a whole request (a probe, or a client that gave up).
pub fn read_request(stream: &TcpStream) -> Option<Request> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
            if name == "content-length" {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, target, headers, body })
}

/// Reads one request, records it, answers as scripted and closes the connection.
fn handle(mut stream: TcpStream, script: &Mutex<Reply>, recorded: &Mutex<Vec<Recorded>>) {
    let Some(Request { method, target: path, headers, body }) = read_request(&stream) else { return };
    let reply = script.lock().unwrap().clone();
    recorded.lock().unwrap().push(Recorded { method, path, headers, body, reply: reply.clone() });
    let answer = match reply {
        Reply::Status(204) => "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_owned(),
        Reply::Status(code) => format!("HTTP/1.1 {code} Scripted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        Reply::Redirect(location) => {
            format!("HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        Reply::Close => {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        Reply::Hang => {
            // Until the client gives up and closes (or the read timeout ends it).
            let mut sink = [0u8; 256];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
    };
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}
