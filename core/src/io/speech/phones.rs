//! Phone labels as aligners write them → strict ARPABET: silence labels, stress digits and case
//! (ARPABET), and the IPA table used for Montreal Forced Aligner's IPA phone sets.
//!
//! Sources: the CMUdict ARPABET symbol set ([`PHONEMES`]); Montreal Forced Aligner's phone sets
//! (`english_us_arpa` writes `AH0`-style labels, `english_mfa` / `english_us_mfa` write IPA such
//! as `ɑ`, `aj`, `tʲ`, `ɫ`, `ɚ`, `ɾ`, `ʔ`, `c`, `ɟ`, `ç`, `ɲ`, `ʎ`, `ɱ`, `m̩`); the IPA values of
//! the ARPABET symbols (CMUdict / Wikipedia "ARPABET" table); silence labels of MFA 1.x (`sil`,
//! `sp`, `spn`) and 2.x (empty).

use crate::speech::viseme::PHONEMES;

/// Labels (compared case-insensitively, after trimming) that mark silence: MFA 2 writes an empty
/// label, MFA 1 `sil` (silence), `sp` (short pause) and `spn` (spoken noise: no mouth shape is
/// known, so it is shown as rest).
pub const SILENCE_LABELS: [&str; 4] = ["", "sil", "sp", "spn"];

/// IPA diacritics and suprasegmentals removed before the [`IPA_ARPABET`] lookup: length `ː ˑ`,
/// stress `ˈ ˌ`, syllabic `◌̩ ◌̍`, aspiration `ʰ`, palatalisation `ʲ`, labialisation `ʷ`,
/// velarisation / pharyngealisation `ˠ ˤ`, dental `◌̪`, non-syllabic `◌̯`, nasalisation `◌̃`,
/// voiceless / voiced `◌̥ ◌̬`, unreleased `◌̚`, tie bars `◌͡◌ ◌͜◌`. None of these changes the
/// mouth shape enough to change the viseme.
pub const IPA_MODIFIERS: [char; 19] = [
    'ː', 'ˑ', 'ˈ', 'ˌ', '\u{0329}', '\u{030D}', 'ʰ', 'ʲ', 'ʷ', 'ˠ', 'ˤ', '\u{032A}', '\u{032F}',
    '\u{0303}', '\u{0325}', '\u{032C}', '\u{031A}', '\u{0361}', '\u{035C}',
];

