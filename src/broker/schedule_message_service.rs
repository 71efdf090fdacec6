//! `ScheduleMessageService`: delay levels. A message sent with DELAY level L > 0 is stored in
//! `SCHEDULE_TOPIC_XXXX` queue L-1 with REAL_TOPIC / REAL_QID (its consume-queue tagsCode is the
//! delivery time); this service tails each level's queue and, when a message is due, puts it back
//! to its real topic and queue. Progress (the next unread offset of each level) is kept in
//! `config/delayOffset.json` in Java's shape, so a Java broker started on the store resumes where
//! rmqd stopped and the other way round. One task serves every level; explicit start and stop.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::broker::periodic::{sleep_unless_stopped, BackgroundTask, ServiceSlot};

use crate::broker::metadata::MetadataError;
use crate::broker::put::stored::{delay_due, with_record};
use crate::common::message::{
    PROPERTY_DELAY_TIME_LEVEL, PROPERTY_REAL_QUEUE_ID, PROPERTY_REAL_TOPIC,
};
use crate::common::properties::Properties;
use crate::store::config_files::{self, types::DelayOffsetWrapper};
use crate::store::message::{sysflag, PutMessageStatus};
use crate::store::MessageStore;

pub const SCHEDULE_TOPIC: &str = "SCHEDULE_TOPIC_XXXX";
/// How often each level's queue is looked at (Java `DELAY_FOR_A_WHILE`).
const TICK: Duration = Duration::from_millis(100);
/// Back-off after a failed put (Java `DELAY_FOR_A_PERIOD`).
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(10);
/// Java `flushDelayOffsetInterval` default.
const PERSIST_EVERY: Duration = Duration::from_secs(10);
/// Units read from a level's queue per look.
const BATCH: i32 = 32;

/// Java `HookUtils.transformDelayLevelMessage`: for a non-transactional message with DELAY > 0,
/// records REAL_TOPIC / REAL_QID and answers the schedule topic and queue to store it in (the
/// level capped at the highest configured one). `None`: not a delayed message.
pub fn transform_delay_level(
    props: &mut Properties,
    topic: &str,
    queue_id: i32,
    sys_flag: i32,
    max_level: usize,
) -> Option<(String, i32)> {
    let tran = sys_flag & sysflag::TRANSACTION_MASK;
    if tran != sysflag::TRANSACTION_NOT_TYPE && tran != sysflag::TRANSACTION_COMMIT_TYPE {
        return None;
    }
    let level = props
        .get(PROPERTY_DELAY_TIME_LEVEL)
        .and_then(|l| l.parse::<i32>().ok())
        .filter(|l| *l > 0)?;
    let level = level.min(max_level.max(1) as i32);
    props.insert(PROPERTY_DELAY_TIME_LEVEL, level.to_string());
    props.insert(PROPERTY_REAL_TOPIC, topic);
    props.insert(PROPERTY_REAL_QUEUE_ID, queue_id.to_string());
    Some((SCHEDULE_TOPIC.to_string(), level - 1))
}

/// Java `ScheduleMessageService`.
pub struct ScheduleMessageService {
    store: Arc<MessageStore>,
    /// Delay of each level in ms, level 1 first.
    levels: Vec<i64>,
    path: PathBuf,
    state: Mutex<DelayOffsetWrapper>,
    task: ServiceSlot,
}

impl ScheduleMessageService {
    /// Loads `delayOffset.json` (or its `.bak`) and corrects offsets outside each queue's range.
    pub fn load(store: Arc<MessageStore>) -> Result<Self, MetadataError> {
        let path = store.paths().delay_offset_json();
        let levels = store.config().delay_levels_ms();
        let state: DelayOffsetWrapper = config_files::load_typed(&path)
            .map_err(|e| MetadataError::unreadable(&path, "delayOffset.json", e))?
            .unwrap_or_default();
        let s = Self {
            store,
            levels,
            path,
            state: Mutex::new(state),
            task: ServiceSlot::default(),
        };
        s.correct_delay_offsets();
        Ok(s)
    }

    pub fn max_level(&self) -> usize {
        self.levels.len()
    }

    /// Java `correctDelayOffset`: an offset below the queue's minimum or above its maximum is
    /// moved to that bound.
    fn correct_delay_offsets(&self) {
        let mut state = self.state.lock();
        for (level, offset) in state.offset_table.iter_mut() {
            let qid = level - 1;
            let min = self.store.min_offset_in_queue(SCHEDULE_TOPIC, qid);
            let max = self.store.max_offset_in_queue(SCHEDULE_TOPIC, qid);
            let fixed = (*offset).max(min).min(max.max(min));
            if fixed != *offset {
                tracing::warn!(level, from = *offset, to = fixed, "delay offset corrected");
                *offset = fixed;
            }
        }
    }

    /// `(level, next offset, max offset)` of every level in the offset table, for
    /// GET_BROKER_RUNTIME_INFO.
    pub fn progress(&self) -> Vec<(i32, i64, i64)> {
        // Java lists the levels of its offset table: those loaded or delivered from, not all
        let table: Vec<(i32, i64)> = {
            let state = self.state.lock();
            let mut t: Vec<(i32, i64)> = state.offset_table.iter().map(|(l, o)| (*l, *o)).collect();
            t.sort_unstable();
            t
        };
        table
            .into_iter()
            .map(|(level, next)| {
                let max = self.store.max_offset_in_queue(SCHEDULE_TOPIC, level - 1);
                (level, next, max)
            })
            .collect()
    }

