//! Accurate timer messages (RocketMQ 5.x `TIMER_DELIVER_MS` / `TIMER_DELAY_SEC` /
//! `TIMER_DELAY_MS`). On the wire and in the CommitLog they are what the Java broker makes of
//! them (`HookUtils.transformTimerMessage`): stored in `rmq_sys_wheel_timer` queue 0 with
//! `TIMER_OUT_MS` (the delivery time rounded down to `timerPrecisionMs`), `REAL_TOPIC` and
//! `REAL_QID`; when due they are put back to their topic with `TIMER_ENQUEUE_MS` and
//! `TIMER_DEQUEUE_MS`, as `TimerMessageStore.convert` does, once the precision slot holding
//! `TIMER_OUT_MS` has passed (so at or after the time asked, within the precision).
//!
//! The Java broker keeps its pending timers in a time wheel (`timerwheel`, `timerlog/`); rmqd
//! keeps them in memory, rebuilt at start from the timer queue, and its progress in
//! `config/rmqdTimer.json`: the smallest queue offset still pending, the (time, offset) of the
//! next timer due and how far the queue was read. Everything before that point in (time, offset)
//! order was delivered. The Java files are left as they are. On a store the Java broker wrote
//! (no rmqd progress yet), `config/timercheck`'s `lastReadTimeMs` says what Java delivered.
//! After a crash, timers delivered since the last progress write may come again (at least once).
//!
//! A timer message carrying `TIMER_DEL_UNIQKEY` (`<topic>+<UNIQ_KEY>`; RECALL_MESSAGE stores one)
//! is a delete marker: it is never delivered, and the timer of its slot that the key names is
//! dropped instead of delivered (Java's `MAGIC_DELETE`: only within the same slot, and only when
//! the marker was read before the slot came).

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::broker::periodic::{BackgroundTask, ServiceSlot};

use crate::broker::metadata::MetadataError;
use crate::broker::put::stored::{timer_due, with_record};
use crate::broker::schedule_message_service::DeliveryListener;
use crate::common::histogram::Histogram;
use crate::common::message::{
    PROPERTY_DELAY_TIME_LEVEL, PROPERTY_REAL_QUEUE_ID, PROPERTY_REAL_TOPIC,
    PROPERTY_TIMER_DELAY_MS, PROPERTY_TIMER_DELAY_SEC, PROPERTY_TIMER_DELIVER_MS,
    PROPERTY_TIMER_DEL_UNIQKEY, PROPERTY_TIMER_OUT_MS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
};
use crate::common::properties::Properties;
use crate::store::config::MessageStoreConfig;
use crate::store::config_files;
use crate::store::message::{sysflag, PutMessageStatus};
use crate::store::MessageStore;

pub const TIMER_TOPIC: &str = "rmq_sys_wheel_timer";

/// Java `TimerMessageStore.buildDeleteKey`: a timer message named by topic and UNIQ_KEY.
pub fn timer_delete_key(real_topic: &str, uniq_key: &str) -> String {
    format!("{real_topic}+{uniq_key}")
}
const TICK: Duration = Duration::from_millis(100);
const BATCH: i32 = 64;

/// Why a timer message is refused: (response code is SYSTEM_ERROR when the wheel is off,
/// MESSAGE_ILLEGAL otherwise), with Java's remark.
#[derive(Debug, PartialEq, Eq)]
pub enum TimerRefusal {
    NotEnabled,
    Illegal { max_delay_ms: i64 },
}

impl TimerRefusal {
    pub fn remark(&self) -> String {
        match self {
            Self::NotEnabled => {
                "accurate timer message is not enabled, timerWheelEnable is false".to_string()
            }
            Self::Illegal { max_delay_ms } => format!(
                "timer message illegal, the delay time should not be bigger than the max delay {max_delay_ms}ms; or if set del msg, the delay time should be bigger than the current time"
            ),
        }
    }
}

