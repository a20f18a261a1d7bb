//! The built-in default character and performance (filled by the sample work).
