//! The module boundaries of ARCHITECTURE.md, enforced: `remoting` and `store` never import
//! `broker`; `store` never imports `remoting` or `tokio::net`; `remoting` never imports `store`;
//! `common` imports no other module; `server` knows frames, not the broker, the NameServer or
//! the store; `namesrv` never imports `broker`; `unsafe` appears only under `store/mapped_file/`.
//!
//! A `use` is read whole, so grouped imports (`use crate::{broker::x, remoting};`) and imports
//! split over lines are expanded to full paths before they are checked.
//!
//! And one guard of the fuzzing: every typed header decoder is driven by `fuzz/decoders.rs`.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

fn src(module: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module)
}

/// `text` without `//` comments.
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands a `use` tree (`crate::{a::{b, c}, d}`) into its full paths (`crate::a::b`, ...).
fn expand_use_tree(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = tree[open + 1..]
        .strip_suffix('}')
        .unwrap_or(&tree[open + 1..]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand_use_tree)
        .map(|p| match p.as_str() {
            "self" => prefix.trim_end_matches("::").to_string(),
            _ => format!("{prefix}{p}"),
        })
        .collect()
}

/// Every path a file imports with `use` (grouped imports expanded), and every `crate::` path
/// it names inline.
fn imported_paths(text: &str) -> Vec<String> {
    let code = strip_comments(text);
    let mut paths = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let before_ok = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let tail = &rest[at + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before_ok {
            paths.extend(expand_use_tree(&tail[..end]));
        }
        rest = &tail[end.min(tail.len())..];
    }
    for (i, _) in code.match_indices("crate::") {
        let path: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        paths.push(path);
    }
    paths
}

/// Paths imported by `module` that start with one of `forbidden`, and lines that name one
/// inline, with their file.
fn violations(module: &str, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(&src(module)) {
        let text = fs::read_to_string(&file).unwrap();
        for path in imported_paths(&text) {
            for f in forbidden {
                if path.starts_with(f) {
                    found.push(format!("{}: uses {path}", file.display()));
                }
            }
        }
    }
    for f in forbidden {
        found.extend(lines_with(module, f));
    }
    found
}

/// Lines of `module` that contain `needle` outside comments.
fn lines_with(module: &str, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(&src(module)) {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.split("//").next().unwrap_or("").contains(needle) {
                found.push(format!("{}:{}: {needle}", file.display(), n + 1));
            }
        }
    }
    found
}

#[test]
fn grouped_and_split_imports_are_expanded_to_full_paths() {
    let text = "use crate::{\n    broker::{self, x::Y},\n    remoting, // crate::store\n};\nuse tokio::net::TcpStream;";
    let paths = imported_paths(text);
    for expected in [
        "crate::broker",
        "crate::broker::x::Y",
        "crate::remoting",
        "tokio::net::TcpStream",
    ] {
        assert!(
            paths.iter().any(|p| p == expected),
            "{expected} not in {paths:?}"
        );
    }
    assert!(
        !paths.iter().any(|p| p.contains("store")),
        "a comment counted: {paths:?}"
    );
}

#[test]
fn remoting_imports_neither_store_nor_broker_nor_namesrv() {
    let v = violations(
        "remoting",
        &[
            "crate::store",
            "crate::broker",
            "crate::namesrv",
            "tokio::net",
        ],
    );
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn store_imports_neither_remoting_nor_broker_nor_sockets() {
    let v = violations(
        "store",
        &[
            "crate::remoting",
            "crate::broker",
            "crate::namesrv",
            "tokio::net",
            "std::net::Tcp",
        ],
    );
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn common_imports_no_other_module() {
    let v = violations(
        "common",
        &[
            "crate::remoting",
            "crate::store",
            "crate::broker",
            "crate::namesrv",
        ],
    );
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn namesrv_reaches_neither_the_broker_nor_the_store() {
    let v = violations("namesrv", &["crate::store", "crate::broker"]);
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn server_knows_frames_not_the_broker_the_namesrv_or_the_store() {
    let v = violations(
        "server",
        &["crate::broker", "crate::namesrv", "crate::store"],
    );
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn unsafe_only_in_store_mapped_file() {
    let mut v = Vec::new();
    for module in [
        "remoting", "store", "broker", "namesrv", "common", "server", "bin",
    ] {
        for line in lines_with(module, "unsafe ") {
            if !line.contains("store/mapped_file/") {
                v.push(line);
            }
        }
    }
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn every_command_header_is_fuzzed() {
    // A header type added to `src/` without a line in `decode_all_headers` would leave its
    // decoder unfuzzed. A generic header counts through the aliases that instantiate it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let decoders = fs::read_to_string(root.join("fuzz/decoders.rs")).unwrap();
    let sources: Vec<String> = rust_files(&root.join("src"))
        .iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    let fuzzed = |name: &str| decoders.contains(&format!("{name}::read_from"));
    let mut missing = Vec::new();
    for src in &sources {
        for line in src.lines() {
            let Some(rest) = line.split("CommandHeader for ").nth(1) else {
                continue;
            };
            if !line.trim_start().starts_with("impl") {
                continue;
            }
            let ty = rest.trim_end_matches(['{', ' ']);
            let base = ty.split('<').next().unwrap();
            let aliases: Vec<&str> = sources
                .iter()
                .flat_map(|s| s.lines())
                .filter_map(|l| l.trim().strip_prefix("pub type "))
                .filter(|l| l.contains(&format!("= {base}")))
                .filter_map(|l| l.split_whitespace().next())
                .collect();
            if !fuzzed(base) && !aliases.iter().any(|a| fuzzed(a)) {
                missing.push(ty.to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "headers not read in fuzz/decoders.rs decode_all_headers: {missing:?}"
    );
}