/// Java `HookUtils.checkIfTimerMessage` + `transformTimerMessage` for a message about to be
/// stored: `Ok(Some((topic, queue)))` when it becomes a timer message, `Ok(None)` when it is
/// stored as it is (not a timer, a delay level wins, or the time has already come).
pub fn transform_timer(
    props: &mut Properties,
    topic: &str,
    queue_id: i32,
    sys_flag: i32,
    now: i64,
    cfg: &MessageStoreConfig,
) -> Result<Option<(String, i32)>, TimerRefusal> {
    let tran = sys_flag & sysflag::TRANSACTION_MASK;
    if (tran != sysflag::TRANSACTION_NOT_TYPE && tran != sysflag::TRANSACTION_COMMIT_TYPE)
        || topic == TIMER_TOPIC
    {
        return Ok(None);
    }
    let keys = [
        PROPERTY_TIMER_DELIVER_MS,
        PROPERTY_TIMER_DELAY_SEC,
        PROPERTY_TIMER_DELAY_MS,
    ];
    let level = props
        .get(PROPERTY_DELAY_TIME_LEVEL)
        .and_then(|l| l.parse::<i32>().ok())
        .unwrap_or(0);
    if level > 0 {
        // a delay level wins; the timer properties are dropped
        keys.iter().for_each(|k| {
            props.remove(k);
        });
        return Ok(None);
    }
    if props.contains(PROPERTY_TIMER_OUT_MS) || !keys.iter().any(|k| props.contains(k)) {
        return Ok(None);
    }
    if !cfg.timer_wheel_enable {
        return Err(TimerRefusal::NotEnabled);
    }
    let max_delay_ms = cfg.timer_max_delay_sec.saturating_mul(1000);
    let illegal = TimerRefusal::Illegal { max_delay_ms };
    let num = |k: &str| props.get(k).map(|v| v.trim().parse::<i64>());
    let deliver = match (
        num(PROPERTY_TIMER_DELAY_SEC),
        num(PROPERTY_TIMER_DELAY_MS),
        num(PROPERTY_TIMER_DELIVER_MS),
    ) {
        (Some(Ok(sec)), _, _) => now.saturating_add(sec.saturating_mul(1000)),
        (Some(Err(_)), _, _) => return Err(illegal),
        (None, Some(Ok(ms)), _) => now.saturating_add(ms),
        (None, Some(Err(_)), _) => return Err(illegal),
        (None, None, Some(Ok(at))) => at,
        _ => return Err(illegal),
    };
    if deliver <= now {
        if props.contains(PROPERTY_TIMER_DEL_UNIQKEY) {
            return Err(illegal);
        }
        return Ok(None);
    }
    if deliver - now > max_delay_ms {
        return Err(illegal);
    }
    let precision = cfg.timer_precision_ms.max(1);
    let deliver = if deliver % precision == 0 {
        deliver - precision
    } else {
        deliver / precision * precision
    };
    props.insert(PROPERTY_TIMER_OUT_MS, deliver.to_string());
    props.insert(PROPERTY_REAL_TOPIC, topic);
    props.insert(PROPERTY_REAL_QUEUE_ID, queue_id.to_string());
    Ok(Some((TIMER_TOPIC.to_string(), 0)))
}

/// `config/rmqdTimer.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Progress {
    /// The timer queue was read up to here (exclusive).
    read_offset: i64,
    /// Smallest queue offset of a pending timer (`read_offset` when none).
    min_pending_offset: i64,
    /// (delivery ms, queue offset) of the next timer due; earlier ones below `read_offset` were
    /// delivered. `i64::MAX` when none is pending.
    next_due_ms: i64,
    next_due_offset: i64,
}

struct State {
    /// (delivery ms, queue offset) → physical offset
    pending: BTreeMap<(i64, i64), i64>,
    /// slot (`TIMER_OUT_MS`) → the delete markers' keys read for it; dropped once the slot passed.
    deletes: BTreeMap<i64, HashSet<String>>,
    read_offset: i64,
    dirty: bool,
}

pub struct TimerMessageService {
    store: Arc<MessageStore>,
    path: PathBuf,
    state: Mutex<State>,
    task: ServiceSlot,
    on_delivered: std::sync::OnceLock<DeliveryListener>,
    counters: Mutex<TimerCounters>,
}

/// Java `TimerMetrics.timerDist`: the bounds (s) of `rocketmq_timer_message_snapshot`.
pub const TIMER_DIST_S: [i64; 8] = [5, 60, 300, 900, 3600, 14400, 28800, 86400];

