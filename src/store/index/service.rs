//! `IndexService`: owns the index files; the dispatch thread adds keys, queries walk the chains.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{key_hash, tag_hash, IndexFile};
use crate::store::checkpoint::StoreCheckpoint;
use crate::store::commitlog::record::RecordView;
use crate::store::error::{Result, StoreError};
use crate::store::message::sysflag;
use crate::store::paths;
use crate::store::service::FailureLatch;
use crate::store::util::{find_property, now_ms};

/// What a query looks up: keys (`UNIQ_KEY` and KEYS words, Java's `K`/`U` index types) or the
/// tags entry of Java 5.5 (`T`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Key,
    Tag,
}

/// All index files, oldest first.
pub struct IndexService {
    dir: PathBuf,
    slots: usize,
    entries: usize,
    files: Mutex<Vec<IndexFile>>,
    checkpoint: Arc<StoreCheckpoint>,
    /// Also index TAGS as `topic#T#tags` (`rmqdIndexTags`, Java 5.5's index).
    index_tags: bool,
    /// Whether indexing fails (the disk refuses a new file or its space), logged when that
    /// starts and ends.
    pub(crate) failing: FailureLatch,
}

/// What loading found.
pub struct IndexLoad {
    pub service: IndexService,
    /// Commit-log offset from which the index must be rebuilt (begin of a deleted file).
    pub rebuild_from: Option<i64>,
}

