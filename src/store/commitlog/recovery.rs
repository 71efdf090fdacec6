//! Commit-log recovery: choosing the first file to scan and validating records up to the end of
//! valid data (store-format.md §7.4–7.5).

use std::sync::Arc;

use super::record::{self, Decoded, RecordView};
use super::CommitLog;
use crate::store::mapped_file::MappedFile;

/// Result of a validation scan.
#[derive(Debug, Clone)]
pub struct ScanResult {
    /// End of the last valid record (where the next append goes).
    pub process_offset: i64,
    pub records: u64,
    pub bytes: u64,
    /// The invalid record that ended the scan, if any: (file, byte offset in file, reason).
    pub stopped_at: Option<(std::path::PathBuf, u64, String)>,
}

/// Index of the last file whose start offset is `<= offset` (0 if none).
pub fn file_index_for(files: &[Arc<MappedFile>], offset: i64) -> usize {
    files
        .iter()
        .rposition(|f| f.from_offset() <= offset)
        .unwrap_or(0)
}

/// Normal-recovery start (Java 5.3.4 `recoverNormally` + `isMappedFileMatchedRecover`): walking
/// back from the last file (never below file 0), the first whose first record is valid (CRC
/// included when `check_crc`), has a non-zero STORETIMESTAMP and starts at or below
/// `dispatch_from` (the consume queues' max physical offset).
pub fn normal_start_index(files: &[Arc<MappedFile>], dispatch_from: i64, check_crc: bool) -> usize {
    (1..files.len())
        .rev()
        .find(|&i| {
            let Some(buf) = files[i].read_from(0) else {
                return false;
            };
            matches!(record::decode(buf, check_crc),
                Ok(Decoded::Record(r)) if r.store_timestamp != 0 && files[i].from_offset() <= dispatch_from)
        })
        .unwrap_or(0)
}

/// Abnormal-recovery start (Java `isMappedFileMatchedRecover`): walking back from the last file,
/// the first whose first record is valid (with CRC), has a non-zero STORETIMESTAMP and one
/// `<= min_ts`; file 0 if none. (CRC checked when `checkCRCOnRecover`, as Java.)
pub fn abnormal_start_index(files: &[Arc<MappedFile>], min_ts: i64, check_crc: bool) -> usize {
    for (i, f) in files.iter().enumerate().rev() {
        let Some(buf) = f.read_from(0) else { continue };
        if let Ok(Decoded::Record(r)) = record::decode(buf, check_crc) {
            if r.store_timestamp != 0 && r.store_timestamp <= min_ts {
                return i;
            }
        }
    }
    0
}

/// Validates records from file `start_idx` on, calling `on_record(offset, record)` for each
/// valid one; logs progress per file.
pub fn scan(
    cl: &CommitLog,
    start_idx: usize,
    check_crc: bool,
    mut on_record: impl FnMut(i64, &RecordView<'_>),
) -> ScanResult {
    let files = cl.queue.files();
    let mut res = ScanResult {
        process_offset: files.get(start_idx).map(|f| f.from_offset()).unwrap_or(0),
        records: 0,
        bytes: 0,
        stopped_at: None,
    };
    let total_files = files.len();
    for (i, f) in files.iter().enumerate().skip(start_idx) {
        tracing::info!(file = %f.path().display(), n = i + 1, of = total_files, "recovering commit-log file");
        let mut pos = 0usize;
        let mut next_file = false;
        while let Some(buf) = f.read_from(pos) {
            match record::decode(buf, check_crc) {
                Ok(Decoded::Record(r)) => {
                    let off = f.from_offset() + pos as i64;
                    on_record(off, &r);
                    pos += r.total_size as usize;
                    res.records += 1;
                    res.bytes += r.total_size as u64;
                }
                Ok(Decoded::Blank) => {
                    next_file = true;
                    break;
                }
                Ok(Decoded::End) => break,
                Err(e) => {
                    tracing::warn!(file = %f.path().display(), pos, reason = %e, "recovery found a half-written or corrupt record; truncating here");
                    res.stopped_at = Some((f.path().to_path_buf(), pos as u64, e.to_string()));
                    break;
                }
            }
        }
        res.process_offset = f.from_offset() + pos as i64;
        if !next_file || i + 1 == total_files {
            break;
        }
    }
    res
}
