//! mien's errors as Python exceptions: one class per kind under `mien.Error`, the message mien's
//! whole chain ([`mien_runtime::Error::chain_text`]: the file, field and index, then every cause).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyList};

create_exception!(mien, Error, PyException, "Every error mien raises.");
create_exception!(
    mien,
    FormatError,
    Error,
    "A file is malformed: `.file`, `.field` and `.index` name where."
);
create_exception!(
    mien,
    LimitError,
    Error,
    "An input exceeds a documented limit (a count, a size); `.limit` and `.found`."
);
create_exception!(
    mien,
    InvalidError,
    Error,
    "An input or argument mien refuses: out of range, binding to nothing, of the wrong kind."
);
/// `mien.IoError`: a file that could not be read or written; a subclass of both `mien.Error` and
/// `OSError` (so `except OSError` catches it too), made at import by `class IoError(Error,
/// OSError)`.
static IO_ERROR: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> = pyo3::sync::PyOnceLock::new();

fn io_error_type(py: Python<'_>) -> Bound<'_, pyo3::types::PyType> {
    IO_ERROR
        .get_or_init(py, || {
            let make = || -> PyResult<Py<pyo3::types::PyType>> {
                let builtins = py.import("builtins")?;
                let ty = builtins.getattr("type")?.call1((
                    "IoError",
                    (
                        py.get_type::<Error>(),
                        py.get_type::<pyo3::exceptions::PyOSError>(),
                    ),
                    [
                        ("__module__", "mien"),
                        (
                            "__doc__",
                            "A file could not be read or written (`.path`); also an OSError.",
                        ),
                    ]
                    .into_py_dict(py)?,
                ))?;
                Ok(ty.cast_into::<pyo3::types::PyType>()?.unbind())
            };
            // The class statement cannot fail for these bases; an OSError-less IoError would do.
            make().unwrap_or_else(|_| py.get_type::<Error>().unbind())
        })
        .bind(py)
        .clone()
}
create_exception!(
    mien,
    BackendError,
    Error,
    "A GPU backend failed, or is not in this build."
);
create_exception!(
    mien,
    PosedError,
    Error,
    "A posed frame broke the rule (finite, within ±10⁶ m): `.frame` and `.time_s`."
);
create_exception!(
    mien,
    ScenarioError,
    Error,
    "An invalid scenario: `.problems`, a list of (JSON pointer, message)."
);

/// The exception class of a core error.
#[allow(clippy::type_complexity)]
fn core_kind<'py>(
    py: Python<'py>,
    e: &mien_core::Error,
) -> (
    Bound<'py, pyo3::types::PyType>,
    Vec<(&'static str, Py<PyAny>)>,
) {
    use mien_core::Error as C;
    let attr = |v: Bound<'_, PyAny>| v.unbind();
    match e {
        C::Format {
            file, field, index, ..
        } => (
            py.get_type::<FormatError>(),
            vec![
                (
                    "file",
                    attr(file.clone().into_pyobject(py).unwrap().into_any()),
                ),
                (
                    "field",
                    attr(field.to_string().into_pyobject(py).unwrap().into_any()),
                ),
                (
                    "index",
                    match index {
                        Some(i) => attr((*i as u64).into_pyobject(py).unwrap().into_any()),
                        None => py.None(),
                    },
                ),
            ],
        ),
        C::Limit { found, limit, .. } => (
            py.get_type::<LimitError>(),
            vec![
                (
                    "found",
                    attr((*found).into_pyobject(py).unwrap().into_any()),
                ),
                (
                    "limit",
                    attr((*limit).into_pyobject(py).unwrap().into_any()),
                ),
            ],
        ),
        C::Io { path, .. } => (
            io_error_type(py),
            vec![(
                "path",
                attr(
                    path.display()
                        .to_string()
                        .into_pyobject(py)
                        .unwrap()
                        .into_any(),
                ),
            )],
        ),
        C::Backend { .. } => (py.get_type::<BackendError>(), vec![]),
        C::Many(v) if !v.is_empty() => core_kind(py, &v[0]),
        _ => (py.get_type::<InvalidError>(), vec![]),
    }
}

/// A runtime error as the Python exception of its kind.
pub fn to_py(e: mien_runtime::Error) -> PyErr {
    use mien_runtime::Error as E;
    Python::attach(|py| {
        let msg = e.chain_text();
        // The innermost runtime error says what kind of failure it was.
        let mut inner = &e;
        while let E::Context { source, .. } = inner {
            inner = source;
        }
        let (ty, attrs): (
            Bound<'_, pyo3::types::PyType>,
            Vec<(&'static str, Py<PyAny>)>,
        ) = match inner {
            E::Core(c) => core_kind(py, c),
            #[cfg(feature = "wgpu")]
            E::Wgpu(_) => (py.get_type::<BackendError>(), vec![]),
            #[cfg(feature = "vulkan")]
            E::Vulkan(_) => (py.get_type::<BackendError>(), vec![]),
            E::NotBuilt { .. } | E::Validation { .. } => (py.get_type::<BackendError>(), vec![]),
            E::Posed { frame, time_s, .. } => (
                py.get_type::<PosedError>(),
                vec![
                    (
                        "frame",
                        frame.into_pyobject(py).unwrap().into_any().unbind(),
                    ),
                    (
                        "time_s",
                        time_s.into_pyobject(py).unwrap().into_any().unbind(),
                    ),
                ],
            ),
            E::Io { path, .. } => (
                io_error_type(py),
                vec![(
                    "path",
                    path.clone().into_pyobject(py).unwrap().into_any().unbind(),
                )],
            ),
            _ => (py.get_type::<InvalidError>(), vec![]),
        };
        match ty.call1((msg,)) {
            Ok(exc) => {
                for (k, v) in attrs {
                    let _ = exc.setattr(k, v);
                }
                PyErr::from_value(exc)
            }
            Err(err) => err,
        }
    })
}

/// An argument the binding itself refuses, as `InvalidError("what: reason")`.
pub fn invalid(what: &str, reason: String) -> PyErr {
    InvalidError::new_err(format!("{what}: {reason}"))
}

/// An invalid scenario as `ScenarioError` with its problems.
pub fn scenario_invalid(
    py: Python<'_>,
    path: &std::path::Path,
    problems: &[mien_runtime::scenario::Problem],
) -> PyErr {
    let msg = mien_runtime::scenario::invalid_text(path, problems);
    let err = ScenarioError::new_err(msg);
    let list: Vec<(String, String)> = problems
        .iter()
        .map(|p| (p.pointer.clone(), p.message.clone()))
        .collect();
    if let Ok(l) = PyList::new(py, list) {
        let _ = err.value(py).setattr("problems", l);
    }
    err
}

/// Add the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("InvalidError", py.get_type::<InvalidError>())?;
    m.add("IoError", io_error_type(py))?;
    m.add("BackendError", py.get_type::<BackendError>())?;
    m.add("PosedError", py.get_type::<PosedError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    Ok(())
}
