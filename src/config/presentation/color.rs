//! A list's accent colour, and the WCAG 2 contrast arithmetic that keeps it readable.
//!
//! signupd never refuses an accent colour for its contrast. For any colour, black or white text
//! on it reaches at least 4.58:1 (the two ratios multiply to 21), so the button text is whichever
//! of the two contrasts more. Links and focus rings sit on the page background, where a brand
//! colour may be too light (yellow on white) or too dark (navy on black): for each theme the
//! colour is mixed towards black or white in small steps until it reaches 4.5:1 against that
//! theme's background, and the button keeps the exact brand colour.

use std::fmt;

/// An sRGB colour from `#rrggbb` or `#rgb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// WCAG AA for normal text.
pub const AA: f64 = 4.5;

pub const BLACK: Rgb = Rgb(0, 0, 0);
pub const WHITE: Rgb = Rgb(255, 255, 255);

impl Rgb {
    /// `#rrggbb` or `#rgb`, any case.
    pub fn parse(value: &str) -> Result<Self, String> {
        let invalid = || format!("{value:?} is not a colour like \"#0b5fff\" or \"#05f\"");
        let hex =
            value.strip_prefix('#').filter(|hex| hex.chars().all(|c| c.is_ascii_hexdigit())).ok_or_else(invalid)?;
        let channel = |text: &str| u8::from_str_radix(text, 16).map_err(|_| invalid());
        match hex.len() {
            6 => Ok(Self(channel(&hex[0..2])?, channel(&hex[2..4])?, channel(&hex[4..6])?)),
            3 => {
                let double = |i: usize| channel(&hex[i..=i].repeat(2));
                Ok(Self(double(0)?, double(1)?, double(2)?))
            }
            _ => Err(invalid()),
        }
    }

    /// WCAG 2 relative luminance.
    pub fn luminance(self) -> f64 {
        let linear = |channel: u8| {
            let c = f64::from(channel) / 255.0;
            if c <= 0.039_28 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
        };
        0.2126 * linear(self.0) + 0.7152 * linear(self.1) + 0.0722 * linear(self.2)
    }

    /// WCAG 2 contrast ratio, 1 to 21.
    pub fn contrast(self, other: Self) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }

    /// Black or white, whichever reads better on this colour (always ≥ 4.58:1).
    pub fn text_on(self) -> Self {
        if self.contrast(BLACK) >= self.contrast(WHITE) { BLACK } else { WHITE }
    }

    /// This colour mixed towards black or white (whichever the background is further from) in
    /// 5 % steps until it contrasts at least `ratio` with `background`.
    pub fn readable_on(self, background: Self, ratio: f64) -> Self {
        let towards = background.text_on();
        (0..=20)
            .map(|step| self.mix(towards, f64::from(step) / 20.0))
            .find(|candidate| candidate.contrast(background) >= ratio)
            .unwrap_or(towards)
    }

    fn mix(self, other: Self, amount: f64) -> Self {
        let blend = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * amount).round() as u8;
        Self(blend(self.0, other.0), blend(self.1, other.1), blend(self.2, other.2))
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_long_and_short_hex_and_refuses_the_rest() {
        assert_eq!(Rgb::parse("#0B5FFF").unwrap(), Rgb(0x0b, 0x5f, 0xff));
        assert_eq!(Rgb::parse("#05f").unwrap(), Rgb(0x00, 0x55, 0xff));
        for bad in ["0b5fff", "#0b5ff", "#gggggg", "blue", "", "#", "rgb(0,0,0)", "#0b5fff00", "#+1+2+3"] {
            assert!(Rgb::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(Rgb::parse("#0b5fff").unwrap().to_string(), "#0b5fff");
    }

    #[test]
    fn contrast_matches_the_wcag_reference_values() {
        assert!((BLACK.contrast(WHITE) - 21.0).abs() < 1e-9);
        assert!((Rgb(0x76, 0x76, 0x76).contrast(WHITE) - 4.54).abs() < 0.01);
        assert!((WHITE.contrast(WHITE) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn every_colour_gets_readable_text_and_readable_link_shades() {
        let backgrounds = [WHITE, Rgb(0x12, 0x12, 0x12)];
        for r in (0..=255).step_by(17) {
            for g in (0..=255).step_by(17) {
                for b in (0..=255).step_by(17) {
                    let accent = Rgb(r, g, b);
                    assert!(accent.contrast(accent.text_on()) >= AA, "{accent} text");
                    for background in backgrounds {
                        assert!(
                            accent.readable_on(background, AA).contrast(background) >= AA,
                            "{accent} on {background}"
                        );
                    }
                }
            }
        }
        // A colour that already passes is kept as it is.
        assert_eq!(Rgb(0x0b, 0x1f, 0x5c).readable_on(WHITE, AA), Rgb(0x0b, 0x1f, 0x5c));
    }
}
