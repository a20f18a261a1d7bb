//! The animator: expressions, blink, gaze, avatar state and layers (issue 6).
