//! glTF 2.0 import (filled by the glTF work).
