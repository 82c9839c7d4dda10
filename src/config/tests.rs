//! Table-driven tests of configuration loading: every bad value fails naming its key.

use super::*;

const MINIMAL: &str = r#"
[[lists]]
id = "news"
"#;

fn problems_of(toml: &str) -> Vec<String> {
    match Config::from_toml(toml) {
        Ok(_) => panic!("expected an error for:\n{toml}"),
        Err(error) => error.problems.iter().map(Problem::to_string).collect(),
    }
}

#[test]
fn the_example_file_parses_and_matches_the_defaults() {
    let text = include_str!("../../config.example.toml");
    let config = Config::from_toml(text).expect("config.example.toml must stay valid");
    let demo = Config::check(RawConfig::default(), false).expect("the defaults are valid");
    // Every key of the example is the default, so the example documents the defaults.
    assert_eq!(config.to_redacted_toml(), demo.to_redacted_toml());
}

#[test]
fn the_example_file_mentions_every_key() {
    let text = include_str!("../../config.example.toml");
    let demo = Config::check(RawConfig::default(), false).unwrap();
    let printed = demo.to_redacted_toml();
    let keys = printed.lines().filter_map(|line| line.split_once(" = ").map(|(key, _)| key.trim()));
    for key in keys {
        assert!(text.contains(&format!("{key} =")), "config.example.toml does not document `{key}`");
    }
}

#[test]
fn zero_setup_has_the_demo_list() {
    let config = Config::check(RawConfig::default(), false).unwrap();
    assert_eq!(config.lists.len(), 1);
    assert_eq!(config.lists[0].id.as_ref(), "default");
    assert_eq!(config.server.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(config.signup.rate_limits.len(), 2);
}

#[test]
fn bad_values_name_their_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("unknown key", "[server]\nlisten_on = \"x\"", "server.listen_on: unknown key"),
        ("unknown top-level key", "colour = \"blue\"", "colour: unknown key"),
        ("unknown list key", "[[lists]]\nid = \"a\"\ncolor = 1", "lists[0].color: unknown key"),
        ("bad duration", "[signup]\nconfirm_ttl = \"two days\"", "signup.confirm_ttl: \"two days\" is not a duration"),
        ("zero duration", "[mail]\nretry_base = \"0s\"", "mail.retry_base: \"0s\" is too short"),
        ("bad rate window", "[signup]\nrate_limits = [{ window = \"x\", max = 3 }]", "signup.rate_limits[0].window"),
        (
            "zero rate max",
            "[signup]\nrate_limits = [{ window = \"1m\", max = 0 }]",
            "signup.rate_limits[0].max: must be at least 1",
        ),
        ("bad URL", "[server]\npublic_url = \"not a url\"", "server.public_url: \"not a url\" is not a URL"),
        ("URL with query", "[server]\npublic_url = \"https://a.example/?x=1\"", "server.public_url"),
        ("bad listen", "[server]\nlisten = \"localhost\"", "server.listen: \"localhost\" is not an address"),
        (
            "bad CIDR",
            "[server]\ntrusted_proxies = [\"10.0.0.0/40\"]",
            "server.trusted_proxies: \"10.0.0.0/40\" is not a CIDR",
        ),
        ("bad header", "[server]\nclient_ip_header = \"bad header\"", "server.client_ip_header"),
        ("bad prefix", "[server]\nipv6_prefix = 0", "server.ipv6_prefix"),
        ("tiny body limit", "[server]\nmax_body_bytes = 10", "server.max_body_bytes"),
        ("bad log format", "[server]\nlog_format = \"xml\"", "server.log_format: \"xml\" is not one of"),
        (
            "bad cron",
            "[cleanup]\nschedule = \"23 * * * *\"",
            "cleanup.schedule: \"23 * * * *\" is not a cron expression",
        ),
        ("bad transport", "[mail]\ntransport = \"pigeon\"", "mail.transport"),
        (
            "cleartext to a remote relay",
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"smtp.bakery.test\"\nsecurity = \"none\"",
            "mail.smtp.host: \"smtp.bakery.test\" is not a loopback relay",
        ),
        (
            "placeholder public URL",
            "[server]\npublic_url = \"https://signup.example.com\"",
            "server.public_url: \"https://signup.example.com/\" is a placeholder",
        ),
        (
            "placeholder relay",
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"smtp.example.com\"",
            "mail.smtp.host: \"smtp.example.com\" is a placeholder",
        ),
        ("wrong type", "[mail.smtp]\nport = \"five\"", "mail.smtp.port"),
        ("bad webhook", "[mail]\nalert_webhook = \"ftp://x\"", "mail.alert_webhook"),
        (
            "cleartext alert webhook to another host",
            "[mail]\nalert_webhook = \"http://alerts.bakery.test/hook\"",
            "mail.alert_webhook: \"http://alerts.bakery.test/hook\" must be https://",
        ),
        ("bad request timeout", "[server]\nrequest_timeout = \"0s\"", "server.request_timeout"),
        (
            "bad network rule",
            "[signup]\nnetwork_rate_limits = [{ window = \"1m\", max = 0 }]",
            "signup.network_rate_limits[0].max: must be at least 1",
        ),
        (
            "v4 neighbourhood too wide",
            "[signup]\nnetwork_prefix_v4 = 4",
            "signup.network_prefix_v4: 4 is not a prefix length between 8 and 32",
        ),
        ("v6 neighbourhood too long", "[signup]\nnetwork_prefix_v6 = 129", "signup.network_prefix_v6"),
        ("bad surge window", "[signup]\nsurge_alert = { window = \"soon\", max = 5 }", "signup.surge_alert.window"),
        (
            "placeholder destination URL",
            "[[destinations]]\nname = \"out\"\nkind = \"listmonk\"\n\
             url = \"https://lists.example.com\"\ntarget = \"3\"",
            "destinations[0].url: \"https://lists.example.com/\" is a placeholder on a reserved example domain; set \
             the URL of your sender (listmonk: its base URL)",
        ),
        (
            "placeholder destination API on example.org",
            "[[destinations]]\nname = \"out\"\nkind = \"brevo\"\n\
             url = \"https://api.EXAMPLE.org/v3\"\ntarget = \"7\"",
            "destinations[0].url: \"https://api.example.org/v3\" is a placeholder",
        ),
        ("bad name server", "[signup]\ndns_servers = [\"dns.bakery.test\"]", "signup.dns_servers[0]"),
    ];
    for (case, body, expected) in cases {
        let toml = format!("{body}\n{MINIMAL}");
        let problems = problems_of(&toml);
        assert!(
            problems.iter().any(|p| p.starts_with(expected) || p.contains(expected)),
            "{case}: expected {expected:?}, got {problems:?}"
        );
    }
}

