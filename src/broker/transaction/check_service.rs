//! `TransactionalMessageCheckService`: every `transactionCheckInterval` ms, walks each half
//! queue from the `CID_RMQ_SYS_TRANS` offset, skips half messages an op record finished, and for
//! every other one older than `transactionTimeOut` (or its CHECK_IMMUNITY_TIME_IN_SECONDS)
//! re-puts it to the half queue with TRANSACTION_CHECK_TIMES incremented and sends
//! CHECK_TRANSACTION_STATE (oneway) to a producer of its group. A message already checked
//! `transactionCheckMax` times, or older than `fileReservedTime`, moves to
//! `TRANS_CHECK_MAX_TIME_TOPIC` instead. The walk is Java's `TransactionalMessageServiceImpl.check`
//! rule for rule, so the offsets it commits mean the same to both brokers. The walk is blocking
//! (store reads and puts, a 1 s pause when the op queue runs dry) and runs on a blocking thread.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::broker::periodic::{sleep_unless_stopped, BackgroundTask};

use super::check_listener::{resolve_discard_msg, send_check_message};
use super::{decode_stored, parse_op_body, StoredMessage, REMOVE_TAG};
use crate::broker::put::stored::transaction_copy;
use crate::broker::{now_millis, BrokerContext};
use crate::common::message::{
    PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS, PROPERTY_TAGS, PROPERTY_TRANSACTION_CHECK_TIMES,
    PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET,
};
use crate::common::topic::{
    CID_SYS_RMQ_TRANS, PERM_READ, PERM_WRITE, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
};
use crate::store::get::GetMessageStatus;
use crate::store::message::PutMessageStatus;

/// Java `MAX_PROCESS_TIME_LIMIT`: one queue's walk stops after this long.
const MAX_PROCESS_TIME_LIMIT_MS: i64 = 60_000;
/// Java `OP_MSG_PULL_NUMS`.
const OP_MSG_PULL_NUMS: i32 = 32;
/// Java `SLEEP_WHILE_NO_OP`.
const SLEEP_WHILE_NO_OP: Duration = Duration::from_millis(1000);
/// Bytes one pull may read (far above 32 op records).
const PULL_MAX_BYTES: i32 = 4 * 1024 * 1024;

/// Java `PullStatus` as the check uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PullStatus {
    Found,
    NoNewMsg,
    NoMatchedMsg,
    OffsetIllegal,
}

/// Java `PullResult`: `msgs` is `Some` only when found.
struct Pulled {
    status: PullStatus,
    next_begin_offset: i64,
    msgs: Option<Vec<StoredMessage>>,
}

fn pull(ctx: &BrokerContext, topic: &str, queue_id: i32, offset: i64, nums: i32) -> Pulled {
    let r = ctx
        .store
        .get_message(topic, queue_id, offset, nums, PULL_MAX_BYTES, None);
    use GetMessageStatus::*;
    let status = match r.status {
        FOUND => PullStatus::Found,
        NO_MATCHED_MESSAGE => PullStatus::NoMatchedMsg,
        NO_MESSAGE_IN_QUEUE | OFFSET_OVERFLOW_ONE => PullStatus::NoNewMsg,
        _ => PullStatus::OffsetIllegal,
    };
    let msgs = (status == PullStatus::Found)
        .then(|| r.messages.iter().filter_map(|b| decode_stored(b)).collect());
    Pulled {
        status,
        next_begin_offset: r.next_begin_offset,
        msgs,
    }
}

/// What the op records read so far say (Java's `removeMap`, `opMsgMap`, `doneOpOffset`).
#[derive(Default)]
struct OpState {
    /// half offset -> op offset finishing it
    remove: HashMap<i64, i64>,
    /// op offset -> half offsets it finishes that were not reached yet
    pending: HashMap<i64, HashSet<i64>>,
    /// op offsets fully accounted for
    done: Vec<i64>,
}

/// The check service; owned by the broker controller.
#[derive(Default)]
pub struct TransactionalMessageCheckService {
    task: Mutex<Option<Running>>,
}

/// A started service: the flag a run in progress polls, and the task.
struct Running {
    stopping: Arc<AtomicBool>,
    task: BackgroundTask,
}

