//! Visemes, ARPABET phonemes and the versioned phoneme → viseme table.
//!
//! Visemes are the 15 of the Oculus / Meta OVR Lip Sync set (DESIGN.md "Speech"). Phonemes are
//! upper-case unstressed ARPABET (the 39 CMUdict symbols) plus `SIL`. Source: seed 002 (diphthongs
//! hold one shape; `HH` takes an open vowel shape and makes no pause) and seed 003 (the ARPABET
//! default map to the 15 visemes).

use crate::error::{Error, Result};

/// The 15 visemes, in the order of [`VISEME_NAMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Viseme {
    /// Silence / rest.
    Sil = 0,
    /// p, b, m.
    PP,
    /// f, v.
    FF,
    /// th (thin, then).
    TH,
    /// t, d.
    DD,
    /// k, g, ng.
    KK,
    /// ch, j, sh, zh.
    CH,
    /// s, z.
    SS,
    /// n, l.
    NN,
    /// r.
    RR,
    /// a (car).
    AA,
    /// e (bed).
    E,
    /// i (tip).
    IH,
    /// o (toe).
    OH,
    /// u (book).
    OU,
}

/// Number of visemes.
pub const VISEME_COUNT: usize = 15;

/// Viseme names as the Oculus set spells them, in [`Viseme`] order.
pub const VISEME_NAMES: [&str; VISEME_COUNT] = [
    "sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou",
];

/// Every viseme in order.
pub const VISEMES: [Viseme; VISEME_COUNT] = [
    Viseme::Sil,
    Viseme::PP,
    Viseme::FF,
    Viseme::TH,
    Viseme::DD,
    Viseme::KK,
    Viseme::CH,
    Viseme::SS,
    Viseme::NN,
    Viseme::RR,
    Viseme::AA,
    Viseme::E,
    Viseme::IH,
    Viseme::OH,
    Viseme::OU,
];

impl Viseme {
    /// The Oculus name (`"kk"`, `"aa"`).
    pub fn name(self) -> &'static str {
        VISEME_NAMES[self as usize]
    }

    /// Parse an exact Oculus name (`"kk"`, `"PP"`, `"sil"`); `None` otherwise.
    pub fn from_name(s: &str) -> Option<Self> {
        VISEME_NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| VISEMES[i])
    }

    /// Index in [`VISEMES`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The 39 ARPABET phonemes (CMUdict) plus silence.
pub const PHONEMES: [&str; 40] = [
    "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH",
    "IH", "IY", "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH",
    "UW", "V", "W", "Y", "Z", "ZH", "SIL",
];

/// The revision of [`phoneme_viseme`]'s table; recorded with anything baked from it.
pub const MAPPING_REVISION: &str = "mien-arpabet-viseme-v1";

/// The viseme a phoneme shows. Table `mien-arpabet-viseme-v1`:
///
/// | viseme | phonemes |
/// |---|---|
/// | sil | SIL |
/// | PP | P B M |
/// | FF | F V |
/// | TH | TH DH |
/// | DD | T D |
/// | kk | K G NG |
/// | CH | CH JH SH ZH |
/// | SS | S Z |
/// | nn | N L |
/// | RR | R ER |
/// | aa | AA AE AH AW AY HH |
/// | E | EH EY |
/// | ih | IH IY Y |
/// | oh | AO OW OY |
/// | ou | UH UW W |
///
/// Diphthongs (AW AY EY OW OY) hold one shape — their onset; supply separate timed visemes to split
/// one. `HH` takes the open `aa` shape and makes no pause (seed 002).
///
/// Returns `None` for anything but an upper-case unstressed ARPABET symbol or `SIL`.
pub fn phoneme_viseme(p: &str) -> Option<Viseme> {
    use Viseme::*;
    Some(match p {
        "SIL" => Sil,
        "P" | "B" | "M" => PP,
        "F" | "V" => FF,
        "TH" | "DH" => TH,
        "T" | "D" => DD,
        "K" | "G" | "NG" => KK,
        "CH" | "JH" | "SH" | "ZH" => CH,
        "S" | "Z" => SS,
        "N" | "L" => NN,
        "R" | "ER" => RR,
        "AA" | "AE" | "AH" | "AW" | "AY" | "HH" => AA,
        "EH" | "EY" => E,
        "IH" | "IY" | "Y" => IH,
        "AO" | "OW" | "OY" => OH,
        "UH" | "UW" | "W" => OU,
        _ => return None,
    })
}

/// Strip an ARPABET stress digit (`AH0` → `AH`) and upper-case: the documented conversion readers
/// apply to aligner output before the strict API sees it.
pub fn strip_stress(p: &str) -> String {
    p.trim()
        .trim_end_matches(['0', '1', '2'])
        .to_ascii_uppercase()
}

/// The viseme of a strict phoneme label, or an error naming `field` and `index`.
///
/// # Errors
/// [`Error::Format`] for a stress digit (`AH0`: the strict API refuses it; readers strip stress),
/// lower case, or an unknown symbol.
pub fn strict_phoneme(label: &str, file: &str, field: &str, index: usize) -> Result<Viseme> {
    if let Some(v) = phoneme_viseme(label) {
        return Ok(v);
    }
    let reason =
        if label.ends_with(['0', '1', '2']) && phoneme_viseme(&strip_stress(label)).is_some() {
            format!(
                "`{label}` carries a stress digit; the strict API takes unstressed ARPABET (`{}`)",
                strip_stress(label)
            )
        } else if phoneme_viseme(&label.to_ascii_uppercase()).is_some() {
            format!("`{label}` is not upper case")
        } else {
            format!("`{label}` is not an ARPABET phoneme or SIL")
        };
    Err(Error::format_at(file, field, index, reason))
}
