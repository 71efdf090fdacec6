//! Java `StatsItem` / `StatsItemSet`: a value and a count of calls per stats key, sampled every
//! 10 s (the last minute, 7 samples), every 10 min (the last hour, 7 samples) and every hour (the
//! last day, 25 samples), read back by VIEW_BROKER_STATS_DATA as sum, TPS and average per call.
//!
//! Adding to an item is two relaxed atomic adds. The samples take a lock, once per period per item.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::Mutex;

/// One sample: (time ms, calls, value).
type Snap = (i64, u64, u64);

/// Java `StatsSnapshot`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatsSnapshot {
    pub sum: u64,
    pub tps: f64,
    pub avgpt: f64,
    pub times: u64,
}

/// Which list a sample goes to: its period (ms) and how many samples it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Minute,
    Hour,
    Day,
}

impl Period {
    fn span_ms(self) -> i64 {
        match self {
            Period::Minute => 10_000,
            Period::Hour => 600_000,
            Period::Day => 3_600_000,
        }
    }

    fn keep(self) -> usize {
        match self {
            Period::Minute | Period::Hour => 7,
            Period::Day => 25,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Default)]
pub struct StatsItem {
    value: AtomicU64,
    times: AtomicU64,
    lists: [Mutex<Vec<Snap>>; 3],
}

impl StatsItem {
    pub fn add(&self, value: u64, times: u64) {
        self.value.fetch_add(value, Ordering::Relaxed);
        self.times.fetch_add(times, Ordering::Relaxed);
    }

    pub fn value(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }

    pub fn sample(&self, p: Period, now_ms: i64) {
        let mut list = self.lists[p.index()].lock();
        if list.is_empty() {
            list.push((now_ms - p.span_ms(), 0, 0));
        }
        list.push((
            now_ms,
            self.times.load(Ordering::Relaxed),
            self.value.load(Ordering::Relaxed),
        ));
        if list.len() > p.keep() {
            list.remove(0);
        }
    }

    /// Java `computeStatsData` over one list.
    pub fn snapshot(&self, p: Period) -> StatsSnapshot {
        let list = self.lists[p.index()].lock();
        let (Some(first), Some(last)) = (list.first(), list.last()) else {
            return StatsSnapshot::default();
        };
        let sum = last.2.saturating_sub(first.2);
        let times = last.1.saturating_sub(first.1);
        let ms = (last.0 - first.0) as f64;
        StatsSnapshot {
            sum,
            // Java divides by the span even when it is 0 (NaN); one sample never has a 0 span here
            tps: if ms > 0.0 {
                sum as f64 * 1000.0 / ms
            } else {
                0.0
            },
            avgpt: if times > 0 {
                sum as f64 / times as f64
            } else {
                0.0
            },
            times,
        }
    }
}

/// Java `StatsItemSet`: the items of one stats name, by key.
#[derive(Default)]
pub struct StatsItemSet {
    items: DashMap<String, Arc<StatsItem>>,
}

impl StatsItemSet {
    /// The item for `key`, made on first use (one hash lookup; allocates only then). A new item
    /// is first sampled by the set's next tick (Java's `getAndCreateStatsItem` leaves `init()`
    /// commented out), which puts a zero sample one period back in front.
    pub fn item(&self, key: &str) -> Arc<StatsItem> {
        if let Some(i) = self.items.get(key) {
            return i.clone();
        }
        self.items.entry(key.to_string()).or_default().clone()
    }

    pub fn add(&self, key: &str, value: u64, times: u64) {
        if let Some(i) = self.items.get(key) {
            i.add(value, times);
            return;
        }
        self.item(key).add(value, times);
    }

    pub fn get(&self, key: &str) -> Option<Arc<StatsItem>> {
        self.items.get(key).map(|i| i.clone())
    }

    pub fn sample(&self, p: Period, now_ms: i64) {
        for i in self.items.iter() {
            i.sample(p, now_ms);
        }
    }

    /// Drops every item whose key `f` rejects (Java removes a deleted topic's or group's items).
    pub fn retain(&self, f: impl Fn(&str) -> bool) {
        self.items.retain(|k, _| f(k));
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_is_the_change_over_the_kept_samples() {
        let t0 = 1_000_000;
        let item = StatsItem::default();
        item.add(30, 3);
        item.sample(Period::Minute, t0 + 10_000);
        let s = item.snapshot(Period::Minute);
        assert_eq!((s.sum, s.times), (30, 3));
        assert_eq!(s.avgpt, 10.0);
        // the first sample puts a zero one period back: [t0, t0+10s] spans 10 s, as Java's
        assert_eq!(s.tps, 3.0);
        // after 7 more quiet samples the additions leave the minute window
        for k in 2..=8 {
            item.sample(Period::Minute, t0 + k * 10_000);
        }
        assert_eq!(item.snapshot(Period::Minute).sum, 0);
        assert_eq!(item.snapshot(Period::Hour).sum, 0, "hour not sampled since");
    }

    #[test]
    fn set_makes_items_on_first_use() {
        let set = StatsItemSet::default();
        assert!(set.get("t").is_none());
        set.add("t", 5, 1);
        set.add("t", 5, 1);
        assert_eq!(set.get("t").unwrap().value(), 10);
        set.retain(|k| k != "t");
        assert!(set.is_empty());
    }
}