/// Java's buckets (s) of `rocketmq_delay_message_latency` (DefaultStoreMetricsManager's view).
const DELAY_LATENCY_BUCKETS: &[f64] = &[60.0, 600.0, 3600.0, 43200.0, 86400.0, 259200.0];

/// What the Java broker's timer families count (DefaultStoreMetricsManager, TimerMetrics), per
/// real topic.
#[derive(Default)]
struct TimerCounters {
    enqueued: BTreeMap<String, u64>,
    dequeued: BTreeMap<String, u64>,
    /// Timers pending (Java's `timingCount`, which its metrics file keeps across restarts; rmqd
    /// counts them again from the timer queue at start).
    timing: BTreeMap<String, i64>,
    /// Delivery time − born time, in seconds, at enqueue.
    set_latency: BTreeMap<String, Arc<Histogram>>,
    /// (wall ms, store timestamp) of the last timer read off the queue.
    last_enqueue: (i64, i64),
}

/// The timer families' values at one scrape (see `TimerMessageService::metrics`).
pub struct TimerMetrics {
    /// Timer-queue messages not read yet (`rocketmq_timer_enqueue_lag`).
    pub enqueue_lag: i64,
    /// Now − the store time of the last timer read, when one was read in the last 2 s.
    pub enqueue_latency_ms: i64,
    /// Timers pending (`rocketmq_timer_dequeue_lag`, Java's wheel count from its read time on).
    pub dequeue_lag: i64,
    /// Seconds the delivery is behind the clock (Java reports `getDequeueBehind()`, seconds,
    /// under the millisecond-unit `rocketmq_timer_dequeue_latency`).
    pub dequeue_behind_s: i64,
    pub timing: Vec<(String, i64)>,
    pub enqueued: Vec<(String, u64)>,
    pub dequeued: Vec<(String, u64)>,
    /// (bound s, timers due between the previous bound and this one from now).
    pub distribution: Vec<(i64, i64)>,
    pub set_latency: Vec<(String, Arc<Histogram>)>,
}

impl TimerMessageService {
    /// Rebuilds the pending timers from the timer queue (see the module doc).
    pub fn load(store: Arc<MessageStore>) -> Result<Self, MetadataError> {
        let config_dir = store.paths().config_dir();
        let path = config_dir.join("rmqdTimer.json");
        let min = store.min_offset_in_queue(TIMER_TOPIC, 0);
        let max = store.max_offset_in_queue(TIMER_TOPIC, 0);
        let progress: Progress = match config_files::load_typed(&path)
            .map_err(|e| MetadataError::unreadable(&path, "rmqdTimer.json", e))?
        {
            Some(p) => p,
            None => {
                // a store the Java broker ran: what its wheel read is delivered
                let java_read = read_java_timercheck(&config_dir.join("timercheck"));
                Progress {
                    read_offset: if java_read > 0 { max } else { min },
                    min_pending_offset: min,
                    next_due_ms: java_read,
                    next_due_offset: 0,
                }
            }
        };
        let svc = Self {
            store,
            path,
            state: Mutex::new(State {
                pending: BTreeMap::new(),
                deletes: BTreeMap::new(),
                read_offset: progress.min_pending_offset.max(min),
                dirty: false,
            }),
            task: ServiceSlot::default(),
            on_delivered: std::sync::OnceLock::new(),
            counters: Mutex::new(TimerCounters::default()),
        };
        // re-read from the smallest pending offset; skip what was delivered
        let delivered = |key: (i64, i64)| {
            key.1 < progress.read_offset && key < (progress.next_due_ms, progress.next_due_offset)
        };
        let n = svc.read_queue(max, delivered, false);
        if n > 0 {
            tracing::info!(pending = n, "timer messages pending");
        }
        Ok(svc)
    }

    /// Sets who is told of each delivery (once; later calls are ignored).
    pub fn set_delivery_listener(&self, listener: DeliveryListener) {
        let _ = self.on_delivered.set(listener);
    }

