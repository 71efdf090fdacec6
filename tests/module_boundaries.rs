//! The module boundaries of ARCHITECTURE.md, enforced: `remoting` and `store` never import
//! `broker`; `store` never imports `remoting` or `tokio::net`; `remoting` never imports `store`;
//! `common` imports no other module; `unsafe` appears only under `store/mapped_file/`.

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

/// Lines of `module` that mention one of `forbidden`, ignoring comments.
fn violations(module: &str, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(&src(module)) {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for f in forbidden {
                if code.contains(f) {
                    found.push(format!("{}:{}: uses {f}", file.display(), n + 1));
                }
            }
        }
    }
    found
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
fn namesrv_does_not_reach_into_the_store() {
    let v = violations("namesrv", &["crate::store"]);
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn unsafe_only_in_store_mapped_file() {
    let mut v = Vec::new();
    for module in ["remoting", "store", "broker", "namesrv", "common", "bin"] {
        for line in violations(module, &["unsafe "]) {
            if !line.contains("store/mapped_file/") {
                v.push(line);
            }
        }
    }
    assert!(v.is_empty(), "{v:#?}");
}