    /// Starts delivering (first look after 1 s, as Java's `FIRST_DELAY_TIME`).
    pub fn start(self: &Arc<Self>) {
        let me = self.clone();
        self.task
            .set(BackgroundTask::spawn("schedule", |token| async move {
                if sleep_unless_stopped(&token, Duration::from_secs(1)).await {
                    me.run(token).await;
                }
            }));
    }

    async fn run(self: Arc<Self>, token: CancellationToken) {
        let mut paused_until: BTreeMap<i32, Instant> = BTreeMap::new();
        let mut last_persist = Instant::now();
        let mut timer = tokio::time::interval(TICK);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = token.cancelled() => return,
                _ = timer.tick() => {}
            }
            let now = Instant::now();
            for level in 1..=self.levels.len() as i32 {
                if paused_until.get(&level).is_some_and(|t| *t > now) {
                    continue;
                }
                if !self.deliver_due(level) {
                    paused_until.insert(level, now + RETRY_AFTER_FAILURE);
                }
            }
            if last_persist.elapsed() >= PERSIST_EVERY {
                // the file write and its fsync run off the worker
                let me = self.clone();
                let _ = tokio::task::spawn_blocking(move || me.persist_logged()).await;
                last_persist = Instant::now();
            }
        }
    }

    /// Stops the task and writes the final progress.
    pub async fn stop(&self) {
        self.task.stop().await;
        self.persist_logged();
    }

    fn persist_logged(&self) {
        if let Err(e) = self.persist() {
            tracing::error!(error = %e, "cannot write delayOffset.json");
        }
    }

    /// Writes `delayOffset.json` (temp, fsync, rename, `.bak`).
    pub fn persist(&self) -> Result<(), MetadataError> {
        let snapshot = self.state.lock().clone();
        config_files::persist_typed(&self.path, &snapshot)
            .map_err(|e| MetadataError::persist(&self.path, e))
    }

    fn offset_of(&self, level: i32) -> i64 {
        self.state
            .lock()
            .offset_table
            .get(&level)
            .copied()
            .unwrap_or(0)
    }

    fn set_offset(&self, level: i32, offset: i64) {
        let mut state = self.state.lock();
        if state.offset_table.insert(level, offset) != Some(offset) {
            state.data_version.next_version();
        }
    }

    /// Delivers the due messages of one level; `false` when a put failed (back off).
    fn deliver_due(&self, level: i32) -> bool {
        let qid = level - 1;
        let delay = self.levels[(level - 1) as usize];
        loop {
            let min = self.store.min_offset_in_queue(SCHEDULE_TOPIC, qid);
            let max = self.store.max_offset_in_queue(SCHEDULE_TOPIC, qid);
            let mut offset = self.offset_of(level).max(min);
            if offset >= max {
                return true;
            }
            let Some(units) = self
                .store
                .consume_queue_units(SCHEDULE_TOPIC, qid, offset, BATCH)
            else {
                return true;
            };
            if units.is_empty() {
                return true;
            }
            for (phy, _size, tags_code) in units {
                let now = crate::broker::now_millis();
                if correct_deliver_timestamp(now, tags_code, delay) > now {
                    self.set_offset(level, offset);
                    return true;
                }
                match self.deliver_one(phy) {
                    Some(true) | None => offset += 1,
                    Some(false) => {
                        self.set_offset(level, offset);
                        return false;
                    }
                }
            }
            self.set_offset(level, offset);
        }
    }

    /// Java `messageTimeUp` + put: `None` when the record is gone (skipped, as Java does).
    fn deliver_one(&self, phy: i64) -> Option<bool> {
        let msg = with_record(&self.store, phy, delay_due)?;
        let Some(msg) = msg else {
            tracing::error!(phy, "scheduled message without REAL_TOPIC/REAL_QID dropped");
            return None;
        };
        let handle = self.store.put_message(&msg);
        let status = handle.result().status;
        let ok = status == PutMessageStatus::PUT_OK;
        if !ok {
            tracing::error!(topic = %msg.topic, ?status, "scheduled message put failed; retrying later");
        }
        Some(ok)
    }
}

/// Java `correctDeliverTimestamp`: a delivery time beyond now + the level's delay (a clock that
/// moved back) counts as now.
fn correct_deliver_timestamp(now: i64, deliver: i64, delay: i64) -> i64 {
    if deliver > now + delay {
        now
    } else {
        deliver
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_level_moves_to_schedule_queue_with_real_topic_and_queue() {
        let mut p = Properties::new();
        p.insert(PROPERTY_DELAY_TIME_LEVEL, "30");
        let (t, q) = transform_delay_level(&mut p, "T", 3, 0, 18).unwrap();
        assert_eq!((t.as_str(), q), (SCHEDULE_TOPIC, 17));
        assert_eq!(p.get(PROPERTY_REAL_TOPIC), Some("T"));
        assert_eq!(p.get(PROPERTY_REAL_QUEUE_ID), Some("3"));
        assert_eq!(p.get(PROPERTY_DELAY_TIME_LEVEL), Some("18"));
        let mut p = Properties::new();
        p.insert(PROPERTY_DELAY_TIME_LEVEL, "0");
        assert!(transform_delay_level(&mut p, "T", 0, 0, 18).is_none());
    }

    #[test]
    fn deliver_time_beyond_the_level_delay_counts_as_now() {
        assert_eq!(correct_deliver_timestamp(1_000, 5_000, 1_000), 1_000);
        assert_eq!(correct_deliver_timestamp(1_000, 1_500, 1_000), 1_500);
    }
}