    /// Reads the timer queue from the current read offset up to `until`, adding every timer for
    /// which `skip` is false; returns how many were added. `enqueue`: counted as Java counts a
    /// timer entering its wheel (not so the pending timers found again at start).
    fn read_queue(&self, until: i64, skip: impl Fn((i64, i64)) -> bool, enqueue: bool) -> usize {
        let mut added = 0;
        loop {
            let from = self.state.lock().read_offset;
            if from >= until {
                return added;
            }
            let Some(units) = self.store.consume_queue_units(TIMER_TOPIC, 0, from, BATCH) else {
                return added;
            };
            if units.is_empty() {
                return added;
            }
            let mut st = self.state.lock();
            let mut counters = self.counters.lock();
            for (i, (phy, _size, _tags)) in units.into_iter().enumerate() {
                let offset = from + i as i64;
                let timer = with_record(&self.store, phy, |rec| {
                    let props = Properties::decode(&String::from_utf8_lossy(rec.properties));
                    let due = props
                        .get(PROPERTY_TIMER_OUT_MS)
                        .and_then(|v| v.parse::<i64>().ok())?;
                    let topic = props.get(PROPERTY_REAL_TOPIC).unwrap_or("").to_string();
                    let delete = props.get(PROPERTY_TIMER_DEL_UNIQKEY).map(str::to_string);
                    Some((due, topic, delete, rec.born_timestamp, rec.store_timestamp))
                });
                match timer.flatten() {
                    Some((ms, topic, Some(delete), ..)) if !skip((ms, offset)) => {
                        st.deletes.entry(ms).or_default().insert(delete);
                        // Java counts a marker as one timer less of its topic
                        counters.deleted_one(&topic);
                    }
                    Some((ms, topic, None, born, stored)) if !skip((ms, offset)) => {
                        st.pending.insert((ms, offset), phy);
                        added += 1;
                        counters.enqueued_one(&topic, ms, born, stored, enqueue);
                    }
                    Some(_) => {}
                    None => {
                        tracing::warn!(offset, phy, "timer queue unit without TIMER_OUT_MS skipped")
                    }
                }
                st.read_offset = offset + 1;
            }
            st.dirty = true;
        }
    }

    /// The timer families' values now (Java `DefaultStoreMetricsManager`'s timer gauges).
    pub fn metrics(&self, now: i64) -> TimerMetrics {
        let precision = self.store.config().timer_precision_ms.max(1);
        let max = self.store.max_offset_in_queue(TIMER_TOPIC, 0).max(0);
        let (enqueue_lag, dequeue_lag, first_due, distribution) = {
            let st = self.state.lock();
            let slot = now / precision * precision;
            let mut distribution = Vec::with_capacity(TIMER_DIST_S.len());
            let mut lower = slot;
            for bound in TIMER_DIST_S {
                let upper = slot + bound * 1000;
                let n = st
                    .pending
                    .range((lower, i64::MIN)..(upper, i64::MIN))
                    .count();
                distribution.push((bound, n as i64));
                lower = upper;
            }
            (
                (max - st.read_offset).max(0),
                st.pending.len() as i64,
                st.pending.keys().next().map(|k| k.0),
                distribution,
            )
        };
        // the wheel's read time: the oldest timer still due, else the current slot
        let read_time = first_due.map_or(now, |d| d.min(now)) / precision * precision;
        let c = self.counters.lock();
        TimerMetrics {
            enqueue_lag,
            enqueue_latency_ms: if now - c.last_enqueue.0 < 2000 {
                now - c.last_enqueue.1
            } else {
                0
            },
            dequeue_lag,
            dequeue_behind_s: (now - read_time).max(0) / 1000,
            timing: c.timing.iter().map(|(t, n)| (t.clone(), *n)).collect(),
            enqueued: c.enqueued.iter().map(|(t, n)| (t.clone(), *n)).collect(),
            dequeued: c.dequeued.iter().map(|(t, n)| (t.clone(), *n)).collect(),
            distribution,
            set_latency: c
                .set_latency
                .iter()
                .map(|(t, h)| (t.clone(), h.clone()))
                .collect(),
        }
    }

