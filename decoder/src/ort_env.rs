//! Loading ONNX Runtime at run time (`ort`'s `load-dynamic`): the library is found through
//! [`ORT_DYLIB_PATH`] (or given in code), checked before `ort` touches it, and loaded once per
//! process. `ort`'s own implicit loader aborts the process when the library is missing; mien never
//! reaches it, because every session is built from the [`Ort`] this module hands out.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, ORT_DYLIB_PATH, Result};

/// The oldest ONNX Runtime mien accepts: 1.`MIN_MINOR`.0 (the C API version `ort` is built for).
pub const MIN_MINOR: u32 = ort::MINOR_VERSION;

/// ONNX Runtime, loaded: the library's path, its version, and the environment every decoder
/// session is built in. Cheap to clone; one per process.
#[derive(Clone, Debug)]
pub struct Ort {
    inner: Arc<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    path: PathBuf,
    version: String,
    env: ort::environment::Environment,
}

static LOADED: Mutex<Option<Ort>> = Mutex::new(None);

impl Ort {
    /// Load ONNX Runtime from the library [`ORT_DYLIB_PATH`] names (or return the one already
    /// loaded).
    ///
    /// # Errors
    /// [`Error::OrtUnset`] when the variable is unset or empty; [`Error::OrtMissing`] when it
    /// names no file; [`Error::OrtLoad`] when the file is not a loadable ONNX Runtime;
    /// [`Error::OrtVersion`] when it is older than 1.[`MIN_MINOR`]; [`Error::OrtTwice`] when
    /// another library is already loaded.
    pub fn load() -> Result<Ort> {
        let path = match std::env::var_os(ORT_DYLIB_PATH) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => {
                if let Some(o) = LOADED.lock().map_err(|_| poisoned())?.clone() {
                    return Ok(o);
                }
                return Err(Error::OrtUnset {
                    var: ORT_DYLIB_PATH,
                    need: MIN_MINOR,
                });
            }
        };
        Self::load_named(&path, ORT_DYLIB_PATH)
    }

    /// Load ONNX Runtime from `path` (or return the one already loaded from it).
    ///
    /// # Errors
    /// As [`Ort::load`], naming `path`.
    pub fn load_from(path: impl AsRef<Path>) -> Result<Ort> {
        Self::load_named(path.as_ref(), "path")
    }

    fn load_named(path: &Path, var: &'static str) -> Result<Ort> {
        let mut slot = LOADED.lock().map_err(|_| poisoned())?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(o) = slot.as_ref() {
            let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
                (Ok(x), Ok(y)) => x == y,
                _ => a == b,
            };
            if same(&o.inner.path, &abs) {
                return Ok(o.clone());
            }
            return Err(Error::OrtTwice {
                loaded: o.inner.path.clone(),
                asked: abs,
            });
        }
        if abs.is_dir() {
            return Err(Error::OrtLoad {
                var,
                path: abs,
                reason: "a directory, not ONNX Runtime's shared library (libonnxruntime.so)".into(),
            });
        }
        if !abs.is_file() {
            return Err(Error::OrtMissing {
                var,
                path: abs,
                need: MIN_MINOR,
            });
        }
        let builder = ort::init_from(&abs).map_err(|e| load_error(e, var, &abs))?;
        // A library that passes the version check but cannot give its API makes `ort` panic
        // here: caught, and named as the library's fault.
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            builder.with_name("mien").build()
        }));
        let env = match built {
            Ok(r) => r.map_err(|e| Error::Ort(e.to_string()))?,
            Err(p) => {
                let why = p
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "it failed to start".into());
                return Err(Error::OrtLoad {
                    var,
                    path: abs,
                    reason: format!("not a working ONNX Runtime: {why}"),
                });
            }
        };
        let version = build_version(ort::info())
            .or_else(|| file_version(&abs))
            .unwrap_or_else(|| "1.?".into());
        let o = Ort {
            inner: Arc::new(Loaded {
                path: abs,
                version,
                env,
            }),
        };
        *slot = Some(o.clone());
        Ok(o)
    }

    /// The library loaded.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Its version (`1.32.0`), read from its build string.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    pub(crate) fn env(&self) -> &ort::environment::Environment {
        &self.inner.env
    }
}

fn poisoned() -> Error {
    Error::Ort("the loader's lock is poisoned (a thread panicked while loading)".into())
}

/// The version in ONNX Runtime's build string (`git-branch=rel-1.32.0`).
fn build_version(info: &str) -> Option<String> {
    let at = info.find("rel-")? + 4;
    let v: String = info[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (v.matches('.').count() >= 1).then_some(v)
}

/// The version a library's file name carries (`libonnxruntime.so.1.32.0`).
fn file_version(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let at = name.find(".so.")? + 4;
    let v = &name[at..];
    (v.split('.').count() >= 2 && v.split('.').all(|p| p.parse::<u32>().is_ok()))
        .then(|| v.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_from_build_string() {
        assert_eq!(
            super::build_version("ORT Build Info: git-branch=rel-1.32.0, git-commit-id=x")
                .as_deref(),
            Some("1.32.0")
        );
        assert_eq!(
            super::build_version("ORT Build Info: git-branch=main"),
            None
        );
    }
}

/// The ONNX Runtime library the `onnxruntime` wheel of `python3` ships
/// (`site-packages/onnxruntime/capi/libonnxruntime.so.1.x`), when there is one: what a user points
/// [`ORT_DYLIB_PATH`] at, and what mien's tests and benchmarks use when the variable is unset.
/// [`Ort::load`] itself reads only the variable.
pub fn pip_library() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import onnxruntime, pathlib; d = pathlib.Path(onnxruntime.__file__).parent / 'capi'; print(sorted(d.glob('libonnxruntime.so*'))[-1])",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    p.is_file().then_some(p)
}

/// The library `ORT_DYLIB_PATH` names, else [`pip_library`]: what mien's tests, examples and
/// benchmarks load (the library itself, [`Ort::load`], reads only the variable).
pub fn library_path() -> Option<PathBuf> {
    std::env::var_os(ORT_DYLIB_PATH)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(pip_library)
}

/// The error a failed `ort::init_from` becomes.
pub(crate) fn load_error(e: ort::LoadDynamicError, var: &'static str, path: &Path) -> Error {
    match e {
        ort::LoadDynamicError::BadVersion { version_str, .. } => Error::OrtVersion {
            var,
            path: path.to_path_buf(),
            found: version_str,
            need: MIN_MINOR,
        },
        other => Error::OrtLoad {
            var,
            path: path.to_path_buf(),
            reason: other.to_string(),
        },
    }
}

#[cfg(test)]
mod load_error_tests {
    #[test]
    fn too_old_names_the_variable_and_both_versions() {
        let e = super::load_error(
            ort::LoadDynamicError::BadVersion {
                version_str: "1.20.1".into(),
                path: "/x/libonnxruntime.so.1.20.1".into(),
            },
            super::ORT_DYLIB_PATH,
            std::path::Path::new("/x/libonnxruntime.so.1.20.1"),
        );
        let m = e.to_string();
        assert!(matches!(e, crate::Error::OrtVersion { .. }));
        assert!(
            m.contains("ORT_DYLIB_PATH=/x/libonnxruntime.so.1.20.1"),
            "{m}"
        );
        assert!(
            m.contains("1.20.1") && m.contains(&format!("1.{}.0", super::MIN_MINOR)),
            "{m}"
        );
    }
}
