//! Broker counters for GET_BROKER_RUNTIME_INFO: messages put and got, sampled every second into
//! a ring so TPS over 10 s / 60 s / 600 s windows and the day-boundary totals can be reported.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

const RING: usize = 601;

#[derive(Default)]
pub struct BrokerStats {
    pub put_total: AtomicU64,
    pub get_total: AtomicU64,
    /// Messages forced cleanup deleted before their groups consumed them (summed over groups).
    pub forced_unconsumed: AtomicU64,
    ring: Mutex<VecDeque<(u64, u64)>>,
    days: Mutex<DayTotals>,
}

#[derive(Default, Clone, Copy)]
struct DayTotals {
    day: u64,
    put_today_morning: u64,
    get_today_morning: u64,
    put_yesterday_morning: u64,
    get_yesterday_morning: u64,
}

impl BrokerStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Called once a second by the broker's stats task.
    pub fn sample(&self) {
        let put = self.put_total.load(Ordering::Relaxed);
        let get = self.get_total.load(Ordering::Relaxed);
        let mut ring = self.ring.lock();
        ring.push_back((put, get));
        if ring.len() > RING {
            ring.pop_front();
        }
        let day = now_secs() / 86_400;
        let mut d = self.days.lock();
        if d.day == 0 {
            d.day = day;
        } else if d.day != day {
            *d = DayTotals {
                day,
                put_today_morning: put,
                get_today_morning: get,
                put_yesterday_morning: d.put_today_morning,
                get_yesterday_morning: d.get_today_morning,
            };
        }
    }

    /// "tps10 tps60 tps600" for puts (`true`) or gets (`false`), as Java formats them.
    pub fn tps(&self, puts: bool) -> String {
        let ring = self.ring.lock();
        let pick = |s: &(u64, u64)| if puts { s.0 } else { s.1 };
        let window = |secs: usize| -> f64 {
            let n = ring.len();
            if n < 2 {
                return 0.0;
            }
            let span = secs.min(n - 1);
            (pick(&ring[n - 1]) - pick(&ring[n - 1 - span])) as f64 / span as f64
        };
        format!("{:.2} {:.2} {:.2}", window(10), window(60), window(600))
    }

    /// (yesterday morning, today morning, now) totals for puts and gets.
    pub fn day_totals(&self) -> [(u64, u64, u64); 2] {
        let d = *self.days.lock();
        let put = self.put_total.load(Ordering::Relaxed);
        let get = self.get_total.load(Ordering::Relaxed);
        [
            (d.put_yesterday_morning, d.put_today_morning, put),
            (d.get_yesterday_morning, d.get_today_morning, get),
        ]
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tps_over_windows() {
        let s = BrokerStats::new();
        for i in 0..20u64 {
            s.put_total.store(i * 100, Ordering::Relaxed);
            s.sample();
        }
        assert!(s.tps(true).starts_with("100.00 100.00 100.00"));
        assert_eq!(s.day_totals()[0].2, 1900);
    }
}