#[test]
fn list_problems_name_the_list_index() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "duplicate list id",
            "[[lists]]\nid = \"news\"\n[[lists]]\nid = \"news\"",
            "lists[1].id: duplicate list id \"news\"",
        ),
        ("bad list id", "[[lists]]\nid = \"News Letter\"", "lists[0].id: list id \"News Letter\" may contain only"),
        ("missing list id", "[[lists]]\nname = \"x\"", "lists[0].id: a list id must not be empty"),
        ("bad from", "[[lists]]\nid = \"a\"\nfrom = \"not a mailbox\"", "lists[0].from"),
        (
            "bad origin",
            "[[lists]]\nid = \"a\"\nallowed_origins = [\"https://a.example/form\"]",
            "lists[0].allowed_origins[0]",
        ),
        ("bad confirm mode", "[[lists]]\nid = \"a\"\nconfirm_mode = \"click\"", "lists[0].confirm_mode"),
        (
            "empty consent text",
            "[[lists]]\nid = \"a\"\nconsent_text = \"\"",
            "lists[0].consent_text: must not be empty",
        ),
        ("line break in name", "[[lists]]\nid = \"a\"\nname = \"a\\r\\nBcc: x\"", "lists[0].name"),
        ("empty list array", "lists = []", "lists: no list configured"),
        (
            "placeholder sender through a remote relay",
            "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"smtp.bakery.test\"\n[[lists]]\nid = \"a\"",
            "lists[0].from: \"no-reply@example.com\" is a placeholder",
        ),
        ("site URL not http", "[[lists]]\nid = \"a\"\nsite_url = \"ftp://bakery.test\"", "lists[0].site_url"),
        ("relative site URL", "[[lists]]\nid = \"a\"\nsite_url = \"/home\"", "lists[0].site_url"),
        (
            "accent that does not parse",
            "[[lists]]\nid = \"a\"\naccent_color = \"blue\"",
            "lists[0].accent_color: \"blue\" is not a colour",
        ),
        (
            "unknown language",
            "[[lists]]\nid = \"a\"\nlanguage = \"tlh\"",
            "lists[0].language: \"tlh\" is not a language signupd has texts for",
        ),
        (
            "a language in `languages` without a catalogue",
            "[[lists]]\nid = \"a\"\nlanguages = [\"de\", \"tlh\"]",
            "lists[0].languages[1]: \"tlh\" is not a language signupd has texts for",
        ),
        ("line break in site name", "[[lists]]\nid = \"a\"\nsite_name = \"a\\nb\"", "lists[0].site_name"),
        ("file without lists", "[server]\nlisten = \"127.0.0.1:1\"", "lists: no list configured"),
        ("tag with a space", "[[lists]]\nid = \"a\"\ntags = [\"ok\", \"not ok\"]", "lists[0].tags[1]"),
        ("tag twice", "[[lists]]\nid = \"a\"\ntags = [\"beta\", \"beta\"]", "lists[0].tags[1]: duplicate tag"),
        (
            "field name pattern",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"First\"\nlabel = \"x\"",
            "lists[0].fields[0].name",
        ),
        (
            "field name reserved",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"email\"\nlabel = \"x\"",
            "lists[0].fields[0].name: \"email\" is a name",
        ),
        (
            "field without label",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"",
            "lists[0].fields[0].label: must not be empty",
        ),
        (
            "field kind",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nkind = \"number\"",
            "lists[0].fields[0].kind",
        ),
        (
            "field zero length",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nmax_length = 0",
            "lists[0].fields[0].max_length",
        ),
        (
            "field long length",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nmax_length = 1001",
            "lists[0].fields[0].max_length",
        ),
        (
            "text with options",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\noptions = [\"x\"]",
            "lists[0].fields[0].options",
        ),
        (
            "select without options",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nkind = \"select\"",
            "lists[0].fields[0].options",
        ),
        (
            "select with a length",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nkind = \"select\"\noptions = [\"x\"]\nmax_length = 3",
            "lists[0].fields[0].max_length",
        ),
        (
            "option twice",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nkind = \"select\"\noptions = [\"x\", \"x\"]",
            "lists[0].fields[0].options[1]: duplicate option",
        ),
        (
            "field twice",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"B\"",
            "lists[0].fields[1].name: duplicate field name",
        ),
        (
            "unknown field key",
            "[[lists]]\nid = \"a\"\n[[lists.fields]]\nname = \"a\"\nlabel = \"A\"\nwidth = 3",
            "lists[0].fields[0].width: unknown key",
        ),
        (
            "confirmed_url on a foreign origin",
            "[[lists]]\nid = \"a\"\nallowed_origins = [\"https://shop.test\"]\nconfirmed_url = \"https://evil.test/x\"",
            "lists[0].confirmed_url: the origin https://evil.test must be in",
        ),
        (
            "confirmed_url with no origin allowed",
            "[[lists]]\nid = \"a\"\nconfirmed_url = \"https://shop.test/thanks\"",
            "lists[0].confirmed_url",
        ),
        ("relative confirmed_url", "[[lists]]\nid = \"a\"\nconfirmed_url = \"/thanks\"", "lists[0].confirmed_url"),
    ];
    for (case, toml, expected) in cases {
        let problems = problems_of(toml);
        assert!(problems.iter().any(|p| p.starts_with(expected)), "{case}: expected {expected:?}, got {problems:?}");
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let problems = problems_of("[server]\nlisten = \"x\"\nlog_format = \"y\"\n[[lists]]\nid = \"\"");
    assert_eq!(problems.len(), 3, "{problems:?}");
}

