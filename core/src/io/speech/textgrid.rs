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
//! (`ooBinaryFile`) are refused; UTF-16 files are decoded by [`super::decode_text`].
//!
//! **Phones.** The phone tier is the interval tier named `phones` (case-insensitive; MFA's
//! multi-speaker `<speaker> - phones` too), else the **second interval tier** (MFA writes words
//! then phones). A grid without either is refused, naming its tiers. Labels: empty, `sil`, `sp`,
//! `spn` → `SIL` ([`super::phones::SILENCE_LABELS`]); otherwise the tier is read in one alphabet:
//! ARPABET (stress digit stripped, case folded — both reported) when every label is ARPABET and
//! ASCII, else IPA through [`super::phones::IPA_ARPABET`] (reported). Unknown symbols are refused, each
//! named with its count and first interval. Times are seconds; the duration is the grid's `xmax`.

use super::phones::{arpabet, ipa_to_arpabet, is_silence_label};
use super::report::{Conversion, ConversionReport, PhoneSet};
use super::{SpeechFile, SpeechFormat, SpeechSegment, Unit, label_of};
use crate::error::{Error, Result};

/// A parsed TextGrid.
#[derive(Clone, Debug, PartialEq)]
pub struct TextGrid {
    /// Start of the grid, seconds.
    pub xmin: f64,
    /// End of the grid, seconds.
    pub xmax: f64,
    /// The tiers in file order.
    pub tiers: Vec<Tier>,
}

/// One tier.
#[derive(Clone, Debug, PartialEq)]
pub struct Tier {
    /// The tier's name (`words`, `phones`).
    pub name: String,
    /// Start, seconds.
    pub xmin: f64,
    /// End, seconds.
    pub xmax: f64,
    /// Intervals or points.
    pub items: TierItems,
}

/// A tier's contents.
#[derive(Clone, Debug, PartialEq)]
pub enum TierItems {
    /// An `IntervalTier`.
    Intervals(Vec<Interval>),
    /// A `TextTier` (points).
    Points(Vec<Point>),
}

/// One labelled interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// Start, seconds.
    pub xmin: f64,
    /// End, seconds.
    pub xmax: f64,
    /// Label.
    pub text: String,
    /// 1-based line of the interval's label in the file.
    pub line: usize,
}

/// One labelled point of a `TextTier`.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Time, seconds.
    pub time: f64,
    /// Label.
    pub mark: String,
}

enum Tok {
    Num(String),
    Str(String),
    Flag(String),
}

struct Token {
    tok: Tok,
    line: usize,
}

/// Praat's text tokenizer (see the module docs).
fn tokenize(text: &str, file: &str) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    let mut it = text.char_indices().peekable();
    let mut line = 1usize;
    let word_end = |c: char| c.is_whitespace();
    while let Some((i, c)) = it.next() {
        if c == '\n' {
            line += 1;
            continue;
        }
        if c.is_whitespace() {
            continue;
        }
        if c == '!' {
            while it.peek().is_some_and(|&(_, c)| c != '\n') {
                it.next();
            }
            continue;
        }
        if c == '"' {
            let start = line;
            let mut s = String::new();
            loop {
                match it.next() {
                    None => {
                        return Err(Error::format(
                            file,
                            format!("string (line {start})"),
                            "a string is not closed (no ending `\"`)",
                        ));
                    }
                    Some((_, '"')) => {
                        if it.peek().is_some_and(|&(_, c)| c == '"') {
                            it.next();
                            s.push('"');
                        } else {
                            break;
                        }
                    }
                    Some((_, c)) => {
                        if c == '\n' {
                            line += 1;
                        }
                        s.push(c);
                    }
                }
            }
            out.push(Token {
                tok: Tok::Str(s),
                line: start,
            });
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some(&(j, d)) = it.peek() {
            if word_end(d) {
                break;
            }
            end = j + d.len_utf8();
            it.next();
        }
        let word = &text[i..end];
        if c == '<' {
            out.push(Token {
                tok: Tok::Flag(word.to_owned()),
                line,
            });
        } else if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' {
            out.push(Token {
                tok: Tok::Num(word.to_owned()),
                line,
            });
        }
        // Any other word is a label Praat skips (`xmin`, `=`, `[1]:`).
    }
    Ok(out)
}

struct Cursor<'a> {
    toks: &'a [Token],
    pos: usize,
    file: &'a str,
}

