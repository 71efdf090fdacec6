//! Java `StoreStatsService`: what the store counts for GET_BROKER_RUNTIME_INFO — puts (times, bytes,
//! failures, elapsed time distribution and maximum), gets (found, missed, messages transferred,
//! elapsed maximum) and their TPS over 10 s / 60 s / 600 s from one sample a second.
//!
//! The hot path touches only relaxed atomics: no lock, no hashing, no allocation. The distribution
//! of put times is rolled every minute, as Java rolls it when it logs `[PAGECACHERT]`; the runtime
//! info shows the last full minute, and the p99/p999 estimated from its finer buckets.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::common::histogram::{Histogram, STORE_LATENCY_BUCKETS};
use crate::common::java_format::java_double;

/// Java `MAX_RECORDS_OF_SAMPLING + 1`: ten minutes of one-second samples.
const SAMPLES: usize = 601;
/// Java `printTPSInterval`: the put-time distribution is rolled this often.
const ROLL_EVERY: Duration = Duration::from_secs(60);

/// Java `PUT_MESSAGE_ENTIRE_TIME_MAX_DESC`.
const DIST_DESC: [&str; 13] = [
    "[<=0ms]",
    "[0~10ms]",
    "[10~50ms]",
    "[50~100ms]",
    "[100~200ms]",
    "[200~500ms]",
    "[500ms~1s]",
    "[1~2s]",
    "[2~3s]",
    "[3~4s]",
    "[4~5s]",
    "[5~10s]",
    "[10s~]",
];
/// Exclusive upper bounds (ms) of `DIST_DESC` after the first (`<= 0`).
const DIST_BOUNDS: [u64; 11] = [10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000];

/// Java `PUT_MESSAGE_ENTIRE_TIME_BUCKETS`: (step ms, count) — 1 ms steps to 20, 2 ms to 50, ...
const FINE_STEPS: [(u64, usize); 7] = [
    (1, 20),
    (2, 15),
    (5, 10),
    (10, 10),
    (50, 6),
    (100, 5),
    (1000, 9),
];
/// Upper bounds of the fine buckets (ms, inclusive), then one unbounded bucket.
const FINE_N: usize = 20 + 15 + 10 + 10 + 6 + 5 + 9;

fn fine_bounds() -> [u64; FINE_N] {
    let mut out = [0u64; FINE_N];
    let (mut i, mut at) = (0, 0u64);
    for (step, n) in FINE_STEPS {
        for _ in 0..n {
            at += step;
            out[i] = at;
            i += 1;
        }
    }
    out
}

#[derive(Clone, Copy)]
struct Sample {
    at: Instant,
    put: u64,
    found: u64,
    miss: u64,
    transferred: u64,
}

struct Rolled {
    last_roll: Instant,
    /// The last full minute's distribution; `None` until the first roll (Java prints "null").
    dist: Option<[u64; 13]>,
    fine: [u64; FINE_N + 1],
}

pub struct StoreStats {
    boot_timestamp: i64,
    fine_bounds: [u64; FINE_N],
    pub(crate) put_times: AtomicU64,
    pub(crate) put_bytes: AtomicU64,
    put_failed: AtomicU64,
    put_time_max: AtomicU64,
    dist: [AtomicU64; 13],
    fine: [AtomicU64; FINE_N + 1],
    get_found: AtomicU64,
    get_miss: AtomicU64,
    get_transferred: AtomicU64,
    get_time_max: AtomicU64,
    samples: Mutex<VecDeque<Sample>>,
    rolled: Mutex<Rolled>,
    /// rmqd: every put's time (µs), cumulative, for `/metrics`.
    pub(crate) put_latency: Histogram,
    /// rmqd: every commit-log flush's time (µs).
    pub(crate) flush_latency: Histogram,
    /// rmqd: the last recovery's time (ms) and the commit-log bytes it scanned.
    pub(crate) recovery_ms: AtomicU64,
    pub(crate) recovery_scanned_bytes: AtomicU64,
}

impl StoreStats {
    pub fn new(boot_timestamp: i64) -> Self {
        StoreStats {
            boot_timestamp,
            fine_bounds: fine_bounds(),
            put_times: AtomicU64::new(0),
            put_bytes: AtomicU64::new(0),
            put_failed: AtomicU64::new(0),
            put_time_max: AtomicU64::new(0),
            dist: std::array::from_fn(|_| AtomicU64::new(0)),
            fine: std::array::from_fn(|_| AtomicU64::new(0)),
            get_found: AtomicU64::new(0),
            get_miss: AtomicU64::new(0),
            get_transferred: AtomicU64::new(0),
            get_time_max: AtomicU64::new(0),
            samples: Mutex::new(VecDeque::with_capacity(SAMPLES)),
            rolled: Mutex::new(Rolled {
                last_roll: Instant::now(),
                dist: None,
                fine: [0; FINE_N + 1],
            }),
            put_latency: Histogram::new(STORE_LATENCY_BUCKETS, 1000.0),
            flush_latency: Histogram::new(STORE_LATENCY_BUCKETS, 1000.0),
            recovery_ms: AtomicU64::new(0),
            recovery_scanned_bytes: AtomicU64::new(0),
        }
    }

