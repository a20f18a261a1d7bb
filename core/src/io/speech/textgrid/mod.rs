//! Praat TextGrid (Montreal Forced Aligner output) → phoneme segments.
//!
//! **Syntax.** Both text formats Praat writes are read by one tokenizer that follows Praat's own
//! text reader (`abcio.cpp`, `getInteger` / `getReal` / `getString`): it sees only numbers, strings
//! in double quotes (`""` is a quote inside a string) and `<flags>`; any other word — `xmin`, `=`,
//! `item`, `[1]:`, `intervals:`, `tiers?` — is skipped, and `!` starts a comment to the end of
//! the line. So the long format (`xmin = 0`, `intervals [1]:`) and the short format (bare values)
//! give the same token stream: header strings `"ooTextFile"` (or `"ooTextFile short"`) and
//! `"TextGrid"`, grid `xmin xmax`, `<exists>` (or `<absent>`: no tiers), the tier count, then per
//! tier its class (`"IntervalTier"` or `"TextTier"`), name, `xmin xmax`, count and, per interval,
//! `xmin xmax "text"` (per point of a `TextTier`, `time "mark"`). Binary TextGrids
//! (`ooBinaryFile`) are refused; UTF-16 files are decoded by [`crate::io::speech::decode_text`].
//!
//! **Phones.** The phone tier is the interval tier named `phones` (case-insensitive; MFA's
//! multi-speaker `<speaker> - phones` too), else the **second interval tier** (MFA writes words
//! then phones). A grid without either is refused, naming its tiers. Labels: empty, `sil`, `sp`,
//! `spn` → `SIL` ([`crate::io::speech::phones::SILENCE_LABELS`]); otherwise the tier is read in one alphabet:
//! ARPABET (stress digit stripped, case folded — both reported) when every label is ARPABET and
//! ASCII, else IPA through [`crate::io::speech::phones::IPA_ARPABET`] (reported). Unknown symbols are refused, each
//! named with its count and first interval. Times are seconds; the duration is the grid's `xmax`.

mod parse;

use std::collections::HashMap;

pub use parse::{Interval, Point, TextGrid, Tier, TierItems, parse_textgrid};

use super::phones::{arpabet, ipa_to_arpabet, is_silence_label};
use super::report::{Conversion, ConversionReport, PhoneSet};
use super::{SpeechFile, SpeechFormat, SpeechSegment, Unit, label_of};
use crate::error::{Error, Result};

/// Most problems one grid lists before summarising the rest.
const MAX_LISTED: usize = 50;

/// Read a TextGrid's phone tier as phoneme segments (see the module docs). `file` names it in
/// errors; its stem is the label.
///
/// # Errors
/// [`parse_textgrid`]'s; [`Error::Format`] for a grid with no phone tier (naming the tiers), a
/// negative or backwards interval, intervals out of order or overlapping, an interval past the
/// grid's end, every unknown phone symbol (one error each, with its count and first interval),
/// or no intervals at all; then [`SpeechFile::new`]'s checks.
pub fn read_textgrid_str(text: &str, file: &str) -> Result<SpeechFile> {
    let grid = parse_textgrid(text, file)?;
    speech_from_textgrid(&grid, file)
}

