//! Atomic file writes (temp file in the target folder, then rename).
