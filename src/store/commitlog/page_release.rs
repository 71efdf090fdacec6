//! `PageReleaseService`: keeps the commit log's share of the broker's RSS to a hot window.
//!
//! Every page the writer appends (and every page a pull reads) stays mapped in this process, so
//! without this service RSS grows with the CommitLog written, up to the whole mapped store. Bytes
//! that are dispatched and more than `HOT_WINDOW` behind the dispatch offset are dropped from the
//! page tables with `MappedFile::release_pages`: they stay in the kernel's page cache (dirty ones
//! stay dirty and are still written by the flush service's msync), so a lagging pull re-faults
//! them with a minor fault, and the memory is the kernel's to write back and reclaim. Not waiting
//! for the flush matters: on a slow disk the flush trails by whole files. Once a failed fsync has
//! poisoned the commit log, nothing past the flush is released any more.
//! Java's broker keeps them mapped; this is rmqd's footprint, not a different measurement.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::mapped_file::MappedFileQueue;
use crate::store::service::{run_every, ServiceThread};
use crate::store::StoreInner;

/// Bytes behind the dispatch offset that stay mapped: the pages caught-up consumers read.
const HOT_WINDOW: i64 = 16 * 1024 * 1024;
/// Every tick, the last `RECENT` bytes behind the window are released again: lagging pulls read
/// (and so re-map) pages there, at up to the consumers' rate. A few page-table walks per tick.
const RECENT: i64 = 256 * 1024 * 1024;
/// A pull further behind than that: every tick also releases `READ_SPAN` bytes from the lowest
/// offset read since the last tick. More than a pull reads in a tick, and a bounded walk however
/// far back the store goes.
const READ_SPAN: i64 = 1024 * 1024 * 1024;
/// Everything behind the window is released again this often (other pulls far behind the window
/// than the lowest, and mappings made other than by a commit-log read).
const SWEEP_EVERY: Duration = Duration::from_secs(2);
const TICK: Duration = Duration::from_millis(50);

pub struct PageReleaseService(ServiceThread);

impl PageReleaseService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("PageReleaseService", inner, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let queue = &inner.commitlog.queue;
    let mut last_sweep = Instant::now();
    run_every(&stop, TICK, || {
        let mut limit = inner.reput_offset.load(Ordering::Acquire) - HOT_WINDOW;
        if inner.commitlog.is_poisoned() {
            // past the flush, the mapped pages hold the only copy once writeback failed (clean
            // pages the kernel may drop); keeping them mapped keeps them out of the easy reclaim
            // of unmapped cache, so pulls can still drain them until the restart
            limit = limit.min(inner.commitlog.flushed_offset());
        }
        let read_low = inner.commitlog.take_read_low();
        let sweep = last_sweep.elapsed() >= SWEEP_EVERY;
        if sweep {
            last_sweep = Instant::now();
        }
        for (from, to) in tick_ranges(queue.min_offset(), limit, read_low, sweep) {
            release(queue, from, to);
        }
    });
}

/// The ranges a tick releases: everything behind the window on a sweep; else the last `RECENT`
/// bytes behind it, and `READ_SPAN` bytes from the lowest offset read since the last tick when
/// that is further back. Empty ranges are left out; nothing is allocated.
fn tick_ranges(
    min: i64,
    limit: i64,
    read_low: Option<i64>,
    sweep: bool,
) -> impl Iterator<Item = (i64, i64)> {
    let ranges = if sweep {
        [(min, limit), (0, 0)]
    } else {
        let recent = min.max(limit - RECENT);
        let span = read_low.map_or((0, 0), |low| {
            (min.max(low), recent.min(low.saturating_add(READ_SPAN)))
        });
        [(recent, limit), span]
    };
    ranges.into_iter().filter(|(from, to)| from < to)
}

/// Releases the global range `[from, to)` in every file it touches.
pub(crate) fn release(queue: &MappedFileQueue, from: i64, to: i64) {
    if to <= from {
        return;
    }
    for f in queue.files() {
        let start = f.from_offset();
        let end = start + f.size() as i64;
        if end <= from || start >= to {
            continue;
        }
        let lo = (from.max(start) - start) as usize;
        let hi = (to.min(end) - start) as usize;
        if !f.release_pages(lo, hi - lo) {
            tracing::debug!(path = %f.path().display(), "MADV_DONTNEED refused");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::mapped_file::OS_PAGE_SIZE;

    #[test]
    fn a_tick_releases_a_bounded_span_from_the_lowest_read_when_a_pull_lags_past_the_recent_range()
    {
        let (min, limit) = (1_000, 10_000_000_000);
        let recent = (limit - RECENT, limit);
        let ranges =
            |min, limit, low, sweep| tick_ranges(min, limit, low, sweep).collect::<Vec<_>>();
        // Nothing read: the recent range only.
        assert_eq!(ranges(min, limit, None, false), [recent]);
        // A pull 5 GB behind: from where it read, one span.
        let low = 5_000_000_000;
        assert_eq!(
            ranges(min, limit, Some(low), false),
            [recent, (low, low + READ_SPAN)]
        );
        // Behind by less than a span: up to the recent range, not across it.
        let low = limit - RECENT - 1000;
        assert_eq!(
            ranges(min, limit, Some(low), false),
            [recent, (low, limit - RECENT)]
        );
        // A read inside the recent range or the hot window adds nothing.
        assert_eq!(ranges(min, limit, Some(limit - 1), false), [recent]);
        assert_eq!(ranges(min, limit, Some(limit + 5), false), [recent]);
        // Never before the oldest byte; a sweep takes everything from there.
        assert_eq!(
            ranges(min, limit, Some(0), false),
            [recent, (min, READ_SPAN)]
        );
        assert_eq!(ranges(min, RECENT / 2, Some(0), false), [(min, RECENT / 2)]);
        assert_eq!(ranges(min, limit, Some(limit - 1), true), [(min, limit)]);
    }

    #[test]
    fn released_ranges_across_files_read_back_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let file_size = 16 * OS_PAGE_SIZE;
        let queue = MappedFileQueue::new(dir.path(), file_size);
        let data: Vec<u8> = (0..3 * file_size).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(file_size) {
            let f = queue.last_file_or_create(0).unwrap();
            f.append(chunk).unwrap();
        }
        assert_eq!(queue.files().len(), 3);
        // From inside file 0 to inside file 2, unflushed (dirty) pages included.
        release(
            &queue,
            5 * OS_PAGE_SIZE as i64 + 17,
            40 * OS_PAGE_SIZE as i64 + 3,
        );
        for (i, f) in queue.files().iter().enumerate() {
            let want = &data[i * file_size..(i + 1) * file_size];
            assert_eq!(f.read(0, file_size).unwrap(), want, "file {i}");
        }
        queue.flush_all().unwrap();
        for f in queue.files() {
            let at = f.from_offset() as usize;
            assert_eq!(std::fs::read(f.path()).unwrap(), &data[at..at + file_size]);
        }
    }
}