    /// A put that stored `msgs` messages in `bytes` (Java counts them per topic in CommitLog).
    pub(crate) fn stored(&self, msgs: u64, bytes: u64) {
        self.put_times.fetch_add(msgs, Ordering::Relaxed);
        self.put_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A put finished (after its flush under SYNC_FLUSH) in `elapsed`; `ok` false counts a failure.
    pub(crate) fn put_done(&self, elapsed: Duration, ok: bool) {
        self.put_latency.record(elapsed.as_micros() as u64);
        let ms = elapsed.as_millis() as u64;
        let coarse = if ms == 0 {
            0
        } else {
            1 + DIST_BOUNDS.iter().take_while(|&&b| ms >= b).count()
        };
        self.dist[coarse].fetch_add(1, Ordering::Relaxed);
        let fine = self.fine_bounds.partition_point(|&b| b < ms);
        self.fine[fine].fetch_add(1, Ordering::Relaxed);
        self.put_time_max.fetch_max(ms, Ordering::Relaxed);
        if !ok {
            self.put_failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A get: `found` messages transferred (0: a miss) in `elapsed`.
    pub(crate) fn get_done(&self, found: u64, elapsed: Duration) {
        if found > 0 {
            self.get_found.fetch_add(1, Ordering::Relaxed);
            self.get_transferred.fetch_add(found, Ordering::Relaxed);
        } else {
            self.get_miss.fetch_add(1, Ordering::Relaxed);
        }
        self.get_time_max
            .fetch_max(elapsed.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn put_times_total(&self) -> u64 {
        self.put_times.load(Ordering::Relaxed)
    }

    pub fn get_transferred_total(&self) -> u64 {
        self.get_transferred.load(Ordering::Relaxed)
    }

    /// Once a second (Java `FREQUENCY_OF_SAMPLING`); rolls the put-time distribution each minute.
    pub fn sample(&self) {
        let now = Instant::now();
        {
            let mut s = self.samples.lock();
            s.push_back(Sample {
                at: now,
                put: self.put_times.load(Ordering::Relaxed),
                found: self.get_found.load(Ordering::Relaxed),
                miss: self.get_miss.load(Ordering::Relaxed),
                transferred: self.get_transferred.load(Ordering::Relaxed),
            });
            if s.len() > SAMPLES {
                s.pop_front();
            }
        }
        let mut r = self.rolled.lock();
        if now.duration_since(r.last_roll) >= ROLL_EVERY {
            r.last_roll = now;
            r.dist = Some(std::array::from_fn(|i| {
                self.dist[i].swap(0, Ordering::Relaxed)
            }));
            r.fine = std::array::from_fn(|i| self.fine[i].swap(0, Ordering::Relaxed));
        }
    }

    /// Java's TPS over the last `secs` samples: "" until there are that many.
    fn tps(&self, secs: usize, pick: impl Fn(&Sample) -> u64) -> Option<f64> {
        let s = self.samples.lock();
        let n = s.len();
        if n <= secs {
            return None;
        }
        let (a, b) = (&s[n - 1 - secs], &s[n - 1]);
        let ms = b.at.duration_since(a.at).as_millis().max(1) as f64;
        Some((pick(b) - pick(a)) as f64 / ms * 1000.0)
    }

    fn tps_triple(&self, pick: impl Fn(&Sample) -> u64 + Copy) -> String {
        let one = |secs| self.tps(secs, pick).map(java_double).unwrap_or_default();
        format!("{} {} {}", one(10), one(60), one(600))
    }

    /// Java `findPutMessageEntireTimePX` over the last full minute's fine buckets.
    fn put_time_px(&self, px: f64) -> f64 {
        let fine = self.rolled.lock().fine;
        let total: u64 = fine.iter().sum();
        let idx = (total as f64 * px) as u64;
        let mut passed = 0u64;
        for (i, &count) in fine.iter().enumerate() {
            if idx <= passed + count {
                let rel = (idx - passed) as f64;
                let upper = self.fine_bounds.get(i).copied().unwrap_or(i64::MAX as u64) as f64;
                let frac = if count == 0 { 0.0 } else { rel / count as f64 };
                return if i == 0 {
                    upper * frac
                } else {
                    let lower = self.fine_bounds[i - 1] as f64;
                    lower + (upper - lower) * frac
                };
            }
            passed += count;
        }
        0.0
    }

    /// The keys Java's `StoreStatsService.getRuntimeInfo` returns, with its formatting.
    pub fn runtime_info(&self) -> Vec<(&'static str, String)> {
        let total = self.put_times.load(Ordering::Relaxed).max(1);
        let bytes = self.put_bytes.load(Ordering::Relaxed);
        let dist = self.rolled.lock().dist.map_or_else(
            || "null".to_string(),
            |d| {
                DIST_DESC
                    .iter()
                    .zip(d)
                    .map(|(k, v)| format!("{k}:{v} "))
                    .collect()
            },
        );
        let up = (crate::store::util::now_ms() - self.boot_timestamp).max(0) / 1000;
        vec![
            ("bootTimestamp", self.boot_timestamp.to_string()),
            (
                "runtime",
                format!(
                    "[ {} days, {} hours, {} minutes, {} seconds ]",
                    up / 86_400,
                    up / 3_600 % 24,
                    up / 60 % 60,
                    up % 60
                ),
            ),
            (
                "putMessageEntireTimeMax",
                self.put_time_max.load(Ordering::Relaxed).to_string(),
            ),
            ("putMessageTimesTotal", total.to_string()),
            (
                "putMessageFailedTimes",
                self.put_failed.load(Ordering::Relaxed).to_string(),
            ),
            ("putMessageSizeTotal", bytes.to_string()),
            ("putMessageDistributeTime", dist),
            (
                "putMessageAverageSize",
                java_double(bytes as f64 / total as f64),
            ),
            // Java's reput service never sets it in 5.x; it stays 0 there too.
            ("dispatchMaxBuffer", "0".to_string()),
            (
                "getMessageEntireTimeMax",
                self.get_time_max.load(Ordering::Relaxed).to_string(),
            ),
            ("putTps", self.tps_triple(|s| s.put)),
            ("getFoundTps", self.tps_triple(|s| s.found)),
            ("getMissTps", self.tps_triple(|s| s.miss)),
            (
                "getTotalTps",
                format!(
                    "{} {} {}",
                    java_double(self.total_tps(10)),
                    java_double(self.total_tps(60)),
                    java_double(self.total_tps(600))
                ),
            ),
            ("getTransferredTps", self.tps_triple(|s| s.transferred)),
            ("putLatency99", format!("{:.2}", self.put_time_px(0.99))),
            ("putLatency999", format!("{:.2}", self.put_time_px(0.999))),
        ]
    }

    fn total_tps(&self, secs: usize) -> f64 {
        self.tps(secs, |s| s.found).unwrap_or(0.0) + self.tps(secs, |s| s.miss).unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(kv: &'a [(&'static str, String)], k: &str) -> &'a str {
        &kv.iter().find(|(key, _)| *key == k).unwrap().1
    }

    #[test]
    fn put_times_fall_in_javas_buckets() {
        let s = StoreStats::new(0);
        for ms in [0, 5, 10, 49, 150, 999, 1000, 12_000] {
            s.put_done(Duration::from_millis(ms), ms != 5);
        }
        let d: Vec<u64> = s.dist.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        assert_eq!(d, [1, 1, 2, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1]);
        let kv = s.runtime_info();
        assert_eq!(value(&kv, "putMessageEntireTimeMax"), "12000");
        assert_eq!(value(&kv, "putMessageFailedTimes"), "1");
        assert_eq!(value(&kv, "putMessageDistributeTime"), "null");
    }

    #[test]
    fn tps_is_empty_until_the_window_has_samples() {
        let s = StoreStats::new(0);
        s.sample();
        assert_eq!(value(&s.runtime_info(), "putTps"), "  ");
        assert_eq!(value(&s.runtime_info(), "getTotalTps"), "0.0 0.0 0.0");
        for _ in 0..11 {
            s.stored(5, 500);
            s.sample();
        }
        let kv = s.runtime_info();
        let ten: f64 = value(&kv, "putTps")
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(ten > 0.0);
        assert_eq!(value(&kv, "putMessageTimesTotal"), "55");
        assert_eq!(value(&kv, "putMessageAverageSize"), "100.0");
    }

    #[test]
    fn percentile_interpolates_inside_the_bucket() {
        let s = StoreStats::new(0);
        for _ in 0..100 {
            s.put_done(Duration::from_millis(3), true);
        }
        s.rolled.lock().last_roll = Instant::now() - ROLL_EVERY;
        s.sample();
        // all in (2, 3]: p99 = 2 + 1 * 99/100
        assert_eq!(format!("{:.2}", s.put_time_px(0.99)), "2.99");
        assert!(value(&s.runtime_info(), "putMessageDistributeTime")
            .starts_with("[<=0ms]:0 [0~10ms]:100 "));
    }
}
