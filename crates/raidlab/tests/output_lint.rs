//! The output invariant, held by a scan of the sources: outside tests, nothing writes to
//! stdout or stderr with the standard library's printing macros, which panic on a closed pipe
//! or a full disk. Standard output goes through `raidlab::stdout`, standard error through
//! `raidlab_engine::ewriteln!`/`ewrite!` (see docs/ARCHITECTURE.md).

use std::path::{Path, PathBuf};

/// The macros that panic when their stream fails.
const BANNED: [&str; 5] = ["println!", "print!", "eprintln!", "eprint!", "dbg!"];

#[test]
fn no_printing_macros_outside_tests() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for c in std::fs::read_dir(&crates).unwrap() {
        let src = c.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, mac) in banned_uses(&text) {
            found.push(format!("{}:{line}: {mac}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "printing macros that panic on a closed pipe (use raidlab::stdout or ewriteln!):\n{}",
        found.join("\n")
    );
}

/// The scan itself: it finds a use in code, and none in comments, strings or test modules.
#[test]
fn the_scan_sees_code_only() {
    let src = r####"
// println!("in a comment")
/* eprintln!("in a block comment { ") */
fn a() { let s = "println!(\"in a string {\")"; let r = r#"dbg!("raw {")"#; let c = ('{', '"', '\''); }
fn b() { ewriteln!("fine"); writeln!(out, "fine").ok(); }
#[cfg(test)]
mod tests {
    fn t() { println!("a test may print {}", '}'); }
}
fn after() { eprint!("caught"); }
"####;
    assert_eq!(banned_uses(src), vec![(10, "eprint!")]);
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The banned macros used in `src` (line, macro), outside comments, string and character
/// literals, and `#[cfg(test)] mod` blocks.
fn banned_uses(src: &str) -> Vec<(usize, &'static str)> {
    let b = src.as_bytes();
    let (mut i, mut line) = (0, 1);
    let mut found = Vec::new();
    // Brace depth, and the depth a test module opened at (skipped until it closes).
    let mut depth = 0usize;
    let mut test_mod: Option<usize> = None;
    let mut pending_test = false;
    while i < b.len() {
        let rest = &src[i..];
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            line += rest[..end].matches('\n').count();
            i += end;
        } else if c == b'r' && (rest.starts_with("r\"") || rest.starts_with("r#")) {
            let hashes = rest[1..].bytes().take_while(|&h| h == b'#').count();
            if rest.as_bytes().get(1 + hashes) != Some(&b'"') {
                i += 1; // (an identifier starting with r)
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            line += rest[..end].matches('\n').count();
            i += end;
        } else if c == b'"' {
            let mut j = 1;
            while j < rest.len() && b[i + j] != b'"' {
                j += if b[i + j] == b'\\' { 2 } else { 1 };
            }
            line += rest[..j.min(rest.len())].matches('\n').count();
            i += j + 1;
        } else if c == b'\'' {
            // A character literal ('{', '"', '\n', 'é'), or a lifetime's quote.
            let mut chars = rest[1..].chars();
            i += match (chars.next(), chars.next()) {
                (Some('\\'), _) => rest[3..].find('\'').map_or(rest.len(), |e| e + 4),
                (Some(ch), Some('\'')) => 2 + ch.len_utf8(),
                _ => 1,
            };
        } else if rest.starts_with("#[cfg(test)]") {
            pending_test = true;
            i += "#[cfg(test)]".len();
        } else if c == b'{' {
            if pending_test && test_mod.is_none() {
                test_mod = Some(depth);
            }
            pending_test = false;
            depth += 1;
            i += 1;
        } else if c == b'}' {
            depth = depth.saturating_sub(1);
            if test_mod == Some(depth) {
                test_mod = None;
            }
            i += 1;
        } else if c == b';' {
            pending_test = false; // (a test-only item with no body)
            i += 1;
        } else {
            let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if test_mod.is_none() && !ident_before {
                if let Some(m) = BANNED.iter().find(|m| rest.starts_with(*m)) {
                    found.push((line, *m));
                }
            }
            i += 1;
        }
    }
    found
}
