//! The repository's documents stand on their own: every relative link in a Markdown file points
//! at a file that exists inside the repository (a link to the team's workspace beside it, or to a
//! file that was renamed, fails here).

use std::path::{Path, PathBuf};

/// Every Markdown file of the repository outside build output and installed packages.
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The targets of `[text](target)` links, without their `#fragment`.
fn link_targets(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')')?];
            Some(target.split('#').next().unwrap_or_default().trim().to_owned())
        })
        .filter(|target| !target.is_empty())
        .collect()
}

#[test]
fn every_relative_link_in_the_documents_points_at_a_file_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.iter().any(|file| file.ends_with("README.md")), "the README is checked");

    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = file.parent().unwrap().join(&target);
            let inside = resolved.canonicalize().is_ok_and(|path| path.starts_with(&root));
            if !inside {
                broken.push(format!("{}: {target}", file.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to files missing or outside the repository: {broken:#?}");
}

#[test]
fn the_link_reader_finds_relative_and_fragment_links() {
    let text = "see [the map](src/lib.rs#layout), [spec](../shared/SPEC.md) and [up](#top)";
    assert_eq!(link_targets(text), ["src/lib.rs", "../shared/SPEC.md"]);
}