impl TransactionalMessageCheckService {
    /// Starts checking; the first run comes one interval after start, as in Java.
    pub fn start(&self, ctx: &Arc<BrokerContext>) {
        let stopping = Arc::new(AtomicBool::new(false));
        let weak: Weak<BrokerContext> = Arc::downgrade(ctx);
        let s = stopping.clone();
        let interval = Duration::from_millis(ctx.config.transaction_check_interval.max(100));
        let task = BackgroundTask::spawn("transaction check", |token| async move {
            while sleep_unless_stopped(&token, interval).await {
                let Some(ctx) = weak.upgrade() else { return };
                let s = s.clone();
                let run = tokio::task::spawn_blocking(move || check(&ctx, &s));
                if let Err(e) = run.await {
                    tracing::error!(error = %e, "transaction check run failed");
                }
            }
        });
        *self.task.lock() = Some(Running { stopping, task });
    }

    pub async fn stop(&self) {
        let task = self.task.lock().take();
        if let Some(r) = task {
            r.stopping.store(true, Ordering::Release);
            r.task.stop().await;
        }
    }
}

/// One check run over every half queue (Java `check`).
pub fn check(ctx: &BrokerContext, stopping: &AtomicBool) {
    let Ok(tc) =
        ctx.topics
            .create_if_absent(RMQ_SYS_TRANS_HALF_TOPIC, 1, PERM_READ | PERM_WRITE, 0)
    else {
        return;
    };
    for queue_id in 0..tc.read_queue_nums.max(0) {
        if stopping.load(Ordering::Acquire) {
            return;
        }
        check_queue(ctx, queue_id, stopping);
    }
}

fn fetch_consume_offset(ctx: &BrokerContext, topic: &str, queue_id: i32) -> i64 {
    ctx.offsets
        .query(CID_SYS_RMQ_TRANS, topic, queue_id)
        .filter(|o| *o >= 0)
        .unwrap_or_else(|| ctx.store.min_offset_in_queue(topic, queue_id))
}

fn update_consume_offset(ctx: &BrokerContext, topic: &str, queue_id: i32, offset: i64) {
    ctx.offsets
        .commit(CID_SYS_RMQ_TRANS, topic, queue_id, offset);
}

/// Java `fillOpRemoveMap`: reads op records from `op_offset` and notes which half offsets
/// (at or above `min_half_offset`) they finish.
fn fill_op_remove_map(
    ctx: &BrokerContext,
    st: &mut OpState,
    queue_id: i32,
    op_offset: i64,
    min_half_offset: i64,
) -> Pulled {
    let pulled = pull(
        ctx,
        RMQ_SYS_TRANS_OP_HALF_TOPIC,
        queue_id,
        op_offset,
        OP_MSG_PULL_NUMS,
    );
    match pulled.status {
        PullStatus::OffsetIllegal | PullStatus::NoMatchedMsg => {
            update_consume_offset(
                ctx,
                RMQ_SYS_TRANS_OP_HALF_TOPIC,
                queue_id,
                pulled.next_begin_offset,
            );
            return pulled;
        }
        PullStatus::NoNewMsg => return pulled,
        PullStatus::Found => {}
    }
    for op in pulled.msgs.iter().flatten() {
        let mut halves = HashSet::new();
        if op.props.get(PROPERTY_TAGS) == Some(REMOVE_TAG) {
            for half in parse_op_body(&op.body) {
                if half >= min_half_offset {
                    st.remove.insert(half, op.queue_offset);
                    halves.insert(half);
                }
            }
        } else {
            tracing::error!(op_offset = op.queue_offset, "op record with an illegal tag");
        }
        if halves.is_empty() {
            st.done.push(op.queue_offset);
        } else {
            st.pending.insert(op.queue_offset, halves);
        }
    }
    pulled
}

/// One queue's walk: what the op records said so far and the last op pull.
struct QueueWalk<'a> {
    ctx: &'a BrokerContext,
    queue_id: i32,
    /// When the walk began: messages stored since wait for the next run.
    start: i64,
    /// The half offset the walk began at (op entries below it are stale).
    half_offset: i64,
    st: OpState,
    op_pull: Pulled,
    nulls: i32,
}