#[test]
fn the_alert_webhook_is_redacted_because_its_url_is_the_credential() {
    let config = Config::from_toml(&format!(
        "[mail]\nalert_webhook = \"https://hooks.chat.test/services/T000/B000/XXXXsecretXXXX\"\n{MINIMAL}"
    ))
    .unwrap();
    let printed = config.to_redacted_toml();
    assert!(!printed.contains("XXXXsecretXXXX"), "{printed}");
    assert!(printed.contains(&format!("alert_webhook = \"{REDACTED}\"")), "{printed}");
    assert_eq!(config.mail.alert_webhook.unwrap().host_str(), Some("hooks.chat.test"), "only the printout hides it");
}

#[test]
fn the_flood_defences_have_their_documented_defaults_and_zero_turns_the_cap_and_alert_off() {
    let config = Config::from_toml(MINIMAL).unwrap();
    let signup = &config.signup;
    assert_eq!(signup.network_rate_limits.len(), 2);
    assert_eq!((signup.network_prefix_v4, signup.network_prefix_v6), (24, 48));
    assert_eq!(signup.max_mails_per_address_per_day, Some(3));
    assert_eq!(signup.surge_alert.map(|rule| (rule.window.as_secs(), rule.max)), Some((600, 500)));
    assert_eq!(config.server.request_timeout.as_secs(), 10);
    let off = Config::from_toml(&format!(
        "[signup]\nmax_mails_per_address_per_day = 0\nsurge_alert = {{ window = \"10m\", max = 0 }}\n\
         dns_servers = [\"127.0.0.1\", \"[::1]:5353\"]\n{MINIMAL}"
    ))
    .unwrap();
    assert_eq!(off.signup.max_mails_per_address_per_day, None);
    assert!(off.signup.surge_alert.is_none());
    assert_eq!(off.signup.dns_servers, ["127.0.0.1:53".parse().unwrap(), "[::1]:5353".parse().unwrap()]);
}

