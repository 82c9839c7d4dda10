//! A mail-borne report, read: the RFC 3464 delivery status notification (a bounce or a delay) or
//! the RFC 5965 feedback report (a complaint) that `signupd ingest-mail` hands over as raw bytes,
//! turned into the one [`RelayEvent`] every relay's payload is read into.
//!
//! Anyone can mail the bounce address, so nothing a report says about *who* is believed: the event
//! never names a recipient (a forged report could name anyone), and the only join key is the
//! `X-Signupd-Ref` value quoted in the returned original, which the caller opens under the
//! installation's key and ignores when it does not open. The reference is never taken from the
//! report's own headers: the reporter wrote those.
//!
//! The MIME structure is read with `mail-parser`; the `message/delivery-status` and
//! `message/feedback-report` bodies come out of it as bytes, and their RFC 822-style field blocks
//! are read here. Nothing is logged and nothing of the mail outlives the call but the event: the
//! class, the enhanced status code without its text, the report's Message-ID and the quoted
//! reference.

use std::borrow::Cow;

use mail_parser::{Header, HeaderName, HeaderValue, MessageParser, MessagePart, MimeHeaders, PartType};

use super::event::{Class, RelayEvent};
use crate::outbound::mail::reference::HEADER;

/// The largest mail read, in bytes; anything longer is `None`, unparsed. A report about one of
/// signupd's mails quotes a mail of a few kilobytes (Postfix returns at most `bounce_size_limit`,
/// 50,000 bytes by default, of the original); this leaves room for a reporter that returns a whole
/// large mail while bounding what a hostile one can make the parser do.
pub const MAX_REPORT_BYTES: usize = 10 * 1024 * 1024;

/// A quoted reference longer than this was not sealed by signupd (a real one is about 130
/// characters), so it is not passed on.
const MAX_REFERENCE_LEN: usize = 1024;

/// RFC 5322 §2.1.1: no line, so no Message-ID, is longer than 998 characters.
const MAX_ID_LEN: usize = 998;

/// What one raw mail says, if it is a report signupd acts on.
///
/// `Some` only for a `multipart/report` whose direct parts hold a delivery status
/// (`message/delivery-status`, or RFC 6533's `message/global-delivery-status` that Postfix writes
/// for SMTPUTF8 mail) or a feedback report (`message/feedback-report`) that can be read; anything
/// else (a plain mail, an auto-reply, a read receipt, garbage, an empty input or one over
/// [`MAX_REPORT_BYTES`]) is `None`. Never panics.
///
/// - A delivery status: each per-recipient block is classed by its `Action`: `failed` by its
///   `Status` through [`Class::of_status`] (a failure without a readable status is a soft bounce,
///   which only counts), `delayed` as a soft bounce, `delivered`, `relayed` and `expanded` as
///   ignored; a block with no or another action does not count. The most serious block decides
///   (hard bounce, then policy, then soft bounce, then ignored; the first of equals), and its
///   status code is the event's. No recipient block at all is `None`.
/// - A feedback report: `Feedback-Type` `abuse`, `fraud`, `virus` and `other` are complaints;
///   `not-spam`, `auth-failure` and anything else are ignored. No `Feedback-Type` is `None`.
///
/// `reference` is the `X-Signupd-Ref` of the returned original (a `message/rfc822` or
/// `message/global` part, or the headers of a `text/rfc822-headers` or `message/global-headers`
/// part) with every whitespace removed, so a value an MTA folded, even inside the token, comes
/// back whole; `None` when the report quotes none. Such an event is still returned, for the
/// caller to count and ignore. `id` is the report's own `Message-ID`, which the caller does not
/// dedupe by (the sender wrote it: `hear` keys a report's receipt on its reference). `recipient` is
/// always `None`.
pub fn read(raw: &[u8]) -> Option<RelayEvent> {
    if raw.is_empty() || raw.len() > MAX_REPORT_BYTES {
        return None;
    }
    // mail-parser is fuzzed and documented never to panic; should a hostile mail find a way all
    // the same, it is a mail that is not read, not an ingest that dies.
    std::panic::catch_unwind(|| read_report(raw)).ok().flatten()
}

/// What a direct part of a `multipart/report` is to signupd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    DeliveryStatus,
    FeedbackReport,
    /// The returned original, whole or its headers only.
    Original,
}

fn read_report(raw: &[u8]) -> Option<RelayEvent> {
    let message = MessageParser::default().parse(raw)?;
    let root = message.parts.first()?;
    if !is_type(root, "multipart", "report") {
        return None;
    }
    let mut report = None;
    let mut original = None;
    for part in root.sub_parts()?.iter().filter_map(|&id| message.parts.get(usize::try_from(id).ok()?)) {
        match role(part) {
            Some(role @ (Role::DeliveryStatus | Role::FeedbackReport)) if report.is_none() => {
                report = Some((role, part));
            }
            Some(Role::Original) if original.is_none() => original = Some(part),
            _ => {}
        }
    }
    let (role, part) = report?;
    let body = String::from_utf8_lossy(part.contents());
    let (class, status) = match role {
        Role::DeliveryStatus => delivery_status(&body)?,
        Role::FeedbackReport => (feedback_type(&body)?, None),
        // Never kept as the report: matched only to be complete.
        Role::Original => return None,
    };
    Some(RelayEvent {
        id: message_id(&root.headers),
        class,
        reference: original.and_then(quoted_reference),
        recipient: None,
        status,
    })
}

