"""Shared fixtures: the real inputs under ../shared/data (MIEN_DATA overrides), and the reference
values the Rust API computed (MIEN_REFERENCE_DIR, written by runtime/tests/python.rs)."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    return Path(os.environ.get("MIEN_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def data() -> Path:
    d = data_dir()
    if not d.is_dir():
        pytest.fail(f"the real inputs are missing: {d} (set MIEN_DATA)")
    return d


@pytest.fixture(scope="session")
def reference() -> Path:
    d = os.environ.get("MIEN_REFERENCE_DIR")
    if not d:
        pytest.skip("MIEN_REFERENCE_DIR is not set: run through `cargo test -p mien-runtime --test python`")
    return Path(d)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
