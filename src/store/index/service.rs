//! `IndexService`: owns the index files; the dispatch thread adds keys, queries walk the chains.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{key_hash, IndexFile};
use crate::store::checkpoint::StoreCheckpoint;
use crate::store::commitlog::record::RecordView;
use crate::store::error::{Result, StoreError};
use crate::store::message::sysflag;
use crate::store::paths;
use crate::store::util::{find_property, now_ms};

/// All index files, oldest first.
pub struct IndexService {
    dir: PathBuf,
    slots: usize,
    entries: usize,
    files: Mutex<Vec<IndexFile>>,
    checkpoint: Arc<StoreCheckpoint>,
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
            },
            rebuild_from,
        })
    }

    /// End offset of what the newest file covers (-1 if none).
    pub fn end_phy_offset(&self) -> i64 {
        let files = self.files.lock();
        files.last().map(|f| f.header.end_phy_offset).unwrap_or(-1)
    }

    /// Whether [`build_index`](Self::build_index) can add the keys of `rec` without creating or
    /// flushing a file (the newest file has room for all of them, or there is nothing to add).
    pub fn has_room_for(&self, rec: &RecordView<'_>, phy: i64) -> bool {
        if rec.tran_type() == sysflag::TRANSACTION_ROLLBACK_TYPE {
            return true;
        }
        let files = self.files.lock();
        let Some(last) = files.last() else {
            return index_keys(rec).next().is_none();
        };
        if last.header.index_count > 1 && phy <= last.header.end_phy_offset {
            return true;
        }
        let free = self
            .entries
            .saturating_sub(last.header.index_count.max(0) as usize);
        index_keys(rec).count() <= free
    }

    /// Adds the keys of one dispatched record (`topic#UNIQ_KEY`, `topic#k` per KEYS word).
    pub fn build_index(&self, rec: &RecordView<'_>, phy: i64) -> Result<()> {
        if rec.tran_type() == sysflag::TRANSACTION_ROLLBACK_TYPE {
            return Ok(());
        }
        let mut files = self.files.lock();
        if let Some(last) = files.last() {
            if last.header.index_count > 1 && phy <= last.header.end_phy_offset {
                return Ok(());
            }
        }
        for key in index_keys(rec) {
            let hash = key_hash(rec.topic, key);
            self.put_one(&mut files, hash, phy, rec.store_timestamp)?;
        }
        Ok(())
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
                if f.put_key(hash, phy, ts) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Offsets of messages indexed under `topic#key` in [begin, end], newest file first, at most
    /// `max` (deduplicated; callers still check the record's key).
    pub fn query(&self, topic: &str, key: &str, max: usize, begin: i64, end: i64) -> Vec<i64> {
        let hash = key_hash(topic.as_bytes(), key.as_bytes());
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

/// The keys a record is indexed under: UNIQ_KEY, then each word of KEYS.
fn index_keys<'a>(rec: &RecordView<'a>) -> impl Iterator<Item = &'a [u8]> {
    let uniq = find_property(rec.properties, "UNIQ_KEY");
    let keys = find_property(rec.properties, "KEYS");
    uniq.into_iter().chain(
        keys.into_iter()
            .flat_map(|k| k.split(|&b| b == b' '))
            .filter(|k| !k.is_empty()),
    )
}