fn is_type(part: &MessagePart<'_>, ctype: &str, subtype: &str) -> bool {
    part.content_type().is_some_and(|content_type| {
        content_type.ctype().eq_ignore_ascii_case(ctype)
            && content_type.subtype().is_some_and(|sub| sub.eq_ignore_ascii_case(subtype))
    })
}

fn role(part: &MessagePart<'_>) -> Option<Role> {
    const ROLES: [(&str, &str, Role); 7] = [
        ("message", "delivery-status", Role::DeliveryStatus),
        // RFC 6533: the SMTPUTF8 forms, which Postfix writes for mail sent with SMTPUTF8.
        ("message", "global-delivery-status", Role::DeliveryStatus),
        ("message", "feedback-report", Role::FeedbackReport),
        ("message", "rfc822", Role::Original),
        ("message", "global", Role::Original),
        // RFC 6522 §4 (RET=HDRS, and most feedback loops): the original's headers only.
        ("text", "rfc822-headers", Role::Original),
        ("message", "global-headers", Role::Original),
    ];
    ROLES.iter().find(|(ctype, subtype, _)| is_type(part, ctype, subtype)).map(|&(_, _, role)| role)
}

/// One `Name: value` field of a report's block, the name in lower case, continuation lines
/// joined.
#[derive(Debug)]
struct Field {
    name: String,
    value: String,
}

/// The blocks of RFC 822-style fields a `message/delivery-status` (RFC 3464 §2.1: the
/// per-message block, then one block per recipient) or `message/feedback-report` body is made of,
/// split at blank lines. A line that is neither a field nor a continuation is skipped.
fn field_blocks(body: &str) -> Vec<Vec<Field>> {
    let mut blocks = Vec::new();
    let mut block: Vec<Field> = Vec::new();
    for line in body.lines() {
        if line.trim().is_empty() {
            if !block.is_empty() {
                blocks.push(std::mem::take(&mut block));
            }
        } else if line.starts_with([' ', '\t']) {
            if let Some(field) = block.last_mut() {
                field.value.push(' ');
                field.value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            block.push(Field { name: name.trim().to_ascii_lowercase(), value: value.trim().to_owned() });
        }
    }
    if !block.is_empty() {
        blocks.push(block);
    }
    blocks
}

/// The first `name` field of a block (`name` in lower case).
fn field<'a>(block: &'a [Field], name: &str) -> Option<&'a str> {
    block.iter().find(|field| field.name == name).map(|field| field.value.as_str())
}

/// A field's value up to the first space, comment or parameter: `5.1.1` of
/// `5.1.1 (unknown user)`, `failed` of `failed`.
fn first_token(value: &str) -> &str {
    value.split(|c: char| c.is_whitespace() || c == '(' || c == ';').next().unwrap_or_default()
}

/// The class and status code of a delivery status body: its most serious recipient block.
fn delivery_status(body: &str) -> Option<(Class, Option<String>)> {
    field_blocks(body).iter().filter_map(|block| recipient_block(block)).fold(None, |worst, block| match worst {
        Some(worst) if severity(worst.0) >= severity(block.0) => Some(worst),
        _ => Some(block),
    })
}

/// What one per-recipient block says (RFC 3464 §2.3), `None` for a block without a known
/// `Action` (the per-message block among them).
fn recipient_block(block: &[Field]) -> Option<(Class, Option<String>)> {
    let action = first_token(field(block, "action")?).to_ascii_lowercase();
    let status = field(block, "status")
        .map(first_token)
        .filter(|code| is_status_code(code))
        .and_then(|code| Some((Class::of_status(code)?, code.to_owned())));
    let class = match action.as_str() {
        // A failure without a status that says why suppresses nothing: it only counts.
        "failed" => status.as_ref().map_or(Class::SoftBounce, |&(class, _)| class),
        "delayed" => Class::SoftBounce,
        "delivered" | "relayed" | "expanded" => Class::Ignored,
        _ => return None,
    };
    Some((class, status.map(|(_, code)| code)))
}

/// RFC 3463 §2: `class "." subject "." detail`, one digit then one to three, twice; nothing
/// else, so that only a code and never free text is kept.
fn is_status_code(code: &str) -> bool {
    let mut parts = code.split('.');
    let shaped = |part: Option<&str>, max: usize| {
        part.is_some_and(|part| (1..=max).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit()))
    };
    shaped(parts.next(), 1) && shaped(parts.next(), 3) && shaped(parts.next(), 3) && parts.next().is_none()
}

