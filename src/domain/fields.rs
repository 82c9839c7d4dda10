//! The fields a list's form may carry beyond the address (`[[lists.fields]]`): a first name, a
//! topic picked from a few options, a hidden campaign. A field's rule is checked once, in the
//! configuration; a visitor's value is checked against it at signup, and only values that pass
//! are kept.
//!
//! The rules, where the contract leaves them open:
//!
//! - A value is trimmed; an empty value is no value (so an empty optional field is not stored,
//!   and an empty required one is missing).
//! - A `text` or `hidden` value is at most `max_length` characters (default 100) and holds no
//!   control characters: it is shown on pages, written to CSV and sent to the operator's sender.
//! - A `select` value is exactly one of its `options`.
//! - Names are `[a-z][a-z0-9_]{0,31}` and never one of the form's own names (`email`, `list`, …),
//!   so a field can never stand in for the address or the consent.
//! - The kept values are stored as one JSON object in the row's `fields` column, in the order
//!   the list declares its fields; a list without fields stores NULL.

use std::fmt;

/// The form's own names and the columns of an export (which `import` reads back): no field may
/// take one of them.
pub const RESERVED_NAMES: &[&str] = &[
    "email",
    "consent",
    "list",
    "offered",
    "source",
    "tags",
    "return_to",
    "website",
    "inbox",
    "send",
    "token",
    "fields",
    "status",
    "created_at",
    "confirmed_at",
    "confirm_method",
    "consent_version",
    "consent_text",
    "unsubscribe_url",
    "lang",
    "language",
];

/// The most fields one list may declare: a form, not a survey.
pub const MAX_FIELDS: usize = 20;

/// The longest `max_length` a text or hidden field may set.
pub const MAX_LENGTH_CEILING: usize = 1000;

/// `max_length` when a text or hidden field does not set one.
pub const DEFAULT_MAX_LENGTH: usize = 100;

/// A field's name: `[a-z][a-z0-9_]{0,31}`, not a reserved one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldName(String);

impl FieldName {
    pub fn parse(value: &str) -> Result<Self, String> {
        let mut bytes = value.bytes();
        let valid = (1..=32).contains(&value.len())
            && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
            && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(format!("{value:?} is not a letter a-z then up to 31 of a-z, 0-9 and '_'"));
        }
        if RESERVED_NAMES.contains(&value) {
            return Err(format!("{value:?} is a name the signup form uses itself"));
        }
        Ok(Self(value.to_owned()))
    }
}

impl AsRef<str> for FieldName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// A line of text the visitor types.
    Text { max_length: usize },
    /// One of a few options the visitor picks.
    Select { options: Vec<String> },
    /// A value the embedding page sets (a campaign); the visitor does not see it.
    Hidden { max_length: usize },
}

impl FieldKind {
    /// The word the configuration uses for the kind.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Select { .. } => "select",
            Self::Hidden { .. } => "hidden",
        }
    }
}

/// One declared field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    pub name: FieldName,
    /// What the form's label says; for a hidden field, what the privacy and preference pages
    /// call it.
    pub label: String,
    pub kind: FieldKind,
    pub required: bool,
}

/// Why a visitor's value for a field was refused; it never repeats the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    #[error("is required")]
    Missing,
    #[error("is too long")]
    TooLong,
    #[error("holds a control character")]
    ControlCharacter,
    /// U+FFFD: bytes that were not UTF-8, or (from a JSON body) a number, object or array
    /// where text belongs.
    #[error("is not text")]
    NotText,
    #[error("is not one of its options")]
    NotAnOption,
}

/// A refused field: its name and why. This is what `invalid_field` names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field {name} {problem}")]
pub struct InvalidField {
    pub name: String,
    /// Where the field is in the slice of specs that was checked.
    pub index: usize,
    pub problem: FieldProblem,
}

impl FieldSpec {
    /// The kept value of `raw` (what the visitor sent, if anything), `None` for no value.
    pub fn accept(&self, raw: Option<&str>) -> Result<Option<String>, FieldProblem> {
        let value = raw.map(str::trim).filter(|value| !value.is_empty());
        let Some(value) = value else {
            return if self.required { Err(FieldProblem::Missing) } else { Ok(None) };
        };
        match &self.kind {
            FieldKind::Text { max_length } | FieldKind::Hidden { max_length } => {
                if value.chars().count() > *max_length {
                    Err(FieldProblem::TooLong)
                } else if value.chars().any(char::is_control) {
                    Err(FieldProblem::ControlCharacter)
                } else if value.contains(char::REPLACEMENT_CHARACTER) {
                    Err(FieldProblem::NotText)
                } else {
                    Ok(Some(value.to_owned()))
                }
            }
            FieldKind::Select { options } => {
                if options.iter().any(|option| option == value) {
                    Ok(Some(value.to_owned()))
                } else {
                    Err(FieldProblem::NotAnOption)
                }
            }
        }
    }
}

/// The kept values of one signup for one list, in the order the list declares its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldValues(Vec<(String, String)>);