#[test]
fn the_smtp_password_from_the_environment_is_kept_but_never_printed() {
    let mut raw = RawConfig::default();
    raw.mail.smtp.password = "hunter2-hunter2".into();
    let config = Config::check(raw, false).unwrap();
    assert_eq!(config.mail.smtp.password.as_deref(), Some("hunter2-hunter2"));
    let shown = config.to_redacted_toml();
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(!shown.contains("password ="), "printed, it would be a key the file refuses: {shown}");
    assert!(!format!("{config:?}").contains("hunter2"));
}

/// Secrets never in the file (`docs/configuration.md`): `mail.smtp.password` in the file is refused, however it is
/// written and whatever its value, naming the three places a password may come from, so a password never sits in a
/// world-readable conffile.
#[test]
fn a_password_in_the_file_is_refused_naming_where_it_belongs() {
    let cases = [
        ("a password", "[mail.smtp]\npassword = \"x\""),
        ("an empty password", "[mail.smtp]\npassword = \"\""),
        ("beside a password_file", "[mail.smtp]\npassword_file = \"/run/pw\"\npassword = \"x\""),
        ("a dotted key", "mail.smtp.password = \"x\""),
        ("an inline table", "[mail]\nsmtp = { username = \"u\", password = \"x\" }"),
        ("a number", "[mail.smtp]\npassword = 1234"),
    ];
    for (case, toml) in cases {
        let problems = problems_of(&format!("{toml}\n{MINIMAL}"));
        let [problem] = problems.as_slice() else { panic!("{case}: one problem: {problems:?}") };
        assert!(problem.starts_with("mail.smtp.password: "), "{case}: {problem}");
        for named in ["mail.smtp.password_file", "SIGNUPD_MAIL__SMTP__PASSWORD", "credential smtp_password"] {
            assert!(problem.contains(named), "{case}: {named} not named in {problem}");
        }
        assert!(!problem.contains("\"x\""), "{case}: the value is not repeated: {problem}");
    }
}

#[test]
fn a_password_in_the_file_is_reported_with_the_other_problems() {
    let problems = problems_of(&format!("[mail.smtp]\npassword = \"x\"\n[server]\nipv6_prefix = 200\n{MINIMAL}"));
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("mail.smtp.password: "), "{problems:?}");
    assert!(problems[1].starts_with("server.ipv6_prefix: "), "{problems:?}");
}

#[test]
fn the_other_smtp_keys_and_a_password_named_elsewhere_are_accepted() {
    let config = Config::from_toml(&format!(
        "[mail.smtp]\nusername = \"u\"\npassword_file = \"/run/pw\"\n[lists.password]\n{MINIMAL}"
    ));
    // `password` as a table name elsewhere is a different (unknown) key, not the relay's.
    assert!(config.is_err_and(|error| !error.to_string().contains("mail.smtp.password:")));
    let config =
        Config::from_toml(&format!("[mail.smtp]\nusername = \"u\"\npassword_file = \"/run/pw\"\n{MINIMAL}")).unwrap();
    assert_eq!(config.mail.smtp.password_file.as_deref(), Some(Path::new("/run/pw")));
    assert_eq!(config.mail.smtp.password, None);
}