/// Which class wins when a report's recipient blocks disagree.
fn severity(class: Class) -> u8 {
    match class {
        Class::Complaint => 4,
        Class::HardBounce => 3,
        Class::Policy => 2,
        Class::SoftBounce => 1,
        Class::Ignored => 0,
    }
}

/// The class of a feedback report body (RFC 5965 §3.1 `Feedback-Type`, RFC 6591
/// `auth-failure`). `not-spam` says the reader wanted the mail: counting it as a complaint would
/// invert the signal.
fn feedback_type(body: &str) -> Option<Class> {
    let blocks = field_blocks(body);
    let kind = blocks.iter().find_map(|block| field(block, "feedback-type"))?;
    Some(match first_token(kind).to_ascii_lowercase().as_str() {
        "abuse" | "fraud" | "virus" | "other" => Class::Complaint,
        _ => Class::Ignored,
    })
}

/// The `X-Signupd-Ref` the returned original carries, from its own top-level headers.
fn quoted_reference(original: &MessagePart<'_>) -> Option<String> {
    match &original.body {
        PartType::Message(message) => reference_in(&message.parts.first()?.headers),
        // The headers-only forms, and a returned message mail-parser could not take apart.
        _ => reference_in(&MessageParser::default().parse_headers(original.contents())?.parts.first()?.headers),
    }
}

