//! Architecture guards for the store: no imports of broker/remoting/namesrv/tokio::net, `unsafe`
//! only under `store/mapped_file/`, `MessageStore` is `Send + Sync`; and decoders never panic on
//! arbitrary bytes.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn store_imports_stay_inside_the_boundary() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store"),
        &mut files,
    );
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for banned in [
            "crate::broker",
            "crate::remoting",
            "crate::namesrv",
            "tokio::net",
        ] {
            assert!(!text.contains(banned), "{} imports {banned}", f.display());
        }
        let in_mapped = f.components().any(|c| c.as_os_str() == "mapped_file");
        if !in_mapped {
            assert!(
                !text.contains("unsafe "),
                "{} uses unsafe outside store/mapped_file",
                f.display()
            );
        }
    }
}

#[test]
fn message_store_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<rmqd::store::MessageStore>();
}

/// xorshift for reproducible garbage.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn decoders_never_panic_on_garbage() {
    use rmqd::store::commitlog::record;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut buf = vec![0u8; 512];
    for round in 0..20_000 {
        let len = (rng(&mut seed) % 512) as usize;
        for b in buf.iter_mut().take(len) {
            *b = rng(&mut seed) as u8;
        }
        // Make the header plausible half of the time so deeper fields get exercised.
        if round % 2 == 0 && len >= 8 {
            buf[..4].copy_from_slice(&(len as i32).to_be_bytes());
            let magic = if round % 4 == 0 {
                record::MAGIC_V1
            } else {
                record::MAGIC_V2
            };
            buf[4..8].copy_from_slice(&magic.to_be_bytes());
        }
        let s = &buf[..len];
        let _ = record::decode(s, true);
        let _ = rmqd::store::message::decode_batch(s);
        let _ = rmqd::store::consumequeue::CqUnit::decode(s);
        let _ = rmqd::store::index::IndexHeader::decode(s);
        let _ = rmqd::common::fastjson::normalize(&String::from_utf8_lossy(s));
    }
}