impl IndexService {
    /// Loads index files sorted by name. After an abnormal stop, files whose endTimestamp is past
    /// the checkpoint's indexMsgTimestamp are deleted (Java) and reported for rebuild.
    pub fn load(
        dir: &Path,
        slots: usize,
        entries: usize,
        abnormal: bool,
        checkpoint: Arc<StoreCheckpoint>,
    ) -> Result<IndexLoad> {
        let mut names = Vec::new();
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd {
                let e = e.map_err(|err| StoreError::io(dir, err))?;
                let name = e.file_name().to_string_lossy().into_owned();
                if name.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty() {
                    names.push(name);
                } else {
                    tracing::warn!(file = %name, "skipping non-numeric file in index/");
                }
            }
        }
        names.sort();
        let ckpt_ts = checkpoint.values()[2];
        let mut files = Vec::new();
        let mut rebuild_from: Option<i64> = None;
        for name in names {
            let path = dir.join(&name);
            // a kill between creating a file and sizing it leaves it empty: it holds nothing
            // (Java maps it to full size and loads an empty header)
            if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
                tracing::warn!(file = %path.display(), "deleting zero-length index file");
                std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
                continue;
            }
            let f = IndexFile::load(&path, slots, entries)?;
            if abnormal && f.header.end_timestamp > ckpt_ts {
                tracing::info!(file = %path.display(), "abnormal stop: deleting index file newer than the checkpoint");
                let from = f.header.begin_phy_offset;
                rebuild_from = Some(rebuild_from.map_or(from, |r| r.min(from)));
                drop(f);
                std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
                continue;
            }
            files.push(f);
        }
        Ok(IndexLoad {
            service: IndexService {
                dir: dir.to_path_buf(),
                slots,
                entries,
                files: Mutex::new(files),
                checkpoint,
                index_tags: false,
                failing: FailureLatch::default(),
            },
            rebuild_from,
        })
    }

    /// End offset of what the newest file covers (-1 if none).
    pub fn end_phy_offset(&self) -> i64 {
        let files = self.files.lock();
        files.last().map(|f| f.header.end_phy_offset).unwrap_or(-1)
    }

    /// Also indexes each record's TAGS as `topic#T#tags` after its keys, as Java 5.5 does.
    pub fn with_index_tags(mut self, on: bool) -> Self {
        self.index_tags = on;
        self
    }

    /// Adds the keys of one dispatched record (`topic#UNIQ_KEY`, `topic#k` per KEYS word, and
    /// with `index_tags` `topic#T#tags`, in Java 5.5's order).
    /// Without `may_create_file`, creates and flushes nothing: `false` (and nothing added) when
    /// the keys do not all fit the newest file.
    pub fn build_index(
        &self,
        rec: &RecordView<'_>,
        phy: i64,
        may_create_file: bool,
    ) -> Result<bool> {
        if rec.tran_type() == sysflag::TRANSACTION_ROLLBACK_TYPE {
            return Ok(true);
        }
        let mut files = self.files.lock();
        if let Some(last) = files.last() {
            if last.header.index_count > 1 && phy <= last.header.end_phy_offset {
                return Ok(true);
            }
        }
        let uniq = find_property(rec.properties, "UNIQ_KEY");
        let keys = find_property(rec.properties, "KEYS");
        let words = || {
            keys.into_iter()
                .flat_map(|k| k.split(|&b| b == b' '))
                .filter(|k| !k.is_empty())
        };
        let tags =
            find_property(rec.properties, "TAGS").filter(|t| self.index_tags && !t.is_empty());
        if uniq.is_none() && keys.is_none() && tags.is_none() {
            return Ok(true);
        }
        let keys = usize::from(uniq.is_some()) + words().count() + usize::from(tags.is_some());
        if !may_create_file {
            let free = files.last().map_or(0, |f| {
                self.entries
                    .saturating_sub(f.header.index_count.max(0) as usize)
            });
            // a put's own thread neither creates nor allocates: the dispatch thread will
            if keys > free || !files.last().is_some_and(|f| f.has_reserved(keys)) {
                return Ok(false);
            }
        } else if let Some(last) = files.last_mut().filter(|f| !f.is_full()) {
            // all of this record's keys or none: a full disk fails here, before any is written
            last.reserve_entries(keys)?;
        }
        let hashes = uniq
            .into_iter()
            .chain(words())
            .map(|key| key_hash(rec.topic, key))
            .chain(tags.map(|t| tag_hash(rec.topic, t)));
        for hash in hashes {
            self.put_one(&mut files, hash, phy, rec.store_timestamp)?;
        }
        Ok(true)
    }

    fn put_one(&self, files: &mut Vec<IndexFile>, hash: i32, phy: i64, ts: i64) -> Result<()> {
        for _ in 0..3 {
            let need_new = files.last().is_none_or(|f| f.is_full());
            if need_new {
                let prev = files
                    .last()
                    .map(|f| (f.header.end_phy_offset, f.header.end_timestamp));
                if let Some(full) = files.last() {
                    full.flush()?;
                    let end_ts = full.header.end_timestamp;
                    self.checkpoint
                        .index_msg_timestamp
                        .store(end_ts, std::sync::atomic::Ordering::Release);
                    self.checkpoint.flush()?;
                }
                std::fs::create_dir_all(&self.dir).map_err(|e| StoreError::io(&self.dir, e))?;
                let mut name_ms = now_ms();
                let mut path = self.dir.join(paths::index_file_name(name_ms));
                while path.exists() {
                    name_ms += 1;
                    path = self.dir.join(paths::index_file_name(name_ms));
                }
                files.push(IndexFile::create(&path, self.slots, self.entries, prev)?);
            }
            if let Some(f) = files.last_mut() {
                if f.put_key(hash, phy, ts)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Offsets of messages indexed under `topic#key` (or `topic#T#key` for a tag) in
    /// [begin, end], newest file first, at most `max` (deduplicated; callers still check the
    /// record's key).
    pub fn query(
        &self,
        kind: IndexKind,
        topic: &str,
        key: &str,
        max: usize,
        begin: i64,
        end: i64,
    ) -> Vec<i64> {
        let hash = match kind {
            IndexKind::Key => key_hash(topic.as_bytes(), key.as_bytes()),
            IndexKind::Tag => tag_hash(topic.as_bytes(), key.as_bytes()),
        };
        let files = self.files.lock();
        let mut out = Vec::new();
        for f in files.iter().rev() {
            let h = &f.header;
            if h.index_count > 1 && h.begin_timestamp <= end && h.end_timestamp >= begin {
                f.select(hash, max, begin, end, &mut out);
            }
            if h.begin_timestamp < begin || out.len() >= max {
                break;
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|o| seen.insert(*o));
        out
    }

    /// Flushes every file; returns the newest end timestamp covered.
    pub fn flush(&self) -> Result<i64> {
        let files = self.files.lock();
        for f in files.iter() {
            f.flush()?;
        }
        Ok(files.last().map(|f| f.header.end_timestamp).unwrap_or(0))
    }

    /// Deletes files (never the last) whose endPhyOffset is below the commit log's min offset.
    pub fn delete_expired(&self, commit_log_min: i64) -> Result<usize> {
        let mut files = self.files.lock();
        let mut n = 0;
        while files.len() > 1 && files[0].header.end_phy_offset < commit_log_min {
            let f = files.remove(0);
            let path = f.path().to_path_buf();
            drop(f);
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
            n += 1;
        }
        Ok(n)
    }

    /// Recovery after the commit log was cut at `end`: deletes the newest files holding entries at
    /// or past `end` (index entries cannot be removed one by one) and returns the commit-log
    /// offset from which they must be rebuilt.
    pub fn drop_files_past(&self, end: i64) -> Result<Option<i64>> {
        let mut files = self.files.lock();
        let mut rebuild_from = None;
        while let Some(last) = files.last() {
            if last.header.end_phy_offset < end {
                break;
            }
            let f = files.pop().expect("checked above");
            let path = f.path().to_path_buf();
            let begin = f.header.begin_phy_offset;
            drop(f);
            tracing::info!(file = %path.display(), end, "index file points past the recovered end; rebuilding it");
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
            rebuild_from = Some(begin);
        }
        Ok(rebuild_from)
    }

    /// Deletes every index file.
    pub fn destroy(&self) -> Result<()> {
        let mut files = self.files.lock();
        for f in files.drain(..) {
            let path = f.path().to_path_buf();
            drop(f);
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        }
        Ok(())
    }

    /// Number of index files.
    pub fn file_count(&self) -> usize {
        self.files.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::commitlog::record::{self, Decoded, RecordHeader};

    fn record(props: &str) -> Vec<u8> {
        let host: std::net::SocketAddr = "127.0.0.1:10911".parse().unwrap();
        let h = RecordHeader {
            queue_id: 0,
            flag: 0,
            sys_flag: 0,
            born_timestamp: 1,
            born_host: &host,
            store_host: &host,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        };
        let mut buf = Vec::new();
        record::encode_into(&mut buf, &h, b"x", b"T", props.as_bytes(), &[], false).unwrap();
        buf
    }

    /// The inline-dispatch contract: without `may_create_file` nothing is created or flushed;
    /// a record whose keys do not all fit the newest file is refused whole.
    #[test]
    fn without_may_create_file_no_index_file_is_made_and_a_record_is_added_whole_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let ckpt = Arc::new(StoreCheckpoint::open(&dir.path().join("checkpoint")).unwrap());
        let idx = dir.path().join("index");
        let svc = IndexService::load(&idx, 8, 4, false, ckpt).unwrap().service;
        let two_keys = record("UNIQ_KEY\u{1}U1\u{2}KEYS\u{1}a\u{2}");
        let Ok(Decoded::Record(rec)) = record::decode(&two_keys, false) else {
            panic!("record")
        };
        assert!(!svc.build_index(&rec, 100, false).unwrap(), "no file yet");
        assert_eq!(svc.file_count(), 0);
        let no_keys = record("TAGS\u{1}t\u{2}");
        let Ok(Decoded::Record(plain)) = record::decode(&no_keys, false) else {
            panic!("record")
        };
        assert!(
            svc.build_index(&plain, 100, false).unwrap(),
            "nothing to add"
        );
        assert!(svc.build_index(&rec, 100, true).unwrap());
        assert_eq!(svc.file_count(), 1);
        // 4 entries, the first unused, two taken: one left, two needed.
        assert!(!svc.build_index(&rec, 200, false).unwrap());
        assert_eq!(svc.file_count(), 1);
        assert_eq!(
            svc.query(IndexKind::Key, "T", "a", 8, 0, i64::MAX),
            vec![100]
        );
        assert!(svc.build_index(&rec, 200, true).unwrap());
        assert_eq!(svc.file_count(), 2);
    }

    /// `rmqdIndexTags`: the tags entry follows the keys, as Java 5.5 orders them; without it the
    /// file holds the keys only (Java 5.3.3); a tag query finds it by `topic#T#tags`.
    #[test]
    fn tags_are_indexed_after_the_keys_only_when_switched_on() {
        let rec_bytes = record("UNIQ_KEY\u{1}U1\u{2}KEYS\u{1}a b\u{2}TAGS\u{1}t1\u{2}");
        let Ok(Decoded::Record(rec)) = record::decode(&rec_bytes, false) else {
            panic!("record")
        };
        for on in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let ckpt = Arc::new(StoreCheckpoint::open(&dir.path().join("checkpoint")).unwrap());
            let svc = IndexService::load(&dir.path().join("index"), 8, 16, false, ckpt)
                .unwrap()
                .service
                .with_index_tags(on);
            assert!(svc.build_index(&rec, 100, true).unwrap());
            let hashes: Vec<i32> = svc.files.lock()[0].entries().map(|e| e.1).collect();
            let mut want = vec![
                key_hash(b"T", b"U1"),
                key_hash(b"T", b"a"),
                key_hash(b"T", b"b"),
            ];
            if on {
                want.push(key_hash(b"T", b"T#t1"));
            }
            assert_eq!(hashes, want, "index_tags {on}");
            let by_tag = svc.query(IndexKind::Tag, "T", "t1", 8, 0, i64::MAX);
            assert_eq!(by_tag, if on { vec![100] } else { vec![] });
            assert_eq!(
                svc.query(IndexKind::Key, "T", "b", 8, 0, i64::MAX),
                vec![100]
            );
        }
    }
}
