//! Live Link Face CSV reader (filled by the expression-input work).