#[test]
fn without_a_password_check_config_prints_no_password_line_to_fill_in() {
    let config = Config::from_toml(
        "[mail.smtp]
username = \"relay-user\"\n[[lists]]\nid = \"a\"",
    )
    .unwrap();
    let shown = config.to_redacted_toml();
    let smtp = shown.split("[mail.smtp]").nth(1).unwrap().split("\n[").next().unwrap();
    assert!(smtp.contains("username = \"relay-user\""), "{smtp}");
    assert!(!smtp.contains("password ="), "an empty password line invites one in a 0644 file: {smtp}");
    assert!(smtp.contains("password_file = \"\""), "{smtp}");
}

#[test]
fn origins_and_urls_are_normalised() {
    let config = Config::from_toml(
        "[server]\npublic_url = \"https://signup.bakery.test/\"\n[[lists]]\nid = \"a\"\nallowed_origins = [\"https://WWW.Example.com/\"]",
    )
    .unwrap();
    assert_eq!(config.server.public_url.as_str(), "https://signup.bakery.test/");
    assert_eq!(config.lists[0].allowed_origins, ["https://www.example.com"]);
    assert!(config.list("a").is_some());
    assert!(config.list("b").is_none());
}

#[test]
fn webhook_problems_name_the_endpoint_index() {
    let hook = |extra: &str| {
        format!("[[lists]]\nid = \"news\"\n[[webhooks]]\nname = \"crm\"\nurl = \"https://crm.example.com/h\"\n{extra}")
    };
    let cases: &[(&str, String, &str)] = &[
        (
            "duplicate name",
            format!("{}\n[[webhooks]]\nname = \"crm\"\nurl = \"https://b.example.com/h\"", hook("")),
            "webhooks[1].name: duplicate webhook name \"crm\"",
        ),
        ("bad name", hook("").replace("name = \"crm\"", "name = \"My CRM\""), "webhooks[0].name"),
        (
            "http to a remote host",
            hook("").replace("https://crm.example.com/h", "http://crm.example.com/h"),
            "webhooks[0].url: \"http://crm.example.com/h\" must be https://",
        ),
        ("not a URL", hook("").replace("https://crm.example.com/h", "crm"), "webhooks[0].url"),
        (
            "unknown event",
            hook("events = [\"subscriber.created\"]"),
            "webhooks[0].events[0]: unknown event \"subscriber.created\"",
        ),
        ("unknown list", hook("lists = [\"nope\"]"), "webhooks[0].lists[0]: no list with id \"nope\""),
        ("unknown key", hook("secret = \"x\""), "webhooks[0].secret: unknown key"),
        ("bad timeout", format!("[mail]\nwebhook_timeout = \"soon\"\n{}", hook("")), "mail.webhook_timeout"),
        ("bad max age", format!("[mail]\nwebhook_max_age = \"0s\"\n{}", hook("")), "mail.webhook_max_age"),
    ];
    for (case, toml, expected) in cases {
        let problems = problems_of(toml);
        assert!(problems.iter().any(|p| p.contains(expected)), "{case}: expected {expected:?}, got {problems:?}");
    }
}

#[test]
fn a_webhook_defaults_to_every_event_and_list_and_allows_http_to_loopback() {
    let config = Config::from_toml(
        "[[lists]]\nid = \"news\"\n[[webhooks]]\nname = \"local\"\nurl = \"http://127.0.0.1:9000/h\"",
    )
    .unwrap();
    let hook = &config.webhooks[0];
    assert_eq!(hook.events, crate::config::WebhookEvent::ALL);
    assert!(hook.wants(crate::config::WebhookEvent::Unsubscribed, "news"));
    assert!(hook.lists.is_empty());
}

#[test]
fn a_loopback_relay_takes_any_sender_and_presentation_keys_are_read() {
    let config = Config::from_toml(
        "[mail]\ntransport = \"smtp\"\n[mail.smtp]\nhost = \"127.0.0.1\"\nsecurity = \"none\"\n[[lists]]\nid = \"a\"\n\
         site_name = \"Bakery\"\nsite_url = \"https://bakery.test/\"\naccent_color = \"#FD0\"\nlanguage = \"de\"",
    )
    .unwrap();
    let list = &config.lists[0];
    assert_eq!(list.site(), "Bakery");
    assert_eq!(list.site_url.as_ref().unwrap().as_str(), "https://bakery.test/");
    assert_eq!(list.accent, Some(crate::config::presentation::Rgb(0xff, 0xdd, 0x00)));
    assert_eq!(list.language.code(), "de");
    assert_eq!(list.confirm_subject(), "Bitte bestätigen Sie Ihre Anmeldung");
    let plain = Config::from_toml(MINIMAL).unwrap();
    assert_eq!(plain.lists[0].site(), "Newsletter");
    assert_eq!(plain.lists[0].welcome_subject(), "You are signed up");
}