fn reference_in(headers: &[Header<'_>]) -> Option<String> {
    // Should the original carry it twice, the lowest is signupd's: MTAs add headers on top.
    let header = headers.iter().rev().find(|header| header.name.as_str().eq_ignore_ascii_case(HEADER))?;
    let HeaderValue::Text(value) = &header.value else {
        return None;
    };
    // A sealed value (`v1.` and base64url) has no whitespace of its own: whatever is there was
    // put in by folding, which some MTAs do even inside a token.
    let reference: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    (!reference.is_empty() && reference.len() <= MAX_REFERENCE_LEN).then_some(reference)
}

/// The report's own Message-ID, without its angle brackets.
fn message_id(headers: &[Header<'_>]) -> Option<String> {
    let header = headers.iter().find(|header| header.name == HeaderName::MessageId)?;
    let id: &Cow<'_, str> = match &header.value {
        HeaderValue::Text(id) => id,
        HeaderValue::TextList(ids) => ids.first()?,
        _ => return None,
    };
    let id = id.trim();
    (!id.is_empty() && id.len() <= MAX_ID_LEN).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A sealed-looking reference (`v1.` and base64url, the length of a real one); `read` only
    /// finds it, opening is the caller's.
    const REF: &str = "v1.Qk9VTkNFLVRFU1QtTk9OQ0UtMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5\
                       MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAx-_w";

    /// The line ending a fixture is written with.
    #[derive(Debug, Clone, Copy)]
    enum Eol {
        Lf,
        Crlf,
    }

    /// A fixture (written with LF) as the bytes an MTA would deliver: `{ref}` is the reference,
    /// `{ref-folded}` the reference folded inside the token, as some MTAs do.
    fn mail(template: &str, eol: Eol) -> Vec<u8> {
        let (head, tail) = REF.split_at(60);
        let text = template.replace("{ref-folded}", &format!("{head}\n\t{tail}")).replace("{ref}", REF);
        match eol {
            Eol::Lf => text.into_bytes(),
            Eol::Crlf => text.replace('\n', "\r\n").into_bytes(),
        }
    }

    /// Reads a fixture and checks what every mail-borne event must hold: no recipient.
    fn read_fixture(template: &str, eol: Eol) -> RelayEvent {
        let event = read(&mail(template, eol)).expect("the fixture is a report");
        assert_eq!(event.recipient, None, "a mail-borne report never names a recipient");
        event
    }

    /// Postfix's bounce for an unknown local user, the original returned whole with its
    /// reference folded.
    const POSTFIX_UNKNOWN_USER: &str = r#"Return-Path: <>
Received: by mail.example.org (Postfix)
	id 4Zx1Yq3k2Hz9sT; Mon, 20 Jul 2026 10:15:02 +0000 (UTC)
Date: Mon, 20 Jul 2026 10:15:02 +0000 (UTC)
From: MAILER-DAEMON@mail.example.org (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: bounces@signupd.example
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="4Zx1Yq3k2Hz9sT.1784542502/mail.example.org"
Content-Transfer-Encoding: 8bit
Message-Id: <20260720101502.4Zx1Yq3k2Hz9sT@mail.example.org>

This is a MIME-encapsulated message.

--4Zx1Yq3k2Hz9sT.1784542502/mail.example.org
Content-Description: Notification
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

This is the mail system at host mail.example.org.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients. It's attached below.

For further assistance, please send mail to postmaster.

If you do so, please include this problem report. You can
delete your own text from the attached returned message.

                   The mail system

<nobody@example.org>: unknown user: "nobody"

--4Zx1Yq3k2Hz9sT.1784542502/mail.example.org
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.example.org
X-Postfix-Queue-ID: 4Zx1Yq3k2Hz9sT
X-Postfix-Sender: rfc822; bounces@signupd.example
Arrival-Date: Mon, 20 Jul 2026 10:15:01 +0000 (UTC)

Final-Recipient: rfc822; nobody@example.org
Original-Recipient: rfc822;nobody@example.org
Action: failed
Status: 5.1.1
Diagnostic-Code: X-Postfix; unknown user: "nobody"

--4Zx1Yq3k2Hz9sT.1784542502/mail.example.org
Content-Description: Undelivered Message
Content-Type: message/rfc822
Content-Transfer-Encoding: 8bit

Return-Path: <bounces@signupd.example>
Received: from signupd.example (signupd.example [192.0.2.10])
	by mail.example.org (Postfix) with ESMTPS id 4Zx1Yq3k2Hz9sT
	for <nobody@example.org>; Mon, 20 Jul 2026 10:15:01 +0000 (UTC)
From: Example List <list@signupd.example>
To: nobody@example.org
Subject: Please confirm your subscription
Date: Mon, 20 Jul 2026 10:15:00 +0000
Message-ID: <01J3ZK6Q8M4V0000@signupd.example>
MIME-Version: 1.0
X-Signupd-Ref: {ref-folded}
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 7bit

Please confirm: https://signupd.example/confirm/abc

--4Zx1Yq3k2Hz9sT.1784542502/mail.example.org--
"#;

    #[test]
    fn a_postfix_bounce_for_an_unknown_user_is_a_hard_bounce_with_its_reference() {
        for eol in [Eol::Crlf, Eol::Lf] {
            let event = read_fixture(POSTFIX_UNKNOWN_USER, eol);
            assert_eq!(event.class, Class::HardBounce, "{eol:?}");
            assert_eq!(event.status.as_deref(), Some("5.1.1"), "{eol:?}");
            assert_eq!(event.reference.as_deref(), Some(REF), "{eol:?}");
            assert_eq!(event.id.as_deref(), Some("20260720101502.4Zx1Yq3k2Hz9sT@mail.example.org"), "{eol:?}");
        }
    }

    /// A remote MTA refusing the sender (5.7.1), the status with a comment, the reference folded
    /// after its colon.
    const POLICY_BOUNCE: &str = r#"From: Mail Delivery System <MAILER-DAEMON@relay.signupd.example>
To: bounces@signupd.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <policy-1@relay.signupd.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type="delivery-status"; boundary="b1"

--b1
Content-Type: text/plain

<someone@example.net>: host mx.example.net said: 550 5.7.1 Message rejected as spam
--b1
Content-Type: message/delivery-status

Reporting-MTA: dns; relay.signupd.example

Final-Recipient: rfc822; someone@example.net
Action: failed
Status: 5.7.1 (delivery not authorized, message refused)
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; 550 5.7.1 Message rejected as spam,
    see https://mx.example.net/policy
--b1
Content-Type: message/rfc822

From: list@signupd.example
To: someone@example.net
Subject: Please confirm your subscription
X-Signupd-Ref:
 {ref}

Please confirm.
--b1--
"#;

    #[test]
    fn a_refused_sender_is_a_policy_event() {
        let event = read_fixture(POLICY_BOUNCE, Eol::Lf);
        assert_eq!(event.class, Class::Policy);
        assert_eq!(event.status.as_deref(), Some("5.7.1"));
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("policy-1@relay.signupd.example"));
    }

    /// Postfix's delay warning: headers only, `Action: delayed` with a 4.x.x status.
    const DELAYED: &str = r#"From: MAILER-DAEMON@mail.signupd.example (Mail Delivery System)
To: bounces@signupd.example
Subject: Delayed Mail (still being retried)
Message-Id: <20260720141502.5Ab2Cd3Ef4@mail.signupd.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="5Ab2Cd3Ef4.1784556902/mail.signupd.example"

--5Ab2Cd3Ef4.1784556902/mail.signupd.example
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mail.signupd.example.

####################################################################
# THIS IS A WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #
####################################################################

--5Ab2Cd3Ef4.1784556902/mail.signupd.example
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.signupd.example
X-Postfix-Queue-ID: 5Ab2Cd3Ef4
Arrival-Date: Mon, 20 Jul 2026 10:15:01 +0000 (UTC)

Final-Recipient: rfc822; slow@example.com
Action: delayed
Status: 4.4.1
Diagnostic-Code: X-Postfix; connect to mx.example.com[198.51.100.7]:25: Connection
    timed out
Will-Retry-Until: Mon, 27 Jul 2026 10:15:01 +0000 (UTC)

--5Ab2Cd3Ef4.1784556902/mail.signupd.example
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

From: list@signupd.example
To: slow@example.com
Subject: Please confirm your subscription
X-Signupd-Ref: {ref}

--5Ab2Cd3Ef4.1784556902/mail.signupd.example--
"#;

    #[test]
    fn a_delay_warning_is_a_soft_bounce() {
        let event = read_fixture(DELAYED, Eol::Lf);
        assert_eq!(event.class, Class::SoftBounce);
        assert_eq!(event.status.as_deref(), Some("4.4.1"));
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("20260720141502.5Ab2Cd3Ef4@mail.signupd.example"));
    }

    /// A failure whose status is a full mailbox (5.2.2).
    const MAILBOX_FULL: &str = r#"From: postmaster@example.com
To: bounces@signupd.example
Subject: Delivery Status Notification (Failure)
Message-ID: <full-7@example.com>
MIME-Version: 1.0
Content-Type: multipart/report; boundary="=_full"; report-type=delivery-status

--=_full
Content-Type: text/plain; charset=us-ascii

The recipient's mailbox is full.
--=_full
Content-Type: message/delivery-status

Reporting-MTA: dns;mx.example.com
Arrival-Date: Mon, 20 Jul 2026 10:15:01 +0000

Final-Recipient: rfc822;hoarder@example.com
Action: failed
Status: 5.2.2
Diagnostic-Code: smtp;552 5.2.2 Mailbox full
--=_full
Content-Type: message/rfc822

From: list@signupd.example
To: hoarder@example.com
X-Signupd-Ref: {ref}
Subject: Please confirm your subscription

Please confirm.
--=_full--
"#;

    #[test]
    fn a_full_mailbox_is_a_soft_bounce_even_when_it_fails() {
        let event = read_fixture(MAILBOX_FULL, Eol::Crlf);
        assert_eq!(event.class, Class::SoftBounce);
        assert_eq!(event.status.as_deref(), Some("5.2.2"));
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("full-7@example.com"));
    }

    /// RET=HDRS: the original's headers come back as `text/rfc822-headers`.
    const HEADERS_ONLY: &str = r#"From: MAILER-DAEMON@mail.example.org (Mail Delivery System)
