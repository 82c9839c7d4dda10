//! A signup's `[[lists.fields]]`: checking what a signup sent against each named list's fields
//! (`POST /api/signup`), and the hosted form's view of them.
//!
//! With several lists, each list checks the values against its own fields and keeps only
//! those: one value sent as `topic` serves every list that declares a `topic`. The hosted form
//! shows each name once, as the first offered list that declares it describes it; a list that
//! declares the same name differently still checks the value by its own rule, and an error
//! names the field by that list's label.
//!
//! On the hosted form a hidden field's value comes from the page's query string
//! (`/signup?list=news&campaign=spring`), so a link can carry a campaign to the form; what was
//! typed is shown again after an error, with the field that failed marked `aria-invalid` and
//! described by the error message.

use crate::config::ListConfig;
use crate::config::presentation::Messages;
use crate::domain::{FieldKind, FieldProblem, FieldSpec, FieldValues};

/// The fields `lists` declare, each name once, in the order the lists declare them.
pub fn declared<'a>(lists: &[&'a ListConfig]) -> Vec<&'a FieldSpec> {
    let mut specs: Vec<&FieldSpec> = Vec::new();
    for spec in lists.iter().flat_map(|list| &list.fields) {
        if !specs.iter().any(|seen| seen.name == spec.name) {
            specs.push(spec);
        }
    }
    specs
}

/// A field a signup got wrong: the list's own description of it, and why.
#[derive(Debug, Clone, Copy)]
pub struct Refused<'a> {
    pub spec: &'a FieldSpec,
    pub problem: FieldProblem,
}

impl Refused<'_> {
    /// The message for the hosted form, naming the field by its label.
    pub fn message(&self, t: &Messages) -> String {
        let text =
            if self.problem == FieldProblem::Missing { &t.signup.field_missing } else { &t.signup.field_invalid };
        text.with(&self.spec.label)
    }
}

/// Each list's kept values (the stored form, `None` for none), in the order of `lists`; or the
/// first field refused, in list order and then in each list's declared order.
pub fn check<'a, 's>(
    lists: &[&'a ListConfig],
    sent: impl Fn(&str) -> Option<&'s str> + Copy,
) -> Result<Vec<Option<String>>, Refused<'a>> {
    lists
        .iter()
        .map(|list| {
            FieldValues::collect(&list.fields, sent)
                .map(|values| values.to_column())
                .map_err(|invalid| Refused { spec: &list.fields[invalid.index], problem: invalid.problem })
        })
        .collect()
}

/// One field of the hosted form, as the template draws it.
#[derive(Debug)]
pub struct FormField<'a> {
    pub spec: &'a FieldSpec,
    /// What the visitor typed (after an error), or a hidden field's value from the query.
    pub value: String,
    /// The field the error is about.
    pub invalid: bool,
}

impl FormField<'_> {
    /// The control's id (`field-NAME`): a field's name never collides with the form's own ids.
    pub fn id(&self) -> String {
        format!("field-{}", self.spec.name)
    }

    pub fn is_hidden(&self) -> bool {
        matches!(self.spec.kind, FieldKind::Hidden { .. })
    }

    /// A select's options; empty for the other kinds.
    pub fn options(&self) -> &[String] {
        match &self.spec.kind {
            FieldKind::Select { options } => options,
            FieldKind::Text { .. } | FieldKind::Hidden { .. } => &[],
        }
    }

    /// A text field's `maxlength`; `None` for the other kinds.
    pub fn max_length(&self) -> Option<usize> {
        match self.spec.kind {
            FieldKind::Text { max_length } => Some(max_length),
            FieldKind::Select { .. } | FieldKind::Hidden { .. } => None,
        }
    }

    pub fn is_selected(&self, option: &str) -> bool {
        self.value == option
    }
}

/// The hosted form's fields for `lists`, each with the value `value(name)` gives it.
pub fn form_fields<'a>(lists: &[&'a ListConfig], value: impl Fn(&FieldSpec) -> Option<String>) -> Vec<FormField<'a>> {
    declared(lists)
        .into_iter()
        .map(|spec| FormField { spec, value: value(spec).unwrap_or_default(), invalid: false })
        .collect()
}
