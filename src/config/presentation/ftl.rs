//! Reading Project Fluent (`.ftl`) files: parsing with `fluent-syntax` (through `fluent-bundle`'s
//! resource), and what the checks of [`super::catalogue`] need to know about a file — its
//! messages, the line each starts on, and the variables each uses — so that every refusal can
//! name the file, the message and the line.

use std::collections::BTreeSet;
use std::fmt;

use fluent_bundle::FluentResource;
use fluent_syntax::ast;

/// One `.ftl` file, parsed.
pub struct Source {
    /// What a problem calls the file: `en.ftl` for a built-in one, the path for the operator's.
    pub name: String,
    pub resource: FluentResource,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Something wrong with a catalogue file, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// 1-based; 0 when the problem is the file as a whole (a missing message).
    pub line: usize,
    /// The message id concerned, if one is.
    pub message: Option<String>,
    pub what: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if self.line > 0 {
            write!(f, " line {}", self.line)?;
        }
        if let Some(message) = &self.message {
            write!(f, ", message {message}")?;
        }
        write!(f, ": {}", self.what)
    }
}

impl Source {
    /// Parses `text`; a syntax error is a problem at its line (every one the parser found).
    pub fn parse(name: &str, text: String) -> Result<Self, Vec<Problem>> {
        match FluentResource::try_new(text) {
            Ok(resource) => Ok(Self { name: name.to_owned(), resource }),
            Err((resource, errors)) => Err(errors
                .iter()
                .map(|error| Problem {
                    file: name.to_owned(),
                    line: line_at(resource.source(), entry_start(resource.source(), error)),
                    message: None,
                    what: format!("does not parse: {error}"),
                })
                .collect()),
        }
    }

    /// The file's messages (not its terms or comments), in order.
    pub fn messages(&self) -> impl Iterator<Item = &ast::Message<&str>> {
        self.resource.entries().filter_map(|entry| match entry {
            ast::Entry::Message(message) => Some(message),
            _ => None,
        })
    }

    /// The line message `id` starts on (1-based), or 0 when the file has no such message.
    pub fn line_of(&self, id: &str) -> usize {
        let lines = self.resource.source().lines();
        lines
            .enumerate()
            .find(|(_, line)| line.strip_prefix(id).is_some_and(|rest| rest.trim_start().starts_with('=')))
            .map_or(0, |(index, _)| index + 1)
    }

    /// A problem with message `id` of this file.
    pub fn problem(&self, id: &str, what: String) -> Problem {
        Problem { file: self.name.clone(), line: self.line_of(id), message: Some(id.to_owned()), what }
    }
}

/// Where the entry the parser gave up on begins (its first non-blank character), or where it
/// gave up when it does not say: an unclosed brace is noticed only where the next entry starts.
fn entry_start(source: &str, error: &fluent_syntax::parser::ParserError) -> usize {
    error.slice.as_ref().and_then(|slice| source.get(slice.clone())).map_or(error.pos.start, |junk| {
        let slice_start = error.slice.as_ref().map_or(0, |slice| slice.start);
        slice_start + junk.len() - junk.trim_start().len()
    })
}

/// The line (1-based) byte `offset` of `source` is on.
fn line_at(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset.min(source.len())].iter().filter(|byte| **byte == b'\n').count() + 1
}

/// Every variable (`$name`, without the `$`) a message's value and attributes use.
pub fn variables<'a>(message: &ast::Message<&'a str>) -> BTreeSet<&'a str> {
    let mut out = BTreeSet::new();
    let patterns = message.value.iter().chain(message.attributes.iter().map(|attribute| &attribute.value));
    for pattern in patterns {
        pattern_variables(pattern, &mut out);
    }
    out
}

fn pattern_variables<'a>(pattern: &ast::Pattern<&'a str>, out: &mut BTreeSet<&'a str>) {
    for element in &pattern.elements {
        if let ast::PatternElement::Placeable { expression } = element {
            expression_variables(expression, out);
        }
    }
}

fn expression_variables<'a>(expression: &ast::Expression<&'a str>, out: &mut BTreeSet<&'a str>) {
    match expression {
        ast::Expression::Select { selector, variants } => {
            inline_variables(selector, out);
            for variant in variants {
                pattern_variables(&variant.value, out);
            }
        }
        ast::Expression::Inline(inline) => inline_variables(inline, out),
    }
}

fn inline_variables<'a>(inline: &ast::InlineExpression<&'a str>, out: &mut BTreeSet<&'a str>) {
    match inline {
        ast::InlineExpression::VariableReference { id } => {
            out.insert(id.name);
        }
        ast::InlineExpression::FunctionReference { arguments, .. }
        | ast::InlineExpression::TermReference { arguments: Some(arguments), .. } => {
            for positional in &arguments.positional {
                inline_variables(positional, out);
            }
            for named in &arguments.named {
                inline_variables(&named.value, out);
            }
        }
        ast::InlineExpression::Placeable { expression } => expression_variables(expression, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_is_named_by_file_and_line() {
        let problems = Source::parse("xx.ftl", "ok = fine\n\nbroken = { $n ]\nlater = also fine\n".into())
            .expect_err("an unclosed placeable does not parse");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, "xx.ftl");
        assert_eq!(problems[0].line, 3, "{}", problems[0]);
        assert!(problems[0].to_string().starts_with("xx.ftl line 3: does not parse"), "{}", problems[0]);
    }

    #[test]
    fn variables_are_found_in_selectors_variants_and_nested_placeables() {
        let source = Source::parse(
            "xx.ftl",
            "a = { $n ->\n    [one] one { $what }\n   *[other] { NUMBER($count) } { { $deep } }\n}\nb = plain\n".into(),
        )
        .unwrap();
        let messages: Vec<_> = source.messages().collect();
        assert_eq!(variables(messages[0]).into_iter().collect::<Vec<_>>(), ["count", "deep", "n", "what"]);
        assert!(variables(messages[1]).is_empty());
        assert_eq!(source.line_of("b"), 5);
        assert_eq!(source.line_of("nope"), 0);
    }
}