To: bounces@signupd.example
Subject: Undelivered Mail Returned to Sender
Message-Id: <20260720101502.6Bc3De4Fg5@mail.example.org>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="6Bc3De4Fg5.1784542502/mail.example.org"

--6Bc3De4Fg5.1784542502/mail.example.org
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

<gone@example.org>: unknown user: "gone"

--6Bc3De4Fg5.1784542502/mail.example.org
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.example.org

Final-Recipient: rfc822; gone@example.org
Original-Recipient: rfc822;gone@example.org
Action: failed
Status: 5.1.1
Diagnostic-Code: X-Postfix; unknown user: "gone"

--6Bc3De4Fg5.1784542502/mail.example.org
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

Return-Path: <bounces@signupd.example>
From: Example List <list@signupd.example>
To: gone@example.org
Subject: Please confirm your subscription
X-Signupd-Ref: {ref-folded}
Message-ID: <01J3ZK6Q8M4V0001@signupd.example>

--6Bc3De4Fg5.1784542502/mail.example.org--
"#;

    #[test]
    fn a_headers_only_bounce_quotes_the_reference_in_its_headers_part() {
        for eol in [Eol::Crlf, Eol::Lf] {
            let event = read_fixture(HEADERS_ONLY, eol);
            assert_eq!(event.class, Class::HardBounce, "{eol:?}");
            assert_eq!(event.status.as_deref(), Some("5.1.1"), "{eol:?}");
            assert_eq!(event.reference.as_deref(), Some(REF), "{eol:?}");
            assert_eq!(event.id.as_deref(), Some("20260720101502.6Bc3De4Fg5@mail.example.org"), "{eol:?}");
        }
    }

    /// Postfix's bounce of SMTPUTF8 mail (RFC 6533): the global forms, UTF-8 in the fields.
    const GLOBAL: &str = r#"From: MAILER-DAEMON@mail.example.org (Mail Delivery System)
To: bounces@signupd.example
Subject: Undelivered Mail Returned to Sender
Message-Id: <20260720101502.7Cd4Ef5Gh6@mail.example.org>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="7Cd4Ef5Gh6.1784542502/mail.example.org"
Content-Transfer-Encoding: 8bit

--7Cd4Ef5Gh6.1784542502/mail.example.org
Content-Description: Notification
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

<jürgen@example.org>: unknown user: "jürgen"

--7Cd4Ef5Gh6.1784542502/mail.example.org
Content-Description: Delivery report
Content-Type: message/global-delivery-status
Content-Transfer-Encoding: 8bit

Reporting-MTA: dns; mail.example.org

Final-Recipient: utf-8; jürgen@example.org
Original-Recipient: utf-8;jürgen@example.org
Action: failed
Status: 5.1.1
Diagnostic-Code: X-Postfix; unknown user: "jürgen"

--7Cd4Ef5Gh6.1784542502/mail.example.org
Content-Description: Undelivered Message
Content-Type: message/global
Content-Transfer-Encoding: 8bit

From: Liste <list@signupd.example>
To: jürgen@example.org
Subject: Bitte bestätigen
X-Signupd-Ref: {ref}
Content-Type: text/plain; charset=utf-8

