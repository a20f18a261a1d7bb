//! Write the seed corpus of every fuzz target to `fuzz/corpus/<target>/` from `../shared/data`
//! (the real files are never copied into the repository; the corpus folder is ignored).
fn main() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = here.join("../../shared/data");
    match mien_core::fuzz::write_corpus(&here.join("corpus"), &shared) {
        Ok(n) => println!("{n} seeds written under {}", here.join("corpus").display()),
        Err(e) => {
            eprintln!("seed-corpus: {e}");
            std::process::exit(1);
        }
    }
}
