//! CPU splat rasteriser for PNG previews (filled by the output work).