#[test]
fn a_confirmed_url_may_lead_to_an_allowed_origin_or_to_the_site() {
    let config = Config::from_toml(
        "[[lists]]\nid = \"a\"\nallowed_origins = [\"https://shop.test\"]\nconfirmed_url = \"https://shop.test/thanks?x=1\"\n\
         tags = [\"beta\", \"v1.2_x\"]\n\
         [[lists]]\nid = \"b\"\nsite_url = \"https://bakery.test/home\"\nconfirmed_url = \"https://bakery.test/danke\"",
    )
    .unwrap();
    assert_eq!(config.lists[0].confirmed_url.as_ref().unwrap().as_str(), "https://shop.test/thanks?x=1");
    assert_eq!(config.lists[1].confirmed_url.as_ref().unwrap().as_str(), "https://bakery.test/danke");
    let tags: Vec<&str> = config.lists[0].tags.iter().map(AsRef::as_ref).collect();
    assert_eq!(tags, ["beta", "v1.2_x"]);
}

#[test]
fn fields_are_read_in_order_with_their_defaults_and_a_list_holds_at_most_twenty() {
    let config = Config::from_toml(
        "[[lists]]\nid = \"a\"\n\
         [[lists.fields]]\nname = \"first_name\"\nlabel = \"First name\"\nrequired = true\n\
         [[lists.fields]]\nname = \"topic\"\nlabel = \"Topic\"\nkind = \"select\"\noptions = [\"Rust\", \"Go\"]\n\
         [[lists.fields]]\nname = \"campaign\"\nlabel = \"Campaign\"\nkind = \"hidden\"\nmax_length = 20\n",
    )
    .unwrap();
    let fields = &config.lists[0].fields;
    let names: Vec<&str> = fields.iter().map(|field| field.name.as_ref()).collect();
    assert_eq!(names, ["first_name", "topic", "campaign"]);
    assert_eq!(fields[0].kind, FieldKind::Text { max_length: fields::DEFAULT_MAX_LENGTH });
    assert!(fields[0].required && !fields[1].required);
    assert_eq!(fields[1].kind, FieldKind::Select { options: vec!["Rust".into(), "Go".into()] });
    assert_eq!(fields[2].kind, FieldKind::Hidden { max_length: 20 });

    let many: String =
        (0..21).map(|i| format!("[[lists.fields]]\nname = \"f{i}\"\nlabel = \"F{i}\"\n")).collect::<Vec<_>>().concat();
    let problems = problems_of(&format!("[[lists]]\nid = \"a\"\n{many}"));
    assert!(problems.iter().any(|p| p.starts_with("lists[0].fields: at most 20")), "{problems:?}");
}

#[test]
fn the_ehlo_name_is_the_configured_one_else_the_public_host_else_the_machines() {
    let helo = |toml: &str| Config::from_toml(&format!("{toml}\n[[lists]]\nid = \"a\"")).unwrap().helo_name();
    assert_eq!(helo("[server]\npublic_url = \"https://news.bakery.test\"").as_deref(), Some("news.bakery.test"));
    assert_eq!(
        helo("[server]\npublic_url = \"https://news.bakery.test\"\n[mail.smtp]\nhelo_name = \"mta.bakery.test\"")
            .as_deref(),
        Some("mta.bakery.test")
    );
    for address_or_localhost in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"] {
        assert_eq!(helo(&format!("[server]\npublic_url = \"{address_or_localhost}\"")), None, "{address_or_localhost}");
    }
    let error =
        Config::from_toml("[mail.smtp]\nhelo_name = \"not a name\"\n[[lists]]\nid = \"a\"").unwrap_err().to_string();
    assert!(error.contains("mail.smtp.helo_name"), "{error}");
    let error = Config::from_toml("[mail.smtp]\ncertificate_sha256 = \"AB:CD\"\n[[lists]]\nid = \"a\"")
        .unwrap_err()
        .to_string();
    assert!(error.contains("mail.smtp.certificate_sha256") && error.contains("64 hex digits"), "{error}");
}