/// What the walk does after looking at one half offset.
enum Step {
    /// The offset is dealt with: go on with the next one.
    Advance,
    /// Continue at this offset (the queue had a hole).
    Jump(i64),
    /// Look at the same offset again (more op records read, or a put-back failed).
    Again,
    /// The rest of the queue is for a later run.
    Stop,
}

/// Walks one half queue (Java `check`'s loop for one message queue) and commits how far it got.
fn check_queue(ctx: &BrokerContext, queue_id: i32, stopping: &AtomicBool) {
    let half_offset = fetch_consume_offset(ctx, RMQ_SYS_TRANS_HALF_TOPIC, queue_id);
    let op_offset = fetch_consume_offset(ctx, RMQ_SYS_TRANS_OP_HALF_TOPIC, queue_id);
    if half_offset < 0 || op_offset < 0 {
        return;
    }
    let mut st = OpState::default();
    let op_pull = fill_op_remove_map(ctx, &mut st, queue_id, op_offset, half_offset);
    let mut walk = QueueWalk {
        ctx,
        queue_id,
        start: now_millis(),
        half_offset,
        st,
        op_pull,
        nulls: 1,
    };
    let (mut i, mut new_offset) = (half_offset, half_offset);
    while now_millis() - walk.start <= MAX_PROCESS_TIME_LIMIT_MS
        && !stopping.load(Ordering::Acquire)
    {
        match walk.visit(i) {
            Step::Advance => i += 1,
            Step::Jump(next) => i = next,
            Step::Again => continue,
            Step::Stop => break,
        }
        new_offset = i;
    }
    if new_offset != half_offset {
        update_consume_offset(ctx, RMQ_SYS_TRANS_HALF_TOPIC, queue_id, new_offset);
    }
    let new_op_offset = calculate_op_offset(&mut walk.st.done, op_offset);
    if new_op_offset != op_offset {
        update_consume_offset(ctx, RMQ_SYS_TRANS_OP_HALF_TOPIC, queue_id, new_op_offset);
    }
}

impl QueueWalk<'_> {
    /// Java's loop body for half offset `i`.
    fn visit(&mut self, i: i64) -> Step {
        if let Some(op) = self.st.remove.remove(&i) {
            self.st.finish(op, i);
            return Step::Advance;
        }
        let ctx = self.ctx;
        let half = pull(ctx, RMQ_SYS_TRANS_HALF_TOPIC, self.queue_id, i, 1);
        let Some(mut msg) = half.msgs.and_then(|m| m.into_iter().next()) else {
            if self.nulls > 1 || half.status == PullStatus::NoNewMsg {
                return Step::Stop;
            }
            self.nulls += 1;
            return Step::Jump(half.next_begin_offset);
        };
        if need_discard(&mut msg, ctx.config.transaction_check_max) || need_skip(ctx, &msg) {
            resolve_discard_msg(ctx, &msg);
            return Step::Advance;
        }
        if msg.store_timestamp >= self.start {
            return Step::Stop; // stored during this run: next run
        }
        let timeout = ctx.config.transaction_time_out as i64;
        let age = now_millis() - msg.born_timestamp;
        let mut immunity = timeout;
        if let Some(secs) = msg.props.get(PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS) {
            immunity = super::immunity_time_for_check(secs, timeout);
            if age <= immunity && check_prepare_queue_offset(ctx, &mut self.st, &msg) {
                return Step::Advance;
            }
        } else if (0..=immunity).contains(&age) {
            return Step::Stop; // not old enough yet: the rest of the queue is younger still
        }
        let need_check = match self.op_pull.msgs.as_deref() {
            None | Some([]) => age > immunity,
            Some([.., last]) => last.born_timestamp - self.start > timeout,
        } || age <= -1;
        if !need_check {
            self.read_more_ops();
            return Step::Again;
        }
        if !put_back_half_msg_queue(ctx, &mut msg) {
            return Step::Again;
        }
        send_check_message(ctx, msg);
        Step::Advance
    }

    /// Reads the next op records; when there are none, pauses before looking again (Java
    /// `SLEEP_WHILE_NO_OP`).
    fn read_more_ops(&mut self) {
        let next = self.op_pull.next_begin_offset;
        self.op_pull = fill_op_remove_map(
            self.ctx,
            &mut self.st,
            self.queue_id,
            next,
            self.half_offset,
        );
        if self.op_pull.status != PullStatus::Found {
            std::thread::sleep(SLEEP_WHILE_NO_OP);
        }
    }
}

