//! The name canonicaliser and binding of stream channels to morph targets (filled by the expression-input work).