    /// Java's `getEnqueueBehind() <= 0 && getDequeueBehind() <= 0`: every timer stored has been
    /// read, and none is due but undelivered (the POP revive service waits for this before it
    /// takes "now" as the time its revive queue has reached).
    pub fn caught_up(&self, now: i64) -> bool {
        let max = self.store.max_offset_in_queue(TIMER_TOPIC, 0).max(0);
        let precision = self.store.config().timer_precision_ms.max(1);
        let st = self.state.lock();
        st.read_offset >= max
            && st
                .pending
                .keys()
                .next()
                .is_none_or(|k| k.0 + precision > now)
    }

    pub fn pending(&self) -> usize {
        self.state.lock().pending.len()
    }

    pub fn start(self: &Arc<Self>) {
        let me = self.clone();
        let task = BackgroundTask::spawn("timer", |token| async move {
            let mut tick = tokio::time::interval(TICK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let max = me.store.max_offset_in_queue(TIMER_TOPIC, 0);
                me.read_queue(max, |_| false, true);
                me.deliver_due(crate::broker::now_millis());
                if me.state.lock().dirty {
                    // the file write and its fsync run off the worker
                    let m = me.clone();
                    let _ = tokio::task::spawn_blocking(move || m.persist_logged()).await;
                }
            }
        });
        self.task.set(task);
    }

    pub async fn stop(&self) {
        self.task.stop().await;
        self.persist_logged();
    }

    /// Puts every timer due at `now` back to its topic, in (time, offset) order, but those a
    /// delete marker of their slot names. A timer's slot (`TIMER_OUT_MS`, rounded down) is read
    /// once the clock has passed the whole slot, as Java's wheel does (`currReadTimeMs <
    /// currWriteTimeMs`): never before the asked time.
    fn deliver_due(&self, now: i64) {
        let precision = self.store.config().timer_precision_ms.max(1);
        loop {
            let next = {
                let mut st = self.state.lock();
                let next = st.pending.iter().next().map(|(k, v)| (*k, *v));
                if next.is_none_or(|(key, _)| key.0 + precision > now) {
                    // every timer of the slots passed was handled: their markers are done
                    st.deletes.retain(|slot, _| slot + precision > now);
                    return;
                }
                next
            };
            let Some((key, phy)) = next else { return };
            if !self.deliver_one(key.0, phy, now) {
                return; // retried on the next tick
            }
            let mut st = self.state.lock();
            st.pending.remove(&key);
            st.dirty = true;
        }
    }

    /// `TimerMessageStore.convert` + put (nothing when a marker of `slot` names the message);
    /// `false` when the put failed.
    fn deliver_one(&self, slot: i64, phy: i64, now: i64) -> bool {
        if self.state.lock().deletes.contains_key(&slot) {
            let key = with_record(&self.store, phy, |rec| {
                let props = Properties::decode_bytes(rec.properties);
                match (
                    props.get(PROPERTY_REAL_TOPIC),
                    props.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
                ) {
                    (Some(topic), Some(uniq)) => Some(timer_delete_key(topic, uniq)),
                    _ => None,
                }
            });
            if let Some(Some(key)) = key {
                let st = self.state.lock();
                if st
                    .deletes
                    .get(&slot)
                    .is_some_and(|keys| keys.contains(&key))
                {
                    tracing::debug!(key, slot, "timer message deleted (recalled)");
                    return true;
                }
            }
        }
        let msg = with_record(&self.store, phy, |rec| timer_due(rec, now));
        let Some(Some(msg)) = msg else {
            tracing::error!(
                phy,
                "timer message unreadable or without REAL_TOPIC/REAL_QID; dropped"
            );
            return true;
        };
        let handle = self.store.put_message(&msg);
        let result = handle.result();
        if result.status != PutMessageStatus::PUT_OK {
            let status = result.status;
            tracing::error!(topic = %msg.topic, ?status, "timer message put failed; retrying");
            return false;
        }
        self.counters.lock().dequeued_one(&msg.topic);
        if let Some(listener) = self.on_delivered.get() {
            listener(&msg.topic, result);
        }
        true
    }