impl<'a> Cursor<'a> {
    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.line)
    }

    /// An error about `what` at `line`.
    fn bad(&self, what: &str, line: usize, reason: String) -> Error {
        Error::format(self.file, format!("{what} (line {line})"), reason)
    }

    fn next(&mut self, what: &str) -> Result<(&'a Tok, usize)> {
        let toks = self.toks;
        match toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok((&t.tok, t.line))
            }
            None => Err(self.bad(what, self.line(), "the file ends early".into())),
        }
    }

    fn num(&mut self, what: &str) -> Result<f64> {
        let (tok, line) = self.next(what)?;
        let r = match tok {
            Tok::Num(s) => s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or(format!("`{s}` is not a finite number")),
            Tok::Str(s) => Err(format!("found the string \"{s}\" where a number belongs")),
            Tok::Flag(s) => Err(format!("found {s} where a number belongs")),
        };
        r.map_err(|reason| self.bad(what, line, reason))
    }

    fn count(&mut self, what: &str, per_item: usize) -> Result<usize> {
        let (tok, line) = self.next(what)?;
        let n = match tok {
            Tok::Num(s) => s.parse::<usize>().ok(),
            _ => None,
        };
        let left = (self.toks.len() - self.pos) / per_item.max(1);
        match n {
            Some(n) if n <= left => Ok(n),
            Some(n) => Err(self.bad(
                what,
                line,
                format!("claims {n} items but the rest of the file holds at most {left}"),
            )),
            None => Err(self.bad(what, line, "expected a non-negative integer count".into())),
        }
    }

    fn string(&mut self, what: &str) -> Result<(String, usize)> {
        let (tok, line) = self.next(what)?;
        match tok {
            Tok::Str(s) => Ok((s.clone(), line)),
            Tok::Num(s) => Err(self.bad(
                what,
                line,
                format!("found the number {s} where a string belongs"),
            )),
            Tok::Flag(s) => Err(self.bad(what, line, format!("found {s} where a string belongs"))),
        }
    }

    fn flag(&mut self, what: &str) -> Result<String> {
        let (tok, line) = self.next(what)?;
        match tok {
            Tok::Flag(s) => Ok(s.clone()),
            _ => Err(self.bad(what, line, "expected <exists> or <absent>".into())),
        }
    }
}

/// Parse TextGrid text (long or short format) into its tiers. `file` names it in errors.
///
/// # Errors
/// [`Error::Format`] with the 1-based line as the index: a binary TextGrid, a header that is not
/// `ooTextFile` / `TextGrid`, a missing or misplaced value, an unclosed string, a non-finite
/// number, a count larger than the rest of the file can hold, an unknown tier class.
pub fn parse_textgrid(text: &str, file: &str) -> Result<TextGrid> {
    if text
        .trim_start()
        .lines()
        .next()
        .is_some_and(|l| l.contains("ooBinaryFile"))
    {
        return Err(Error::format(
            file,
            "header (line 1)",
            "a binary TextGrid; save it from Praat as a text file",
        ));
    }
    let toks = tokenize(text, file)?;
    let mut c = Cursor {
        toks: &toks,
        pos: 0,
        file,
    };
    let (ft, line) = c.string("header: File type")?;
    if ft != "ooTextFile" && ft != "ooTextFile short" {
        return Err(c.bad(
            "header: File type",
            line,
            format!("\"{ft}\" is not \"ooTextFile\""),
        ));
    }
    let (class, line) = c.string("header: Object class")?;
    if class != "TextGrid" {
        return Err(c.bad(
            "header: Object class",
            line,
            format!("\"{class}\" is not \"TextGrid\""),
        ));
    }
    let xmin = c.num("xmin")?;
    let xmax = c.num("xmax")?;
    let exists = match c.flag("tiers?")?.as_str() {
        "<exists>" => true,
        "<absent>" => false,
        other => {
            let line = c.line();
            return Err(c.bad(
                "tiers?",
                line,
                format!("{other} is neither <exists> nor <absent>"),
            ));
        }
    };
    let n = if exists { c.count("size", 5)? } else { 0 };
    let mut tiers = Vec::with_capacity(n);
    for t in 0..n {
        let at = |f: &str| format!("item [{}] {f}", t + 1);
        let (class, line) = c.string(&at("class"))?;
        let (name, _) = c.string(&at("name"))?;
        let txmin = c.num(&at("xmin"))?;
        let txmax = c.num(&at("xmax"))?;
        let items = match class.as_str() {
            "IntervalTier" => {
                let k = c.count(&at("intervals: size"), 3)?;
                let mut v = Vec::with_capacity(k);
                for j in 0..k {
                    let w = |f: &str| at(&format!("intervals [{}] {f}", j + 1));
                    let a = c.num(&w("xmin"))?;
                    let b = c.num(&w("xmax"))?;
                    let (text, line) = c.string(&w("text"))?;
                    v.push(Interval {
                        xmin: a,
                        xmax: b,
                        text,
                        line,
                    });
                }
                TierItems::Intervals(v)
            }
            "TextTier" => {
                let k = c.count(&at("points: size"), 2)?;
                let mut v = Vec::with_capacity(k);
                for j in 0..k {
                    let w = |f: &str| at(&format!("points [{}] {f}", j + 1));
                    let time = c.num(&w("number"))?;
                    let (mark, _) = c.string(&w("mark"))?;
                    v.push(Point { time, mark });
                }
                TierItems::Points(v)
            }
            other => {
                return Err(c.bad(
                    &at("class"),
                    line,
                    format!("unknown tier class \"{other}\" (IntervalTier or TextTier)"),
                ));
            }
        };
        tiers.push(Tier {
            name,
            xmin: txmin,
            xmax: txmax,
            items,
        });
    }
    Ok(TextGrid { xmin, xmax, tiers })
}

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
    let mut unknown: Vec<(String, usize, usize, usize)> = Vec::new(); // label, count, first index, line
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
                    match unknown.iter_mut().find(|u| u.0 == iv.text) {
                        Some(u) => u.1 += 1,
                        None => unknown.push((iv.text.clone(), 1, i + 1, iv.line)),
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
    for (label, count, first, line) in unknown.into_iter().take(50) {
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
