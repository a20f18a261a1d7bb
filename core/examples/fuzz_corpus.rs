//! Write the seed corpus of every fuzz target to `fuzz/corpus/<target>/` from `../shared/data`
//! (the real files are never copied into the repository; the corpus folder is ignored by git).
//!
//! ```sh
//! cargo run -p mien-core --features fuzz --example fuzz_corpus
//! ```
fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shared = root.join("../shared/data");
    let dir = root.join("fuzz/corpus");
    match mien_core::fuzz::write_corpus(&dir, &shared) {
        Ok(n) => println!("{n} seeds written under {}", dir.display()),
        Err(e) => {
            eprintln!("fuzz_corpus: {e}");
            std::process::exit(1);
        }
    }
}
