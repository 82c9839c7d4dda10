//! The configuration loader: TOML text to a checked `Config` (`Config::from_toml`, the same
//! defaults and checks as `Config::load` without the environment), then the redacted dump that
//! `signupd config` prints.
#![no_main]

use libfuzzer_sys::fuzz_target;
use signupd::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_toml(text) {
        Ok(config) => {
            let dump = config.to_redacted_toml();
            assert!(!dump.starts_with("# cannot print configuration"), "{dump}");
            for list in &config.lists {
                assert!(config.list(list.id.as_ref()).is_some());
            }
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
});
