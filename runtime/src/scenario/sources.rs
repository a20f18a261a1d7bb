//! The inputs a scenario's steps read, resolved for [`super::check`]: drive sources (clips,
//! streams) and utterances (speech files, phoneme lists), and the checks of them that need no
//! character.

use std::path::Path;

use mien_core::anim::{Drive, StreamDrive};
use mien_core::io::livelink_csv::read_livelink_csv;
use mien_core::io::speech::{SpeechFile, SpeechSegment, Unit, read_speech};
use mien_core::rig::{Character, ClipId};

use super::Problem;
use super::check::resolve;
use super::model::{Source, Speech, Step};

/// The checks that need no character: every stream and speech file a step reads, and phoneme
/// lists.
pub(super) fn files_only(steps: &[Step], base: &Path, p: &mut Vec<Problem>) {
    for (i, s) in steps.iter().enumerate() {
        let at = format!("/steps/{i}/{}", s.key());
        match s {
            Step::Animate(Source::Stream(rel)) => {
                if let Err(e) = read_livelink_csv(&resolve(base, rel)) {
                    p.push(Problem::new(format!("{at}/stream"), e.to_string()));
                }
            }
            Step::Say { speech, .. } => {
                utterance(base, speech, i, &at, p);
            }
            _ => {}
        }
    }
}

pub(super) fn drive(
    ch: &Character,
    base: &Path,
    src: &Source,
    at: &str,
    p: &mut Vec<Problem>,
) -> Option<Drive> {
    let clip = |key: &str, p: &mut Vec<Problem>| match ch.find_clip(key) {
        Ok(id) => Some(Drive::Clips(vec![id])),
        Err(e) => {
            p.push(Problem::new(format!("{at}/clip"), e.to_string()));
            None
        }
    };
    match src {
        Source::Rest => Some(Drive::Rest),
        Source::Clip(name) => clip(name, p),
        Source::ClipIndex(k) => {
            if (*k as usize) < ch.clips.len() {
                Some(Drive::Clips(vec![ClipId(*k as u32)]))
            } else {
                clip(&k.to_string(), p)
            }
        }
        Source::Stream(rel) => {
            let path = resolve(base, rel);
            let r = read_livelink_csv(&path).and_then(|s| StreamDrive::new(s, ch));
            match r {
                Ok(s) => Some(Drive::Stream(s)),
                Err(e) => {
                    p.push(Problem::new(format!("{at}/stream"), e.to_string()));
                    None
                }
            }
        }
    }
}

pub(super) fn utterance(
    base: &Path,
    speech: &Speech,
    i: usize,
    at: &str,
    p: &mut Vec<Problem>,
) -> Option<SpeechFile> {
    match speech {
        Speech::File(rel) => match read_speech(&resolve(base, rel), None) {
            Ok((f, _)) => Some(f),
            Err(e) => {
                p.push(Problem::new(format!("{at}/file"), e.to_string()));
                None
            }
        },
        Speech::Phonemes(list) => {
            let label = format!("steps[{i}].say");
            let mut bad = false;
            for (k, (ph, _, _)) in list.iter().enumerate() {
                if let Err(e) = mien_core::speech::viseme::strict_phoneme(ph, &label, "phonemes", k)
                {
                    p.push(Problem::new(format!("{at}/phonemes/{k}/0"), e.to_string()));
                    bad = true;
                }
            }
            if bad {
                return None;
            }
            let end = list.iter().map(|x| x.2).fold(0.0, f64::max);
            let segs = list
                .iter()
                .map(|(ph, s, e)| SpeechSegment {
                    start: *s,
                    end: *e,
                    unit: Unit::Phoneme(ph.clone()),
                })
                .collect();
            match SpeechFile::new(&label, end, segs) {
                Ok(f) => Some(f),
                Err(e) => {
                    p.push(Problem::new(format!("{at}/phonemes"), e.to_string()));
                    None
                }
            }
        }
    }
}
