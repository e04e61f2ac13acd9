//! How error messages quote input text: whole when short, cut when long.
//!
//! A bad line can be megabytes long (a file without newlines, a binary file
//! given by mistake, a hostile UCI command); echoing it whole in an error or
//! an `info string` floods the terminal or the GUI's log. Every message that
//! quotes input goes through [`excerpt`], which keeps the first
//! [`MAX_EXCERPT_CHARS`] characters and says how long the whole text was.

/// The most characters of input text a message quotes.
pub const MAX_EXCERPT_CHARS: usize = 80;

/// `text` itself when it has at most [`MAX_EXCERPT_CHARS`] characters
/// (counting a control character as wide as its escape), otherwise its
/// beginning followed by `…` and the full length in bytes.
///
/// # Examples
/// ```
/// use engine::chess::excerpt::excerpt;
/// assert_eq!(excerpt("e2e4"), "e2e4");
/// let long = "x".repeat(10_000_000);
/// let cut = excerpt(&long);
/// assert!(cut.len() < 120);
/// assert!(cut.ends_with("… (10000000 bytes)"));
/// ```
pub fn excerpt(text: &str) -> String {
    match cut_point(text) {
        None => text.to_string(),
        Some(end) => format!("{}… ({} bytes)", &text[..end], text.len()),
    }
}

/// Where `text` is cut, if it is too long: after the characters that fit in
/// [`MAX_EXCERPT_CHARS`] as a message shows them (quoted with `{:?}`, a
/// control character takes up to ten).
fn cut_point(text: &str) -> Option<usize> {
    let mut width = 0;
    for (i, c) in text.char_indices() {
        width += c.escape_debug().count();
        if width > MAX_EXCERPT_CHARS {
            return Some(i);
        }
    }
    None
}

/// [`excerpt`] of bytes that may not be UTF-8 (invalid sequences shown as
/// `�`).
pub fn excerpt_bytes(bytes: &[u8]) -> String {
    // Cut first: converting a huge buffer only to drop most of it is waste.
    let head = &bytes[..bytes.len().min(MAX_EXCERPT_CHARS * 4)];
    let text = String::from_utf8_lossy(head);
    match cut_point(&text) {
        None if head.len() == bytes.len() => text.into_owned(),
        None => format!("{text}… ({} bytes)", bytes.len()),
        Some(end) => format!("{}… ({} bytes)", &text[..end], bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_long_text_is_cut_on_a_character() {
        let exact = "é".repeat(MAX_EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact);
        let long = "é".repeat(MAX_EXCERPT_CHARS + 1);
        let cut = excerpt(&long);
        assert!(cut.starts_with(&exact));
        assert!(cut.ends_with(&format!("… ({} bytes)", long.len())));
    }

    #[test]
    fn control_characters_count_as_wide_as_shown() {
        let controls = "\u{3}".repeat(100);
        let cut = excerpt(&controls);
        assert!(format!("{cut:?}").len() < MAX_EXCERPT_CHARS + 30, "{cut:?}");
    }

    #[test]
    fn bytes_are_cut_too() {
        assert_eq!(excerpt_bytes(b"abc\xff"), "abc\u{fffd}");
        let long = vec![0xffu8; 10_000_000];
        let cut = excerpt_bytes(&long);
        assert!(cut.chars().count() < MAX_EXCERPT_CHARS + 30, "{cut}");
        assert!(cut.ends_with("… (10000000 bytes)"));
    }
}