impl OpState {
    /// Half offset `half` is finished by op record `op`; the op record is done once every half
    /// offset it lists was reached.
    fn finish(&mut self, op: i64, half: i64) {
        if let Some(set) = self.pending.get_mut(&op) {
            set.remove(&half);
            if set.is_empty() {
                self.pending.remove(&op);
                self.done.push(op);
            }
        }
    }
}

/// Java `calculateOpOffset`: the op offset advances over the consecutive run of done ones.
fn calculate_op_offset(done: &mut [i64], old: i64) -> i64 {
    done.sort_unstable();
    let mut next = old;
    for d in done.iter() {
        if *d == next {
            next += 1;
        } else if *d > next {
            break;
        }
    }
    next
}

/// Java `needDiscard`: true once checked `check_max` times; otherwise counts this check in
/// TRANSACTION_CHECK_TIMES (the re-put copy carries it).
fn need_discard(msg: &mut StoredMessage, check_max: i32) -> bool {
    let times = match msg.props.get(PROPERTY_TRANSACTION_CHECK_TIMES) {
        None => 1,
        Some(s) => {
            let t = s.trim().parse::<i32>().unwrap_or(-1);
            if t >= check_max {
                return true;
            }
            t + 1
        }
    };
    msg.props
        .insert(PROPERTY_TRANSACTION_CHECK_TIMES, times.to_string());
    false
}

/// Java `needSkip`: a half message older than the commit log's retention is given up.
fn need_skip(ctx: &BrokerContext, msg: &StoredMessage) -> bool {
    let reserved_ms = ctx.store.config().file_reserved_time as i64 * 3_600_000;
    now_millis() - msg.born_timestamp > reserved_ms
}

/// Java `putBackHalfMsgQueue`: appends the message (with its new check count) to its half
/// queue again; on success `msg` takes the copy's queue offset and commit-log offset (its store
/// timestamp stays the original's, as in Java).
fn put_back_half_msg_queue(ctx: &BrokerContext, msg: &mut StoredMessage) -> bool {
    let input = transaction_copy(msg, &msg.topic, msg.queue_id);
    let result = ctx.store.put_message(&input).wait_blocking();
    match result
        .append
        .filter(|_| result.status == PutMessageStatus::PUT_OK)
    {
        Some(a) => {
            msg.queue_offset = a.logics_offset;
            msg.phys_offset = a.wrote_offset;
            true
        }
        None => {
            tracing::error!(status = ?result.status, "half message put-back failed");
            false
        }
    }
}

/// Java `checkPrepareQueueOffset`, for a message with CHECK_IMMUNITY_TIME_IN_SECONDS still in
/// its immunity: true when it can be passed over (finished already, or re-put to wait).
fn check_prepare_queue_offset(ctx: &BrokerContext, st: &mut OpState, msg: &StoredMessage) -> bool {
    let Some(prepared) = msg.props.get(PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET) else {
        return put_immunity_msg_back(ctx, msg);
    };
    let prepared = prepared.trim().parse::<i64>().unwrap_or(-1);
    if prepared == -1 {
        return false;
    }
    match st.remove.remove(&prepared) {
        Some(op) => {
            st.done.push(op);
            true
        }
        None => put_immunity_msg_back(ctx, msg),
    }
}

/// Java `putImmunityMsgBackToHalfQueue`: the copy remembers the first half offset in
/// TRAN_PREPARED_QUEUE_OFFSET.
fn put_immunity_msg_back(ctx: &BrokerContext, msg: &StoredMessage) -> bool {
    let mut copy = msg.clone();
    if !copy
        .props
        .contains(PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET)
    {
        copy.props.insert(
            PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET,
            msg.queue_offset.to_string(),
        );
    }
    let input = transaction_copy(&copy, &copy.topic, copy.queue_id);
    ctx.store.put_message(&input).wait_blocking().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_offset_advances_over_consecutive_done_offsets_only() {
        assert_eq!(calculate_op_offset(&mut [3, 1, 2, 5], 1), 4);
        assert_eq!(calculate_op_offset(&mut [], 7), 7);
        assert_eq!(calculate_op_offset(&mut [8, 9], 7), 7);
    }
}