Bitte bestätigen.

--7Cd4Ef5Gh6.1784542502/mail.example.org--
"#;

    #[test]
    fn a_global_delivery_status_is_read_like_any_other() {
        let event = read_fixture(GLOBAL, Eol::Lf);
        assert_eq!(event.class, Class::HardBounce);
        assert_eq!(event.status.as_deref(), Some("5.1.1"));
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("20260720101502.7Cd4Ef5Gh6@mail.example.org"));
    }

    #[test]
    fn global_headers_are_read_like_rfc822_headers() {
        let template =
            HEADERS_ONLY.replace("Content-Type: text/rfc822-headers", "Content-Type: message/global-headers");
        let event = read_fixture(&template, Eol::Lf);
        assert_eq!(event.class, Class::HardBounce);
        assert_eq!(event.reference.as_deref(), Some(REF));
    }

    /// An RFC 5965 report from a feedback loop, the original's headers returned;
    /// `{feedback-type}` is filled in by each test.
    const ARF: &str = r#"From: Feedback Loop <fbl@isp.example>
To: bounces@signupd.example
Subject: FW: Please confirm your subscription
Message-ID: <arf-2026-07-20-1@isp.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report;
     boundary="part1_13d.2e68ed54_arf"

--part1_13d.2e68ed54_arf
Content-Type: text/plain; charset="US-ASCII"
Content-Transfer-Encoding: 7bit

This is an email abuse report for an email message received from IP
192.0.2.10 on Mon, 20 Jul 2026 10:15:01 +0000.

--part1_13d.2e68ed54_arf
Content-Type: message/feedback-report

Feedback-Type: {feedback-type}
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces@signupd.example>
Original-Rcpt-To: <redacted@isp.example>
Arrival-Date: Mon, 20 Jul 2026 10:15:01 +0000
Source-IP: 192.0.2.10
Reported-Domain: signupd.example

--part1_13d.2e68ed54_arf
Content-Type: text/rfc822-headers

Received: from signupd.example (signupd.example [192.0.2.10])
        by mx.isp.example; Mon, 20 Jul 2026 10:15:01 +0000
From: Example List <list@signupd.example>
To: redacted@isp.example
Subject: Please confirm your subscription
Message-ID: <01J3ZK6Q8M4V0002@signupd.example>
X-Signupd-Ref: {ref}

--part1_13d.2e68ed54_arf--
"#;

    fn arf(feedback_type: &str) -> String {
        ARF.replace("{feedback-type}", feedback_type)
    }

    #[test]
    fn an_abuse_report_is_a_complaint_with_the_reference_of_the_reported_mail() {
        let event = read_fixture(&arf("abuse"), Eol::Crlf);
        assert_eq!(event.class, Class::Complaint);
        assert_eq!(event.status, None);
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("arf-2026-07-20-1@isp.example"));
    }

    #[test]
    fn a_not_spam_report_is_ignored() {
        let event = read_fixture(&arf("not-spam"), Eol::Lf);
        assert_eq!(event.class, Class::Ignored);
        assert_eq!(event.reference.as_deref(), Some(REF));
    }

    #[test]
    fn feedback_types_classify_as_the_contract_says() {
        for (feedback_type, class) in [
            ("abuse", Class::Complaint),
            ("Abuse", Class::Complaint),
            ("fraud", Class::Complaint),
            ("virus", Class::Complaint),
            ("other", Class::Complaint),
            ("not-spam", Class::Ignored),
            ("auth-failure", Class::Ignored),
            ("opt-out", Class::Ignored),
        ] {
            assert_eq!(read_fixture(&arf(feedback_type), Eol::Lf).class, class, "{feedback_type}");
        }
    }

    #[test]
    fn the_reported_message_may_come_back_whole() {
        let template = arf("abuse").replace("Content-Type: text/rfc822-headers", "Content-Type: message/rfc822");
        let event = read_fixture(&template, Eol::Lf);
        assert_eq!(event.class, Class::Complaint);
        assert_eq!(event.reference.as_deref(), Some(REF));
    }

    #[test]
    fn a_feedback_report_without_a_feedback_type_is_not_read() {
        assert_eq!(read(&mail(&ARF.replace("Feedback-Type: {feedback-type}\n", ""), Eol::Lf)), None);
    }

    /// The reference only where the reporter writes: the report's own headers. A forger's
    /// report would look like this; the original it returns carries no reference.
    const REFERENCE_ON_TOP_ONLY: &str = r#"From: MAILER-DAEMON@forger.example
To: bounces@signupd.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <forged-1@forger.example>
X-Signupd-Ref: {ref}
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="f"

--f
Content-Type: message/delivery-status
X-Signupd-Ref: {ref}

Reporting-MTA: dns; forger.example

Final-Recipient: rfc822; victim@example.com
Action: failed
Status: 5.1.1
--f
Content-Type: message/rfc822

From: list@signupd.example
To: victim@example.com
Subject: Please confirm your subscription

