//! A character file's problems listed flat, each named by its JSON pointer.

use crate::error::Error;

/// The problems `e` reports for the part at JSON pointer `prefix` of character file `file`, one
/// item each, so the file's list is flat: a list of problems ([`mien_core::Error::Many`], or an
/// [`Error::Invalid`] about the part whose reason is `a; b`) gives an item per problem; a problem
/// in a block written inline (`FILE#/cloth`) is named by its pointer in the character file
/// (`/cloth/pin_height`); anything else is one item `prefix: the error's text`, the prefix not
/// repeated.
pub(super) fn problem_items(prefix: &str, file: &str, e: &Error) -> Vec<String> {
    fn core_items(prefix: &str, file: &str, e: &mien_core::Error, out: &mut Vec<String>) {
        match e {
            mien_core::Error::Many(list) => {
                for x in list {
                    core_items(prefix, file, x, out);
                }
            }
            mien_core::Error::Format {
                file: f,
                field,
                index,
                reason,
            } => {
                let at = index.map(|i| format!(" [{i}]")).unwrap_or_default();
                match f.strip_prefix(file).and_then(|r| r.strip_prefix('#')) {
                    // Inline: the block's pointer, then the field's inside it.
                    Some(ptr) => {
                        let field = if field == "/" { "" } else { field.as_str() };
                        out.push(format!("{ptr}{field}{at}: {reason}"));
                    }
                    None => out.push(format!("{prefix}: {f}: {field}{at}: {reason}")),
                }
            }
            // A groom's own pointer (`groom /scalp/cap_min`) under the hair's `groom` key.
            mien_core::Error::Invalid { what, reason } if what.starts_with("groom /") => {
                out.push(format!(
                    "{prefix}/groom{}: {reason}",
                    &what["groom ".len()..]
                ));
            }
            other => {
                let text = other.to_string();
                out.push(if text.starts_with(prefix) {
                    text
                } else {
                    format!("{prefix}: {text}")
                });
            }
        }
    }
    let mut out = Vec::new();
    match e {
        Error::Invalid { what, reason } if what.starts_with(prefix) => {
            for item in reason.split("; ") {
                out.push(if item.starts_with(prefix) {
                    item.to_owned()
                } else {
                    format!("{what}: {item}")
                });
            }
        }
        Error::Core(c) => core_items(prefix, file, c, &mut out),
        other => {
            let text = other.chain_text();
            out.push(if text.starts_with(prefix) {
                text
            } else {
                format!("{prefix}: {text}")
            });
        }
    }
    out
}