/// The phone tier of a parsed grid as a [`SpeechFile`] (as [`read_textgrid_str`]).
///
/// # Errors
/// As [`read_textgrid_str`] after parsing.
pub fn speech_from_textgrid(grid: &TextGrid, file: &str) -> Result<SpeechFile> {
    let interval_tiers: Vec<(&Tier, &Vec<Interval>)> = grid
        .tiers
        .iter()
        .filter_map(|t| match &t.items {
            TierItems::Intervals(v) => Some((t, v)),
            TierItems::Points(_) => None,
        })
        .collect();
    let is_phones = |n: &str| {
        let n = n.trim().to_ascii_lowercase();
        n == "phones" || n.ends_with(" - phones")
    };
    let Some(&(tier, intervals)) = interval_tiers
        .iter()
        .find(|(t, _)| is_phones(&t.name))
        .or_else(|| interval_tiers.get(1))
    else {
        let names: Vec<String> = grid
            .tiers
            .iter()
            .map(|t| format!("\"{}\"", t.name))
            .collect();
        return Err(Error::format(
            file,
            "tiers",
            format!(
                "no phone tier: none is named \"phones\" and there is no second interval tier (tiers: [{}]); a words-only TextGrid has no phone timing",
                names.join(", ")
            ),
        ));
    };
    let mut report = ConversionReport::new(Some(SpeechFormat::TextGrid), file);
    report.tier = Some(tier.name.clone());
    report.input_items = intervals.len();
    let field = format!("tier \"{}\" intervals", tier.name);
    let speech: Vec<&Interval> = intervals
        .iter()
        .filter(|iv| !is_silence_label(&iv.text))
        .collect();
    let non_ascii = speech.iter().any(|iv| !iv.text.is_ascii());
    let arpa_bad = speech
        .iter()
        .filter(|iv| arpabet(&iv.text).is_none())
        .count();
    let ipa_bad = speech
        .iter()
        .filter(|iv| ipa_to_arpabet(&iv.text).is_none())
        .count();
    let set = if !non_ascii && arpa_bad == 0 {
        PhoneSet::Arpabet
    } else if ipa_bad == 0 || non_ascii || ipa_bad < arpa_bad {
        PhoneSet::Ipa
    } else {
        PhoneSet::Arpabet
    };
    report.phone_set = Some(set);
    // Distinct unknown labels: (label, count, first interval number, line), found by hash.
    let mut unknown: Vec<(String, usize, usize, usize)> = Vec::new();
    let mut unknown_at: HashMap<&str, usize> = HashMap::new();
    let mut problems = Vec::new();
    let mut segments = Vec::with_capacity(intervals.len());
    let mut prev_end = f64::NEG_INFINITY;
    for (i, iv) in intervals.iter().enumerate() {
        let bad =
            |r: String| Error::format_at(file, format!("{field} (line {})", iv.line), i + 1, r);
        if iv.xmin < 0.0 {
            problems.push(bad(format!("starts at {} s, before time zero", iv.xmin)));
            continue;
        }
        if iv.xmax < iv.xmin {
            problems.push(bad(format!(
                "ends at {} s before it starts at {} s",
                iv.xmax, iv.xmin
            )));
            continue;
        }
        if iv.xmin < prev_end {
            problems.push(bad(format!(
                "starts at {} s, before the previous interval ends at {prev_end} s",
                iv.xmin
            )));
        }
        if iv.xmax > grid.xmax {
            problems.push(bad(format!(
                "ends at {} s, after the grid's xmax {} s",
                iv.xmax, grid.xmax
            )));
        }
        prev_end = prev_end.max(iv.xmax);
        let unit = if is_silence_label(&iv.text) {
            if iv.text.trim() != "SIL" {
                report.note(Conversion::SilenceMarked, || {
                    format!("\"{}\" → SIL", iv.text)
                });
            }
            "SIL"
        } else {
            let mapped = match set {
                PhoneSet::Arpabet => arpabet(&iv.text).map(|a| {
                    if a.stress {
                        report.note(Conversion::StressStripped, || {
                            format!("{} → {}", iv.text.trim(), a.phoneme)
                        });
                    }
                    if a.upper_cased {
                        report.note(Conversion::UpperCased, || {
                            format!("{} → {}", iv.text.trim(), a.phoneme)
                        });
                    }
                    a.phoneme
                }),
                PhoneSet::Ipa => ipa_to_arpabet(&iv.text).inspect(|p| {
                    report.note(Conversion::IpaMapped, || {
                        format!("{} → {p}", iv.text.trim())
                    });
                }),
            };
            match mapped {
                Some(p) => p,
                None => {
                    match unknown_at.get(iv.text.as_str()) {
                        Some(&k) => unknown[k].1 += 1,
                        None => {
                            unknown_at.insert(&iv.text, unknown.len());
                            unknown.push((iv.text.clone(), 1, i + 1, iv.line));
                        }
                    }
                    continue;
                }
            }
        };
        if iv.xmax == iv.xmin {
            report.note(Conversion::ZeroLengthSkipped, || {
                format!("\"{}\" at {} s (interval {})", iv.text, iv.xmin, i + 1)
            });
            continue;
        }
        segments.push(SpeechSegment {
            start: iv.xmin,
            end: iv.xmax,
            unit: Unit::Phoneme(unit.to_owned()),
        });
    }
    let alphabet = match set {
        PhoneSet::Arpabet => "ARPABET",
        PhoneSet::Ipa => "IPA (see phones::IPA_ARPABET)",
    };
    let unlisted = unknown.len().saturating_sub(MAX_LISTED);
    for (label, count, first, line) in unknown.into_iter().take(MAX_LISTED) {
        problems.push(Error::format_at(
            file,
            field.clone(),
            first,
            format!(
                "unknown {alphabet} phone symbol \"{}\" ({count}×; first at this interval number, line {line})",
                label.escape_debug()
            ),
        ));
    }
    if unlisted > 0 {
        problems.push(Error::format(
            file,
            field.clone(),
            format!("… and {unlisted} more unknown phone symbols"),
        ));
    }
    if problems.len() > MAX_LISTED + 1 {
        let more = problems.len() - MAX_LISTED;
        problems.truncate(MAX_LISTED);
        problems.push(Error::format(
            file,
            field.clone(),
            format!("… and {more} more problems"),
        ));
    }
    Error::collect(problems)?;
    if segments.is_empty() {
        return Err(Error::format(
            file,
            field,
            "the phone tier holds no timed phones",
        ));
    }
    SpeechFile::with_report(&label_of(file), grid.xmax, segments, report)
}