impl FieldValues {
    /// Checks what a signup sent (`sent(name)`) against every field of `specs`. The first
    /// refused field, in declared order, is the error.
    pub fn collect<'a>(specs: &[FieldSpec], sent: impl Fn(&str) -> Option<&'a str>) -> Result<Self, InvalidField> {
        let mut values = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            match spec.accept(sent(spec.name.as_ref())) {
                Ok(Some(value)) => values.push((spec.name.as_ref().to_owned(), value)),
                Ok(None) => {}
                Err(problem) => return Err(InvalidField { name: spec.name.as_ref().to_owned(), index, problem }),
            }
        }
        Ok(Self(values))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// The stored form: a JSON object, or `None` when no value was kept.
    pub fn to_column(&self) -> Option<String> {
        (!self.is_empty()).then(|| serde_json::to_string(self).unwrap_or_default())
    }

    /// The values of a stored column, in its order. A column this program did not write (not
    /// an object of strings) reads as no values rather than failing a page.
    pub fn from_column(column: Option<&str>) -> Self {
        column.and_then(|column| serde_json::from_str(column).ok()).unwrap_or_default()
    }

    /// The values as `signupd lookup` and the admin page show them, in declared order:
    /// `first_name: Ann, topic: rust`; `None` when no value was kept (each writes its own dash).
    pub fn listed(&self) -> Option<String> {
        (!self.is_empty())
            .then(|| self.iter().map(|(name, value)| format!("{name}: {value}")).collect::<Vec<_>>().join(", "))
    }

    /// The values as a JSON object (for export, lookup, the webhook payload and destinations).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.0.iter().map(|(name, value)| (name.clone(), serde_json::Value::String(value.clone()))).collect()
    }
}

impl serde::Serialize for FieldValues {
    /// A JSON object in declared order (a `serde_json::Map` would sort it).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for FieldValues {
    /// A JSON object of strings, in its order; values that are not strings are left out.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = FieldValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of field values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<FieldValues, A::Error> {
                let mut values = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    if let serde_json::Value::String(value) = value {
                        values.push((name, value));
                    }
                }
                Ok(FieldValues(values))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str, max_length: usize, required: bool) -> FieldSpec {
        FieldSpec {
            name: FieldName::parse(name).unwrap(),
            label: name.to_owned(),
            kind: FieldKind::Text { max_length },
            required,
        }
    }

    fn topic() -> FieldSpec {
        FieldSpec {
            name: FieldName::parse("topic").unwrap(),
            label: "Topic".to_owned(),
            kind: FieldKind::Select { options: vec!["rust".to_owned(), "go".to_owned()] },
            required: false,
        }
    }

    #[test]
    fn names_follow_the_pattern_and_leave_the_forms_own_names_alone() {
        for good in ["a", "first_name", "x9", &"a".repeat(32)] {
            assert!(FieldName::parse(good).is_ok(), "{good}");
        }
        for bad in ["", "9a", "_a", "First", "first-name", "fïrst", &"a".repeat(33), "email", "consent", "website"] {
            assert!(FieldName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_text_value_is_trimmed_bounded_in_characters_and_free_of_control_characters() {
        let spec = text("first_name", 5, false);
        assert_eq!(spec.accept(Some("  Ann ")), Ok(Some("Ann".to_owned())));
        assert_eq!(spec.accept(Some("Zoë ü")), Ok(Some("Zoë ü".to_owned())), "characters, not bytes");
        assert_eq!(spec.accept(Some("Annabel")), Err(FieldProblem::TooLong));
        assert_eq!(spec.accept(Some("A\nB")), Err(FieldProblem::ControlCharacter));
        assert_eq!(spec.accept(Some("\u{FFFD}12")), Err(FieldProblem::NotText), "a JSON number");
        assert_eq!(spec.accept(Some("   ")), Ok(None), "blank is no value");
        assert_eq!(spec.accept(None), Ok(None));
        assert_eq!(text("first_name", 5, true).accept(Some(" ")), Err(FieldProblem::Missing));
    }

    #[test]
    fn a_select_value_is_exactly_one_of_its_options() {
        assert_eq!(topic().accept(Some("go")), Ok(Some("go".to_owned())));
        assert_eq!(topic().accept(Some("Go")), Err(FieldProblem::NotAnOption));
        assert_eq!(topic().accept(Some("python")), Err(FieldProblem::NotAnOption));
    }

    #[test]
    fn collect_keeps_declared_order_names_the_first_refused_field_and_round_trips_the_column() {
        let specs = [topic(), text("first_name", 10, true)];
        let sent = |name: &str| match name {
            "topic" => Some("rust"),
            "first_name" => Some("Ann"),
            _ => None,
        };
        let values = FieldValues::collect(&specs, sent).unwrap();
        assert_eq!(values.to_column().as_deref(), Some(r#"{"topic":"rust","first_name":"Ann"}"#));
        assert_eq!(FieldValues::from_column(values.to_column().as_deref()), values);

        let missing = FieldValues::collect(&specs, |name| (name == "topic").then_some("go")).unwrap_err();
        assert_eq!((missing.name.as_str(), missing.problem), ("first_name", FieldProblem::Missing));
        let both = FieldValues::collect(&specs, |name| (name == "topic").then_some("perl")).unwrap_err();
        assert_eq!((both.name.as_str(), both.problem), ("topic", FieldProblem::NotAnOption), "declared order");
        assert!(!both.to_string().contains("perl"), "the error never repeats the value");

        assert_eq!(FieldValues::collect(&[], sent).unwrap().to_column(), None);
        assert!(FieldValues::from_column(Some("[1]")).is_empty());
        assert!(FieldValues::from_column(None).is_empty());
    }
}
