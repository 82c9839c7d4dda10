//! The pseudo-locale `en-XA`: English with every letter accented and every text 40 % longer,
//! made from `en.ftl` when the catalogues load (no file of its own). A testing aid: a page or
//! mail in `en-XA` that shows plain English has a text that bypasses the catalogue, and a layout
//! that breaks under it will break under German or Finnish too. A list selects it with
//! `language = "en-XA"`.

use std::borrow::Cow;

/// The pseudo-locale's code (the accented English of Android and Chromium).
pub const CODE: &str = "en-XA";

/// How much longer every text gets: 40 %, the growth to expect from English to German.
const GROWTH_PERCENT: usize = 40;

/// Fluent's transform for the pseudo-locale: applied to every text element of every message
/// (never to a variable's value, so a list's name or an address stays as configured).
pub fn transform(text: &str) -> Cow<'_, str> {
    let length = text.chars().count();
    let mut extra = (length * GROWTH_PERCENT).div_ceil(100);
    let mut out = String::with_capacity(text.len() * 2 + extra);
    for c in text.chars() {
        out.push(accented(c));
        // Vowels are stretched ("Séénd"), so words stay words and wrap where they did.
        if extra > 0 && "aeiouAEIOU".contains(c) {
            out.push(accented(c));
            extra -= 1;
        }
    }
    // Text with too few vowels to stretch is padded with a filler word, before the space that
    // separates it from a value after it ("Sign up for ẋ {list}").
    if extra > 0 {
        let trailing = out.len() - out.trim_end().len();
        let space = out.split_off(out.len() - trailing);
        out.push(' ');
        out.extend(std::iter::repeat_n('ẋ', extra.saturating_sub(1).max(1)));
        out.push_str(&space);
    }
    Cow::Owned(out)
}

fn accented(c: char) -> char {
    const PLAIN: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const ACCENTED: &str = "áƀçðéƒĝĥîĵķļɱñóþǫŕšţûṽŵẋýžÁƁÇÐÉƑĜĤÎĴĶĻṀÑÓÞǪŔŠŢÛṼŴẊÝŽ";
    PLAIN.chars().position(|plain| plain == c).and_then(|index| ACCENTED.chars().nth(index)).unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_letter_is_accented_and_the_text_grows_by_forty_percent() {
        for text in ["Sign up", "Please try again in a minute.", "Rhythm", "x", ""] {
            let pseudo = transform(text);
            assert!(!pseudo.chars().any(|c| c.is_ascii_alphabetic()), "{text:?} → {pseudo:?}");
            let grown = pseudo.chars().count();
            let wanted = text.chars().count() * 140 / 100;
            assert!(grown >= wanted, "{text:?} → {pseudo:?}: {grown} chars, wanted at least {wanted}");
        }
        assert_eq!(transform("Sign up"), "Šîîĝñ ûûþ ẋ");
        assert_eq!(transform("Sign up for "), "Šîîĝñ ûûþ ƒóóŕ ẋ ");
    }
}
