//! [`Array`]: a Rust-owned, read-only, C-contiguous array exported through the buffer protocol
//! (PEP 3118; in the limited API from Python 3.11), so `numpy.asarray` views it without a copy.

use std::ffi::{CStr, c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;

/// The element storage.
enum Data {
    F32(Vec<f32>),
    F32x3(Vec<[f32; 3]>),
    F32x4(Vec<[f32; 4]>),
    U32(Vec<u32>),
    U32x3(Vec<[u32; 3]>),
    U8(Vec<u8>),
}

/// A read-only n-dimensional array owned by Rust (float32, uint32 or uint8). `numpy.asarray(a)`
/// views its memory without copying; the view keeps it alive. Write access is refused: take
/// `numpy.array(a)` (a copy) to modify it.
#[pyclass(frozen, module = "mien")]
pub struct Array {
    data: Data,
    shape: Vec<isize>,
    strides: Vec<isize>,
}

impl Array {
    fn new(data: Data, shape: &[usize]) -> Array {
        let item = if matches!(data, Data::U8(_)) { 1 } else { 4 };
        let mut strides = vec![0isize; shape.len()];
        let mut s = item;
        for (k, n) in shape.iter().enumerate().rev() {
            strides[k] = s;
            s *= *n as isize;
        }
        Array {
            data,
            shape: shape.iter().map(|n| *n as isize).collect(),
            strides,
        }
    }

    /// float32 `data` of `shape` (its product must be `data.len()`).
    pub fn f32(data: Vec<f32>, shape: &[usize]) -> Array {
        debug_assert_eq!(data.len(), shape.iter().product::<usize>());
        Array::new(Data::F32(data), shape)
    }

    /// float32 rows `(n,3)` (no copy).
    pub fn f32x3(data: Vec<[f32; 3]>) -> Array {
        let n = data.len();
        Array::new(Data::F32x3(data), &[n, 3])
    }

    /// float32 rows `(n,4)` (no copy).
    pub fn f32x4(data: Vec<[f32; 4]>) -> Array {
        let n = data.len();
        Array::new(Data::F32x4(data), &[n, 4])
    }

    /// uint32 rows `(n,3)` (no copy).
    pub fn u32x3(data: Vec<[u32; 3]>) -> Array {
        let n = data.len();
        Array::new(Data::U32x3(data), &[n, 3])
    }

    /// uint32 `data` of `shape`.
    pub fn u32(data: Vec<u32>, shape: &[usize]) -> Array {
        debug_assert_eq!(data.len(), shape.iter().product::<usize>());
        Array::new(Data::U32(data), shape)
    }

    /// uint8 `data` of `shape`.
    pub fn u8(data: Vec<u8>, shape: &[usize]) -> Array {
        debug_assert_eq!(data.len(), shape.iter().product::<usize>());
        Array::new(Data::U8(data), shape)
    }

    /// `numpy.asarray(self)`: a NumPy array over this memory (no copy).
    pub fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let obj = Bound::new(py, self)?;
        py.import("numpy")?.call_method1("asarray", (obj,))
    }

    fn raw(&self) -> (*const c_void, usize, &'static CStr, isize) {
        match &self.data {
            Data::F32(v) => (v.as_ptr().cast(), v.len() * 4, c"f", 4),
            Data::F32x3(v) => (v.as_ptr().cast(), v.len() * 12, c"f", 4),
            Data::F32x4(v) => (v.as_ptr().cast(), v.len() * 16, c"f", 4),
            Data::U32x3(v) => (v.as_ptr().cast(), v.len() * 12, c"I", 4),
            Data::U32(v) => (v.as_ptr().cast(), v.len() * 4, c"I", 4),
            Data::U8(v) => (v.as_ptr().cast(), v.len(), c"B", 1),
        }
    }
}

#[pymethods]
impl Array {
    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<isize> {
        self.shape.clone()
    }

    /// # Safety
    /// Called by CPython with a valid `view`; the exported pointers stay valid while `view.obj`
    /// holds this (frozen, never mutated) object.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        if (flags & ffi::PyBUF_WRITABLE) == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err(
                "a mien array is read-only: copy it (numpy.array(a)) to write",
            ));
        }
        let a = slf.get();
        let (ptr, len, format, item) = a.raw();
        // SAFETY: `view` is non-null and CPython's to fill; every pointer stored points into
        // `a`, which `view.obj` (a new strong reference) keeps alive and unchanged.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = ptr as *mut c_void;
            (*view).len = len as isize;
            (*view).readonly = 1;
            (*view).itemsize = item;
            (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
                format.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = a.shape.len() as c_int;
            (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
                a.shape.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
                a.strides.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    /// # Safety
    /// Nothing was allocated for the view.
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}

    fn __len__(&self) -> usize {
        self.shape.first().copied().unwrap_or(0) as usize
    }
}
