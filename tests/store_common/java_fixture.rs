//! The Java-written store fixtures (scripts/store-fixtures): unpacking the gzip-per-file copies
//! and reading their commit log back as the ground truth the corrupted twins are judged against.

use std::io::Read;
use std::path::{Path, PathBuf};

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::util::props_iter;
use rmqd::store::MessageStoreConfig;

pub const CLEAN: &str = "tests/fixtures/java-store-clean";
pub const KILLED: &str = "tests/fixtures/java-store-killed";

/// Unpacks the gzip-per-file fixture `fixture` (repo-relative) into `dst` and returns its store
/// config (broker.conf keys, paths pointing at `dst`); None when the fixture was not generated.
pub fn unpack_from(fixture: &str, dst: &Path) -> Option<MessageStoreConfig> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let manifest = std::fs::read_to_string(src.join("manifest.txt")).ok()?;
    for line in manifest.lines() {
        let (path, size) = line.rsplit_once(' ').unwrap();
        let mut data = Vec::new();
        let gz = std::fs::File::open(src.join(format!("{path}.gz"))).unwrap();
        flate2::read::GzDecoder::new(gz)
            .read_to_end(&mut data)
            .unwrap();
        assert_eq!(data.len(), size.parse::<usize>().unwrap(), "{path}");
        let out = dst.join(path);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(out, data).unwrap();
    }
    Some(fixture_config(fixture, dst))
}

/// The fixture's broker.conf applied to a store rooted at `root`.
pub fn fixture_config(fixture: &str, root: &Path) -> MessageStoreConfig {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let mut cfg = MessageStoreConfig::with_root(root);
    for line in std::fs::read_to_string(src.join("broker.conf"))
        .unwrap()
        .lines()
    {
        if let Some((k, v)) = line.split_once('=') {
            if !k.starts_with('#') && !k.starts_with("storePath") {
                cfg.set(k.trim(), v).unwrap();
            }
        }
    }
    cfg
}

/// One record of a fixture's commit log, owned.
#[derive(Debug, Clone)]
pub struct FixtureRecord {
    pub phys: i64,
    /// The whole record as stored.
    pub bytes: Vec<u8>,
    pub topic: String,
    pub queue_id: i32,
    pub queue_offset: i64,
    pub store_timestamp: i64,
    /// Index keys as Java dispatch derives them: the (last) UNIQ_KEY and every KEYS word.
    pub keys: Vec<String>,
}

/// Every valid record of the commit log under `root` in offset order, following blank records
/// into the next file; `file_size` = mappedFileSizeCommitLog.
pub fn read_records(root: &Path, file_size: usize) -> Vec<FixtureRecord> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(root.join("commitlog"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let from: i64 = path.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), file_size, "{}", path.display());
        let mut pos = 0;
        while let Ok(Decoded::Record(r)) = record::decode(&data[pos..], true) {
            out.push(FixtureRecord {
                phys: from + pos as i64,
                bytes: data[pos..pos + r.total_size as usize].to_vec(),
                topic: r.topic_str().to_string(),
                queue_id: r.queue_id,
                queue_offset: r.queue_offset,
                store_timestamp: r.store_timestamp,
                keys: index_keys(r.properties),
            });
            pos += r.total_size as usize;
        }
    }
    out
}

/// The keys Java's index dispatcher adds for a properties blob.
pub fn index_keys(props: &[u8]) -> Vec<String> {
    let s = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let mut keys: Vec<String> = props_iter(props)
        .filter(|(k, _)| *k == b"UNIQ_KEY")
        .map(|(_, v)| s(v))
        .last()
        .into_iter()
        .collect();
    if let Some((_, v)) = props_iter(props).filter(|(k, _)| *k == b"KEYS").last() {
        keys.extend(v.split(|&b| b == b' ').filter(|w| !w.is_empty()).map(s));
    }
    keys
}
