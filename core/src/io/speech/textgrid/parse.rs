//! The TextGrid syntax: Praat's text tokenizer and the tier structure (see [`super`] for the
//! format). Source: Praat `sys/abcio.cpp` (`getInteger`, `getReal`, `getString`: labels such as
//! `xmin =` and `[1]:` are skipped while looking for the next value) and `TextGrid.cpp` (the
//! order of the values).

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

    /// Items of `shape` (`true` = a number, `false` = a string) that follow here, one after the
    /// other: what a tier holds beyond its header's count (a tier header starts with a string, so
    /// it is never taken for an interval or a point).
    fn extra_items(&self, shape: &[bool]) -> usize {
        let mut n = 0;
        let mut pos = self.pos;
        while pos + shape.len() <= self.toks.len()
            && shape.iter().enumerate().all(|(k, &num)| {
                matches!(
                    (&self.toks[pos + k].tok, num),
                    (Tok::Num(_), true) | (Tok::Str(_), false)
                )
            })
        {
            n += 1;
            pos += shape.len();
        }
        n
    }

    /// Refuse a tier whose header counts `k` items of `shape` when more follow: the count's line
    /// and both counts named.
    fn check_count(&self, what: &str, size_line: usize, k: usize, shape: &[bool]) -> Result<()> {
        let extra = self.extra_items(shape);
        if extra == 0 {
            return Ok(());
        }
        Err(self.bad(
            what,
            size_line,
            format!(
                "says {k} but {} follow (item {} starts at line {}); correct the count",
                k + extra,
                k + 1,
                self.line()
            ),
        ))
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
/// number, a count larger than the rest of the file can hold, a tier holding more intervals or
/// points than its `size` says (the count's line, both counts and where the first extra item
/// starts), data after the last tier the header counts, an unknown tier class.
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
                let size_line = c.line();
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
                c.check_count(&at("intervals: size"), size_line, k, &[true, true, false])?;
                TierItems::Intervals(v)
            }
            "TextTier" => {
                let size_line = c.line();
                let k = c.count(&at("points: size"), 2)?;
                let mut v = Vec::with_capacity(k);
                for j in 0..k {
                    let w = |f: &str| at(&format!("points [{}] {f}", j + 1));
                    let time = c.num(&w("number"))?;
                    let (mark, _) = c.string(&w("mark"))?;
                    v.push(Point { time, mark });
                }
                c.check_count(&at("points: size"), size_line, k, &[true, false])?;
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
    if c.pos < toks.len() {
        let line = c.line();
        return Err(c.bad(
            "size",
            line,
            format!(
                "the header counts {n} tier(s), but more data follows the last of them; correct the count"
            ),
        ));
    }
    Ok(TextGrid { xmin, xmax, tiers })
}