Please confirm.
--f--
"#;

    #[test]
    fn a_reference_in_the_reports_own_headers_is_not_taken() {
        let event = read_fixture(REFERENCE_ON_TOP_ONLY, Eol::Lf);
        assert_eq!(event.class, Class::HardBounce);
        assert_eq!(event.status.as_deref(), Some("5.1.1"));
        assert_eq!(event.reference, None);
        assert_eq!(event.id.as_deref(), Some("forged-1@forger.example"));
    }

    #[test]
    fn the_originals_reference_wins_over_the_reports_own() {
        let template =
            POLICY_BOUNCE.replace("MIME-Version: 1.0\n", "MIME-Version: 1.0\nX-Signupd-Ref: v1.reporters-own\n");
        assert_eq!(read_fixture(&template, Eol::Lf).reference.as_deref(), Some(REF));
    }

    /// Several recipient blocks: the most serious one decides, whatever their order.
    const SEVERAL_RECIPIENTS: &str = r#"From: MAILER-DAEMON@mail.example.org (Mail Delivery System)
To: bounces@signupd.example
Subject: Undelivered Mail Returned to Sender
Message-Id: <several-1@mail.example.org>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="s"

--s
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.example.org

Final-Recipient: rfc822; one@example.org
Action: delivered
Status: 2.0.0

Final-Recipient: rfc822; two@example.org
Action: delayed
Status: 4.2.2

Final-Recipient: rfc822; three@example.org
Action: failed
Status: 5.7.1

Final-Recipient: rfc822; four@example.org
Action: failed
Status: 5.1.2

Final-Recipient: rfc822; five@example.org
Action: failed
Status: 5.1.1
--s
Content-Type: text/rfc822-headers

