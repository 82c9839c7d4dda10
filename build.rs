//! Embeds every catalogue in `locales/` in the binary: writes `catalogues.rs` (into `OUT_DIR`),
//! the `(language code, file text)` list `src/config/presentation/catalogue.rs` includes, English
//! first. A language is added by adding its `.ftl` file; nothing in the code names it.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=locales");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("locales");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "ftl"))
        .map(|path| {
            let code = path.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 file name").to_owned();
            (code, path.display().to_string())
        })
        .collect();
    files.sort_by_key(|(code, _)| (code != "en", code.clone()));
    assert!(files.first().is_some_and(|(code, _)| code == "en"), "locales/en.ftl is the reference and must exist");
    let entries: Vec<String> = files.iter().map(|(code, path)| format!("({code:?}, include_str!({path:?}))")).collect();
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("catalogues.rs");
    std::fs::write(&out, format!("&[{}]\n", entries.join(",\n"))).expect("OUT_DIR is writable");
}
