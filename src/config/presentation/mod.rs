//! How a list's pages and mails look and speak: its language ([`catalogue`]) and the accent
//! colour's contrast arithmetic ([`color`]). A leaf: the configuration is built from these types,
//! so nothing here knows the configuration. The frame around a page and the stylesheets made
//! from a list's brand are [`crate::web::frame`]'s.

pub mod catalogue;
pub mod color;
pub mod ftl;
pub mod pseudo;

pub use catalogue::{Language, Locales, Messages, Text};
pub use color::Rgb;

/// The page backgrounds of the built-in stylesheet (`static/style.css`), light and dark: the
/// accent's link shades are computed against them.
pub const LIGHT_BACKGROUND: Rgb = color::WHITE;
pub const DARK_BACKGROUND: Rgb = Rgb(0x12, 0x12, 0x12);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backgrounds_the_shades_are_computed_against_are_the_stylesheets() {
        let stylesheet = include_str!("../../../static/style.css");
        for background in [LIGHT_BACKGROUND, DARK_BACKGROUND] {
            assert!(stylesheet.contains(&format!("--bg: {background};")), "style.css has no --bg: {background}");
        }
    }
}