    fn persist_logged(&self) {
        let progress = {
            let mut st = self.state.lock();
            st.dirty = false;
            let read = st.read_offset;
            let (next_due_ms, next_due_offset) =
                st.pending.keys().next().copied().unwrap_or((i64::MAX, 0));
            Progress {
                read_offset: read,
                min_pending_offset: st.pending.keys().map(|k| k.1).min().unwrap_or(read),
                next_due_ms,
                next_due_offset,
            }
        };
        if let Err(e) = config_files::persist_typed(&self.path, &progress) {
            tracing::error!(error = %e, path = %self.path.display(), "cannot write timer progress");
        }
    }
}

/// `lastReadTimeMs` of the Java broker's `config/timercheck` (big-endian at byte 0); 0 if none.
fn read_java_timercheck(path: &std::path::Path) -> i64 {
    match std::fs::read(path) {
        Ok(b) if b.len() >= 8 => i64::from_be_bytes(b[..8].try_into().unwrap_or([0; 8])),
        _ => 0,
    }
}

impl TimerCounters {
    fn enqueued_one(&mut self, topic: &str, due: i64, born: i64, stored: i64, enqueue: bool) {
        *self.timing.entry(topic.to_string()).or_default() += 1;
        if !enqueue {
            return;
        }
        *self.enqueued.entry(topic.to_string()).or_default() += 1;
        self.last_enqueue = (crate::broker::now_millis(), stored);
        self.set_latency
            .entry(topic.to_string())
            .or_insert_with(|| Arc::new(Histogram::new(DELAY_LATENCY_BUCKETS, 1.0)))
            .record(((due - born) / 1000).max(0) as u64);
    }

    /// A delete marker read: one timer of `topic` less (Java `addMetric(msg, -1)`).
    fn deleted_one(&mut self, topic: &str) {
        *self.timing.entry(topic.to_string()).or_default() -= 1;
    }

    fn dequeued_one(&mut self, topic: &str) {
        *self.dequeued.entry(topic.to_string()).or_default() += 1;
        if let Some(n) = self.timing.get_mut(topic) {
            *n -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MessageStoreConfig {
        MessageStoreConfig::default()
    }

    #[test]
    fn deliver_ms_becomes_a_timer_rounded_to_the_precision() {
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELIVER_MS, "1700000005500");
        let r = transform_timer(&mut p, "T", 2, 0, 1_700_000_000_000, &cfg()).unwrap();
        assert_eq!(r, Some((TIMER_TOPIC.to_string(), 0)));
        assert_eq!(p.get(PROPERTY_TIMER_OUT_MS), Some("1700000005000"));
        assert_eq!(p.get(PROPERTY_REAL_TOPIC), Some("T"));
        assert_eq!(p.get(PROPERTY_REAL_QUEUE_ID), Some("2"));
        // an exact multiple goes one precision earlier (Java)
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELAY_SEC, "3");
        transform_timer(&mut p, "T", 0, 0, 1_700_000_000_000, &cfg()).unwrap();
        assert_eq!(p.get(PROPERTY_TIMER_OUT_MS), Some("1700000002000"));
    }

    #[test]
    fn past_times_levels_and_limits() {
        let now = 1_700_000_000_000;
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELIVER_MS, (now - 1).to_string());
        assert_eq!(transform_timer(&mut p, "T", 0, 0, now, &cfg()), Ok(None));
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELAY_MS, "5000");
        p.insert(PROPERTY_DELAY_TIME_LEVEL, "2");
        assert_eq!(transform_timer(&mut p, "T", 0, 0, now, &cfg()), Ok(None));
        assert!(!p.contains(PROPERTY_TIMER_DELAY_MS));
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELAY_SEC, (4 * 24 * 3600).to_string());
        assert!(matches!(
            transform_timer(&mut p, "T", 0, 0, now, &cfg()),
            Err(TimerRefusal::Illegal { .. })
        ));
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELAY_SEC, "soon");
        assert!(transform_timer(&mut p, "T", 0, 0, now, &cfg()).is_err());
        let mut off = cfg();
        off.timer_wheel_enable = false;
        let mut p = Properties::new();
        p.insert(PROPERTY_TIMER_DELAY_SEC, "3");
        assert_eq!(
            transform_timer(&mut p, "T", 0, 0, now, &off),
            Err(TimerRefusal::NotEnabled)
        );
    }
}