From: list@signupd.example
X-Signupd-Ref: {ref}
--s--
"#;

    #[test]
    fn of_several_recipients_the_most_serious_decides() {
        let event = read_fixture(SEVERAL_RECIPIENTS, Eol::Crlf);
        assert_eq!(event.class, Class::HardBounce);
        assert_eq!(event.status.as_deref(), Some("5.1.2"), "the first of equals");
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("several-1@mail.example.org"));

        let without_hard =
            SEVERAL_RECIPIENTS.replace("Status: 5.1.2", "Status: 5.2.2").replace("Status: 5.1.1", "Status: 4.4.7");
        let event = read_fixture(&without_hard, Eol::Lf);
        assert_eq!((event.class, event.status.as_deref()), (Class::Policy, Some("5.7.1")));

        let only_passing = SEVERAL_RECIPIENTS.replace("Action: failed", "Action: relayed");
        let event = read_fixture(&only_passing, Eol::Lf);
        assert_eq!((event.class, event.status.as_deref()), (Class::SoftBounce, Some("4.2.2")));
    }

    #[test]
    fn a_success_notice_is_ignored() {
        let template =
            MAILBOX_FULL.replace("Action: failed", "Action: delivered").replace("Status: 5.2.2", "Status: 2.0.0");
        let event = read_fixture(&template, Eol::Lf);
        assert_eq!((event.class, event.status.as_deref()), (Class::Ignored, Some("2.0.0")));
    }

    #[test]
    fn a_failure_without_a_readable_status_only_counts() {
        for status in ["", "Status: 550\n", "Status: 5.1.1.1\n", "Status: 5.+1.1\n", "Status: unknown user\n"] {
            let template = MAILBOX_FULL.replace("Status: 5.2.2\n", status);
            let event = read_fixture(&template, Eol::Lf);
            assert_eq!((event.class, event.status.as_deref()), (Class::SoftBounce, None), "{status:?}");
        }
    }

    #[test]
    fn a_delivery_status_without_recipient_blocks_is_not_read() {
        let template = MAILBOX_FULL.replace("Action: failed\n", "");
        assert_eq!(read(&mail(&template, Eol::Lf)), None);
    }

    #[test]
    fn field_names_and_actions_are_case_blind() {
        let template =
            POSTFIX_UNKNOWN_USER.replace("Action: failed", "ACTION: Failed").replace("Status: 5.1.1", "status:5.1.1");
        let event = read_fixture(&template, Eol::Crlf);
        assert_eq!((event.class, event.status.as_deref()), (Class::HardBounce, Some("5.1.1")));
    }

    #[test]
    fn a_base64_delivery_status_is_decoded() {
        let fields = "Reporting-MTA: dns; mx.example.com\r\n\r\nFinal-Recipient: rfc822; x@example.com\r\n\
                      Action: failed\r\nStatus: 5.1.10\r\n";
        let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, fields);
        let template = format!(
            "From: postmaster@example.com\nMessage-ID: <b64@example.com>\nMIME-Version: 1.0\n\
             Content-Type: multipart/report; report-type=delivery-status; boundary=\"e\"\n\n\
             --e\nContent-Type: message/delivery-status\nContent-Transfer-Encoding: base64\n\n{encoded}\n\
             --e\nContent-Type: text/rfc822-headers\n\nX-Signupd-Ref: {{ref}}\n--e--\n"
        );
        let event = read_fixture(&template, Eol::Crlf);
        assert_eq!((event.class, event.status.as_deref()), (Class::HardBounce, Some("5.1.10")));
        assert_eq!(event.reference.as_deref(), Some(REF));
        assert_eq!(event.id.as_deref(), Some("b64@example.com"));
    }

    #[test]
    fn a_report_without_a_message_id_has_no_id() {
        let event = read_fixture(&MAILBOX_FULL.replace("Message-ID: <full-7@example.com>\n", ""), Eol::Lf);
        assert_eq!(event.id, None);
        assert_eq!(event.class, Class::SoftBounce);
    }

    #[test]
    fn mail_that_is_not_a_report_is_none() {
        let plain = "From: someone@example.com\nTo: bounces@signupd.example\nSubject: hello\n\
                     Message-ID: <plain@example.com>\nX-Signupd-Ref: {ref}\n\nStatus: 5.1.1\nAction: failed\n";
        // An auto-reply quoting signupd's mail whole: mixed, not a report.
        let auto_reply = "From: someone@example.com\nTo: bounces@signupd.example\nSubject: Out of office\n\
                          Auto-Submitted: auto-replied\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"a\"\n\n\
                          --a\nContent-Type: text/plain\n\nI am away.\n--a\nContent-Type: message/rfc822\n\n\
                          From: list@signupd.example\nX-Signupd-Ref: {ref}\n\nPlease confirm.\n--a--\n";
        // A read receipt (RFC 8098) is a report, but not one signupd reads.
        let receipt = "From: someone@example.com\nTo: bounces@signupd.example\nMIME-Version: 1.0\n\
                       Content-Type: multipart/report; report-type=disposition-notification; boundary=\"r\"\n\n\
                       --r\nContent-Type: message/disposition-notification\n\n\
                       Final-Recipient: rfc822; someone@example.com\nDisposition: manual-action/MDN-sent-manually; displayed\n\
                       --r\nContent-Type: text/rfc822-headers\n\nX-Signupd-Ref: {ref}\n--r--\n";
        // A report whose boundary never comes: no parts to read.
        let unbounded = "From: x@example.com\nContent-Type: multipart/report; report-type=delivery-status\n\n\
                         Final-Recipient: rfc822; x@example.com\nAction: failed\nStatus: 5.1.1\n";
        for (name, template) in
            [("plain", plain), ("auto-reply", auto_reply), ("receipt", receipt), ("unbounded", unbounded)]
        {
            for eol in [Eol::Lf, Eol::Crlf] {
                assert_eq!(read(&mail(template, eol)), None, "{name} {eol:?}");
            }
        }
    }

    #[test]
    fn garbage_and_empty_input_are_none() {
        assert_eq!(read(b""), None);
        assert_eq!(read(b"\r\n\r\n"), None);
        assert_eq!(read(&[0xff, 0xfe, 0x00, 0x80, b':', b'\n', 0x1b]), None);
        assert_eq!(read(b"Content-Type: multipart/report; boundary=\"x\"\n\n--x\n--x--\n"), None);
        assert_eq!(read(&vec![b'-'; 4096]), None);
    }

    #[test]
    fn input_over_the_limit_is_not_read() {
        let mut oversized = mail(POSTFIX_UNKNOWN_USER, Eol::Lf);
        oversized.resize(MAX_REPORT_BYTES + 1, b'\n');
        assert_eq!(read(&oversized), None);
        oversized.truncate(MAX_REPORT_BYTES);
        assert_eq!(read(&oversized).map(|event| event.class), Some(Class::HardBounce), "at the limit it is read");
    }

    #[test]
    fn every_truncation_of_every_fixture_reads_without_panicking() {
        let arf = arf("abuse");
        for template in [POSTFIX_UNKNOWN_USER, POLICY_BOUNCE, DELAYED, HEADERS_ONLY, GLOBAL, &arf, SEVERAL_RECIPIENTS] {
            for eol in [Eol::Lf, Eol::Crlf] {
                let raw = mail(template, eol);
                for end in 0..raw.len() {
                    if let Some(event) = read(&raw[..end]) {
                        assert_eq!(event.recipient, None);
                    }
                }
            }
        }
    }

    proptest! {
        /// Whatever the bytes, `read` answers and never names a recipient.
        #[test]
        fn any_bytes_read_without_panicking(raw in prop::collection::vec(any::<u8>(), 0..2048)) {
            prop_assert_eq!(read(&raw).and_then(|event| event.recipient), None);
        }

        /// A real report with bytes overwritten anywhere still reads without panicking.
        #[test]
        fn a_damaged_report_reads_without_panicking(
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        ) {
            let mut raw = mail(POSTFIX_UNKNOWN_USER, Eol::Crlf);
            for (at, byte) in damage {
                let at = at.index(raw.len());
                raw[at] = byte;
            }
            prop_assert_eq!(read(&raw).and_then(|event| event.recipient), None);
        }
    }
}
