//! Why an HTTP delivery (a webhook event, a destination's call) failed, and when to try again:
//! words without the address, the credential or the URL's query, shared by the webhook worker
//! (`crate::outbound::webhooks::worker`) and the destinations (`crate::outbound::destinations`). A leaf.

use std::time::Duration;

/// Why an event was not delivered, in words without the address or the URL's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryFailure {
    /// The receiver answered a redirect, which is not followed.
    Redirect(u16),
    /// The receiver answered, with another status than 2xx.
    Status(u16),
    /// A sender's API answered this status with an error code of its own (`duplicate_parameter`,
    /// `Member In Compliance State`): only a code word, never the vendor's message, which may
    /// quote the address.
    Vendor { status: u16, code: String },
    /// The answer was not what the API documents (a body that does not parse).
    Unexpected(u16),
    /// No answer within the timeout.
    Timeout(Duration),
    /// Nothing listens on that host and port.
    Refused,
    /// DNS, TLS or the network failed before a connection stood.
    Connect,
    /// The connection closed before an answer.
    Closed,
}

impl DeliveryFailure {
    /// The failure a status is, or `None` for a 2xx.
    pub fn from_status(status: reqwest::StatusCode) -> Option<Self> {
        if status.is_success() {
            None
        } else if status.is_redirection() {
            Some(Self::Redirect(status.as_u16()))
        } else {
            Some(Self::Status(status.as_u16()))
        }
    }

    /// What a request error was; `timeout` is the one the request was sent with.
    pub fn from_error(error: &reqwest::Error, timeout: Duration) -> Self {
        let refused = std::iter::successors(std::error::Error::source(error), |cause| cause.source()).any(|cause| {
            cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        });
        if error.is_timeout() {
            Self::Timeout(timeout)
        } else if refused {
            Self::Refused
        } else if error.is_connect() {
            Self::Connect
        } else {
            Self::Closed
        }
    }

    /// What the operator can do about it (`signupd send-test-webhook`).
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Redirect(_) => "signupd does not follow redirects: configure the final URL",
            Self::Status(401 | 403) => "the receiver refused the signature: check that it uses the same whsec_ secret",
            Self::Status(_) | Self::Vendor { .. } | Self::Unexpected(_) => {
                "the receiver answered, but not with 2xx: check its logs"
            }
            Self::Timeout(_) => "the receiver is too slow: it should answer at once and work afterwards",
            Self::Refused => "is the receiver listening on that host and port?",
            Self::Connect | Self::Closed => "check the host name (DNS) and, for https, the certificate",
        }
    }
}

impl std::fmt::Display for DeliveryFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Redirect(status) => write!(f, "HTTP {status} (redirects are not followed)"),
            Self::Status(status) => write!(f, "HTTP {status}"),
            Self::Vendor { status, code } => write!(f, "HTTP {status} ({code})"),
            Self::Unexpected(status) => write!(f, "HTTP {status} with an answer the API does not document"),
            Self::Timeout(timeout) => write!(f, "no answer within {}s", timeout.as_secs()),
            Self::Refused => f.write_str("connection refused"),
            Self::Connect => f.write_str("could not connect (DNS, TLS or the network)"),
            Self::Closed => f.write_str("the connection closed before an answer"),
        }
    }
}

/// When a failed delivery is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// After the mail backoff (`mail.retry_base`, doubling with jitter, capped at 1 h).
    Backoff,
    /// After what the answer asked for (`Retry-After`, or a vendor's reset header), at least a
    /// second: the sender said when it takes requests again.
    After(Duration),
    /// Never: the answer will not change (a refusal of this very request). Dropped at once, with
    /// the alert.
    Never,
}

/// A failed delivery: what happened, and whether and when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub failure: DeliveryFailure,
    pub retry: Retry,
}

impl Failed {
    /// Tried again after the backoff: every webhook failure, and a destination's transient ones.
    pub fn backoff(failure: DeliveryFailure) -> Self {
        Self { failure, retry: Retry::Backoff }
    }
}
