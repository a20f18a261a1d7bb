//! Standard 3D Gaussian Splatting PLY writer and reader (filled by the output work).