/// IPA symbol (after removing [`IPA_MODIFIERS`]) → ARPABET, table `mien-ipa-arpabet-v1`.
///
/// Vowels follow General American (CMUdict) values; symbols English MFA uses for other accents
/// take the nearest General American phoneme (`ɒ` → `AA`, `ɐ` → `AH`, `ɜ` → `ER`, `əʊ`/`əw` →
/// `OW`, `ʉ` → `UW`). Consonant allophones take their phoneme: flap `ɾ` and glottal stop `ʔ` →
/// `T` (CMUdict writes `T` in *butter*, *button*), dark `ɫ` and palatal `ʎ` → `L`, palatal stops
/// `c ɟ` → `K G`, `ç` → `HH`, `ɲ` → `N`, `ɱ` → `M`, `ʍ` → `W`.
pub const IPA_ARPABET: [(&str, &str); 72] = [
    // Monophthongs.
    ("ɑ", "AA"),
    ("ɒ", "AA"),
    ("a", "AA"),
    ("æ", "AE"),
    ("ʌ", "AH"),
    ("ə", "AH"),
    ("ɐ", "AH"),
    ("ɔ", "AO"),
    ("ɛ", "EH"),
    ("e", "EY"),
    ("ɚ", "ER"),
    ("ɝ", "ER"),
    ("ɜ", "ER"),
    ("ə˞", "ER"),
    ("ɜ˞", "ER"),
    ("ɪ", "IH"),
    ("ᵻ", "IH"),
    ("ɨ", "IH"),
    ("i", "IY"),
    ("o", "OW"),
    ("ʊ", "UH"),
    ("u", "UW"),
    ("ʉ", "UW"),
    // Diphthongs (MFA writes the offglide as j / w; textbooks as ɪ / ʊ).
    ("aʊ", "AW"),
    ("aw", "AW"),
    ("aɪ", "AY"),
    ("aj", "AY"),
    ("eɪ", "EY"),
    ("ej", "EY"),
    ("oʊ", "OW"),
    ("ow", "OW"),
    ("əʊ", "OW"),
    ("əw", "OW"),
    ("ɔɪ", "OY"),
    ("ɔj", "OY"),
    // Consonants.
    ("b", "B"),
    ("tʃ", "CH"),
    ("d", "D"),
    ("ð", "DH"),
    ("f", "F"),
    ("ɡ", "G"),
    ("g", "G"),
    ("ɟ", "G"),
    ("h", "HH"),
    ("ç", "HH"),
    ("dʒ", "JH"),
    ("k", "K"),
    ("c", "K"),
    ("l", "L"),
    ("ɫ", "L"),
    ("ʎ", "L"),
    ("m", "M"),
    ("ɱ", "M"),
    ("n", "N"),
    ("ɲ", "N"),
    ("ŋ", "NG"),
    ("p", "P"),
    ("ɹ", "R"),
    ("r", "R"),
    ("ɻ", "R"),
    ("s", "S"),
    ("ʃ", "SH"),
    ("t", "T"),
    ("ɾ", "T"),
    ("ʔ", "T"),
    ("θ", "TH"),
    ("v", "V"),
    ("w", "W"),
    ("ʍ", "W"),
    ("j", "Y"),
    ("z", "Z"),
    ("ʒ", "ZH"),
];

/// Whether `label` is a silence label ([`SILENCE_LABELS`]).
pub fn is_silence_label(label: &str) -> bool {
    let l = label.trim();
    SILENCE_LABELS.iter().any(|s| l.eq_ignore_ascii_case(s))
}

/// An ARPABET label normalised to a strict phoneme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arpabet {
    /// The strict phoneme (one of [`PHONEMES`], never `SIL`).
    pub phoneme: &'static str,
    /// A stress digit was stripped.
    pub stress: bool,
    /// The label was not upper case.
    pub upper_cased: bool,
}

/// Read an ARPABET label: trimmed, one trailing stress digit `0`/`1`/`2` stripped, upper-cased,
/// then one of the 39 [`PHONEMES`] (not `SIL`: silence is [`is_silence_label`]'s). `None` for
/// anything else.
pub fn arpabet(label: &str) -> Option<Arpabet> {
    let l = label.trim();
    let (base, stress) = match l.strip_suffix(['0', '1', '2']) {
        Some(b) => (b, true),
        None => (l, false),
    };
    if base.is_empty() || !base.is_ascii() {
        return None;
    }
    let upper = base.to_ascii_uppercase();
    let phoneme = PHONEMES
        .iter()
        .copied()
        .find(|p| *p == upper && *p != "SIL")?;
    Some(Arpabet {
        phoneme,
        stress,
        upper_cased: upper != base,
    })
}

/// Map an IPA phone label to ARPABET: trimmed, [`IPA_MODIFIERS`] removed (except that a table
/// entry is first tried as written), then looked up in [`IPA_ARPABET`]. `None` for a symbol the
/// table does not hold.
pub fn ipa_to_arpabet(label: &str) -> Option<&'static str> {
    let l = label.trim();
    let find = |s: &str| IPA_ARPABET.iter().find(|(k, _)| *k == s).map(|(_, v)| *v);
    if let Some(v) = find(l) {
        return Some(v);
    }
    let base: String = l.chars().filter(|c| !IPA_MODIFIERS.contains(c)).collect();
    if base.is_empty() {
        return None;
    }
    find(&base)
}
