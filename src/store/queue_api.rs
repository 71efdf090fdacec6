//! Consume-queue lookups for the broker's admin and offset paths: Java's
//! `checkInMemByConsumeOffset` and the unit dump behind QUERY_CONSUME_QUEUE.

use super::MessageStore;

impl MessageStore {
    /// Java `checkInMemByConsumeOffset`: whether the messages at `offset..offset+count` of a queue
    /// exist and lie within the part of the commit log kept in memory
    /// (`accessMessageInMemoryMaxRatio` of physical memory from the end).
    pub fn check_in_mem_by_consume_offset(
        &self,
        topic: &str,
        queue_id: i32,
        offset: i64,
        count: i64,
    ) -> bool {
        let inner = &self.inner;
        let Some(cq) = inner.cqs.find(topic, queue_id) else {
            return false;
        };
        let Some(unit) = cq.get_unit(offset + count.max(1) - 1) else {
            return false;
        };
        let max_phy = inner.commitlog.max_offset();
        let mem = (inner.total_memory as f64 * inner.cfg.access_message_in_memory_max_ratio as f64
            / 100.0) as i64;
        max_phy.saturating_sub(unit.phy_offset) <= mem
    }

    /// Up to `count` units of a queue from `index`: (physical offset, size, tags code).
    /// `None` when the queue does not exist.
    pub fn consume_queue_units(
        &self,
        topic: &str,
        queue_id: i32,
        index: i64,
        count: i32,
    ) -> Option<Vec<(i64, i32, i64)>> {
        let cq = self.inner.cqs.find(topic, queue_id)?;
        let end = cq
            .max_offset_in_queue()
            .min(index.saturating_add(count.max(0) as i64));
        let start = index.max(cq.min_offset_in_queue());
        Some(
            (start..end)
                .filter_map(|i| cq.get_unit(i))
                .map(|u| (u.phy_offset, u.size, u.tags_code))
                .collect(),
        )
    }
}
