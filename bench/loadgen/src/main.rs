//! Open-loop load at a fixed rate, wrk2-style: request `i` is due at `start + i / rate`, and
//! connection `k` of `C` sends the requests with `i % C == k`, one at a time (no pipelining). A
//! request's latency is measured from the moment it was *due*, not from when it could be sent,
//! so a stalled server is charged for the requests that queued behind the stall (no coordinated
//! omission). The time from the actual send is reported too ("service time").
//!
//! Every request is `POST PATH` with a form body carrying a unique address:
//! `email=p<run>-<i>%40example.com&consent=yes&list=news`.
//!
//! usage: signupd-loadgen ADDR PATH RATE DURATION_SECS CONNECTIONS [WARMUP_SECS]
//! prints one line of `key=value` pairs (latencies in microseconds).

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

struct Sample {
    due_us: u64,
    sent_us: u64,
    status: u16,
    recorded: bool,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// Reads one response; returns its status. Supports `Content-Length` bodies only.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<u16> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let head_end = loop {
        if let Some(pos) = find(buf, b"\r\n\r\n") {
            break pos + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| bad("non-UTF-8 head"))?;
    let status: u16 = head.get(9..12).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status"))?;
    let mut length = 0usize;
    for line in head.split("\r\n") {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().map_err(|_| bad("bad content-length"))?;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(bad("chunked responses are not supported"));
            }
        }
    }
    while buf.len() < head_end + length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    buf.drain(..head_end + length);
    Ok(status)
}

#[allow(clippy::too_many_arguments)]
async fn connection(
    addr: SocketAddr,
    path: String,
    run: String,
    k: u64,
    conns: u64,
    total: u64,
    interval_ns: f64,
    warmup: u64,
    start: Instant,
) -> io::Result<Vec<Sample>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(8192);
    let mut samples = Vec::with_capacity((total / conns + 1) as usize);
    let mut i = k;
    while i < total {
        let due = start + Duration::from_nanos((i as f64 * interval_ns) as u64);
        tokio::time::sleep_until(due).await;
        let body = format!("email=p{run}-{i}%40example.com&consent=yes&list=news");
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let sent = Instant::now();
        stream.write_all(request.as_bytes()).await?;
        let status = read_response(&mut stream, &mut buf).await?;
        let done = Instant::now();
        samples.push(Sample {
            due_us: done.duration_since(due).as_micros() as u64,
            sent_us: done.duration_since(sent).as_micros() as u64,
            status,
            recorded: i >= warmup,
        });
        i += conns;
    }
    Ok(samples)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        return Err("usage: signupd-loadgen ADDR PATH RATE DURATION_SECS CONNECTIONS [WARMUP_SECS]".into());
    }
    let addr: SocketAddr = args[1].parse()?;
    let path = args[2].clone();
    let rate: f64 = args[3].parse()?;
    let duration: f64 = args[4].parse()?;
    let conns: u64 = args[5].parse()?;
    let warmup_secs: f64 = args.get(6).map_or(Ok(0.0), |s| s.parse())?;
    let total = (rate * (duration + warmup_secs)) as u64;
    let warmup = (rate * warmup_secs) as u64;
    let interval_ns = 1e9 / rate;
    let run = format!("{:x}", SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos());

    let start = Instant::now() + Duration::from_millis(200);
    let mut tasks = Vec::new();
    for k in 0..conns {
        tasks.push(tokio::spawn(connection(
            addr,
            path.clone(),
            run.clone(),
            k,
            conns,
            total,
            interval_ns,
            warmup,
            start,
        )));
    }
    let mut samples = Vec::new();
    let mut errors = 0;
    for task in tasks {
        match task.await? {
            Ok(s) => samples.extend(s),
            Err(e) => {
                eprintln!("connection error: {e}");
                errors += 1;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let sent = samples.len();
    let samples: Vec<Sample> = samples.into_iter().filter(|s| s.recorded).collect();
    let mut statuses = std::collections::BTreeMap::new();
    for s in &samples {
        *statuses.entry(s.status).or_insert(0u64) += 1;
    }
    let mut due: Vec<u64> = samples.iter().map(|s| s.due_us).collect();
    let mut service: Vec<u64> = samples.iter().map(|s| s.sent_us).collect();
    due.sort_unstable();
    service.sort_unstable();
    let statuses: Vec<String> = statuses.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    println!(
        "target_rps={rate} achieved_rps={:.1} requests={} recorded={} conn_errors={errors} statuses={} \
         p50_us={} p90_us={} p99_us={} p999_us={} max_us={} \
         svc_p50_us={} svc_p99_us={} svc_max_us={}",
        sent as f64 / elapsed,
        sent,
        samples.len(),
        statuses.join(","),
        percentile(&due, 50.0),
        percentile(&due, 90.0),
        percentile(&due, 99.0),
        percentile(&due, 99.9),
        due.last().copied().unwrap_or(0),
        percentile(&service, 50.0),
        percentile(&service, 99.0),
        service.last().copied().unwrap_or(0),
    );
    Ok(())
}
