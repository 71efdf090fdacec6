//! A cumulative histogram of relaxed atomics, for metrics read at scrape time.

use std::sync::atomic::{AtomicU64, Ordering};

/// rmqd's store latency histograms (ms): sub-millisecond resolution where the store lives.
pub const STORE_LATENCY_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 5000.0,
];

/// A cumulative histogram over fixed bounds; values are recorded in the bounds' unit times
/// `scale` (e.g. microseconds for millisecond bounds with scale 1000).
pub struct Histogram {
    bounds: &'static [f64],
    scale: f64,
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
    count: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64], scale: f64) -> Self {
        Histogram {
            bounds,
            scale,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    /// Records `raw` (in the bounds' unit times `scale`).
    pub fn record(&self, raw: u64) {
        let v = raw as f64 / self.scale;
        let i = self.bounds.partition_point(|&b| b < v);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(raw, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// (upper bound, cumulative count) per bucket, `+Inf` last; the sum; the count.
    pub fn snapshot(&self) -> (Vec<(f64, u64)>, f64, u64) {
        let mut acc = 0;
        let mut out = Vec::with_capacity(self.buckets.len());
        for (i, b) in self.buckets.iter().enumerate() {
            acc += b.load(Ordering::Relaxed);
            out.push((self.bounds.get(i).copied().unwrap_or(f64::INFINITY), acc));
        }
        let sum = self.sum.load(Ordering::Relaxed) as f64 / self.scale;
        (out, sum, acc)
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count.load(Ordering::Relaxed))
            .finish()
    }
}
