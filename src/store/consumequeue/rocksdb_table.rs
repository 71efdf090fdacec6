//! What Java 5.5.0's RocksDB consume queue decides, apart from RocksDB itself: the write batch of
//! one dispatch group (`RocksDBConsumeQueueStore.putMessagePosition0`), the binary searches over
//! units (`RocksDBConsumeQueueTable.binarySearchInCQ*`) and the lazy min correction
//! (`RocksDBConsumeQueueOffsetTable.getMinCqOffset`). Units are read through a closure, so the
//! logic is tested without a database.

use super::rocksdb_codec::{
    checkpoint_key, encode_checkpoint_value, encode_cq_key, encode_cq_value, encode_offset_key,
    encode_offset_value, CqValue, OffsetKind, PhyAndCqOffset, RocksCqCodecError,
};
use crate::store::get::BoundaryType;
use crate::store::lmq::LmqTarget;

/// One dispatched record: its own unit, plus the LMQ units it is copied into (already resolved
/// to `%LMQ%` queue 0 as `lmq::dispatch_targets` does under `enableLmq`).
#[derive(Debug, Clone, Copy)]
pub struct DispatchEntry<'a> {
    pub topic: &'a str,
    pub queue_id: i32,
    pub queue_offset: i64,
    pub unit: CqValue,
    pub lmq: &'a [LmqTarget],
}

/// The puts of one dispatch group, for one `WriteBatch`: every unit (CF `default`), the `max`
/// of each queue touched and the checkpoint (CF `offset`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BatchPlan {
    pub units: Vec<(Vec<u8>, [u8; 28])>,
    pub maxes: Vec<(Vec<u8>, [u8; 16])>,
    /// Max end offset (`phy + size`) of the group's records; `None` for an empty group.
    pub checkpoint: Option<(Vec<u8>, [u8; 8])>,
}

/// Builds the batch as Java does: per queue the `max` is the group's last unit of that queue
/// (Java walks the group backwards and keeps the first seen); the checkpoint is the largest
/// record end, starting from 0.
pub fn plan_batch(entries: &[DispatchEntry<'_>]) -> Result<BatchPlan, RocksCqCodecError> {
    let mut plan = BatchPlan::default();
    if entries.is_empty() {
        return Ok(plan);
    }
    let mut seen = std::collections::HashSet::new();
    let mut max_end = 0i64;
    for e in entries.iter().rev() {
        let own = (e.topic, e.queue_id, e.queue_offset);
        let lmq = e
            .lmq
            .iter()
            .map(|t| (t.queue.as_str(), t.queue_id, t.queue_offset));
        for (topic, queue_id, cq_offset) in std::iter::once(own).chain(lmq) {
            plan.units.push((
                encode_cq_key(topic, queue_id, cq_offset)?,
                encode_cq_value(&e.unit),
            ));
            if seen.insert((topic, queue_id)) {
                let v = PhyAndCqOffset {
                    phy_offset: e.unit.phy_offset,
                    cq_offset,
                };
                plan.maxes.push((
                    encode_offset_key(topic, OffsetKind::Max, queue_id)?,
                    encode_offset_value(&v),
                ));
            }
        }
        let end = e.unit.phy_offset.saturating_add(i64::from(e.unit.size));
        max_end = max_end.max(end);
    }
    plan.checkpoint = Some((checkpoint_key(), encode_checkpoint_value(max_end)));
    Ok(plan)
}

/// Java's `low + ((high - low) >>> 1)`.
fn mid(low: i64, high: i64) -> i64 {
    low.wrapping_add((high.wrapping_sub(low) as u64 >> 1) as i64)
}

/// Java `binarySearchInCQ`: with `min`, the first unit whose phy offset is `>= target`; else the
/// last one whose phy offset is `< target`. A missing unit moves `low` up. `None` when no unit
/// qualifies (Java's `-1`).
pub fn search_by_phy<E>(
    mut low: i64,
    mut high: i64,
    target: i64,
    min: bool,
    mut get: impl FnMut(i64) -> Result<Option<CqValue>, E>,
) -> Result<Option<PhyAndCqOffset>, E> {
    let mut found = None;
    while high >= low {
        let m = mid(low, high);
        let Some(u) = get(m)? else {
            low = m + 1;
            continue;
        };
        let here = PhyAndCqOffset {
            phy_offset: u.phy_offset,
            cq_offset: m,
        };
        if u.phy_offset == target {
            if min {
                found = Some(here);
            }
            break;
        } else if u.phy_offset > target {
            high = m - 1;
            if min {
                found = Some(here);
            }
        } else {
            low = m + 1;
            if !min {
                found = Some(here);
            }
        }
    }
    Ok(found)
}

/// Java `binarySearchInCQByTime` over `[low, high]` on the units' store timestamps; units below
/// `min_phy_offset` (expired) count as too early. `-1` is a possible answer, as in Java.
pub fn search_by_time<E>(
    low: i64,
    high: i64,
    timestamp: i64,
    min_phy_offset: i64,
    boundary: BoundaryType,
    mut get: impl FnMut(i64) -> Result<Option<CqValue>, E>,
) -> Result<i64, E> {
    let (ceiling, floor) = (high, low);
    if let Some(u) = get(ceiling)? {
        if u.store_timestamp < timestamp {
            return Ok(match boundary {
                BoundaryType::Lower => ceiling + 1,
                BoundaryType::Upper => ceiling,
            });
        }
    }
    if let Some(u) = get(floor)? {
        if u.store_timestamp > timestamp {
            return Ok(match boundary {
                BoundaryType::Lower => floor,
                BoundaryType::Upper => 0,
            });
        }
    }
    let (mut low, mut high) = (low, high);
    let (mut target, mut left, mut right) = (None, -1i64, -1i64);
    while high >= low {
        let m = mid(low, high);
        let Some(u) = get(m)? else {
            low = m + 1;
            continue;
        };
        if u.phy_offset < min_phy_offset {
            low = m + 1;
            left = m;
            continue;
        }
        let t = u.store_timestamp;
        if t < 0 {
            return Ok(0);
        } else if t == timestamp {
            target = Some(m);
            break;
        } else if t > timestamp {
            high = m - 1;
            right = m;
        } else {
            low = m + 1;
            left = m;
        }
    }
    let Some(mut target) = target else {
        return Ok(match boundary {
            BoundaryType::Lower => right,
            BoundaryType::Upper => left,
        });
    };
    // Neighbours may share the timestamp: walk to the first (LOWER) or last (UPPER) of them.
    // Java dereferences a missing neighbour (NullPointerException); here it ends the walk.
    let step = match boundary {
        BoundaryType::Lower => -1,
        BoundaryType::Upper => 1,
    };
    loop {
        let next = target + step;
        if next < floor || next > ceiling {
            break;
        }
        match get(next)? {
            Some(u) if u.store_timestamp == timestamp => target = next,
            _ => break,
        }
    }
    Ok(target)
}

/// Outcome of `min_cq_offset`: the answer, and the `min` key to write (WAL off) if Java would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinOffset {
    pub cq_offset: i64,
    pub write: Option<PhyAndCqOffset>,
}

/// Java `getMinCqOffset` given the stored `min` and `max` of a queue and the commit log's min
/// offset: a `min` at or above `min_phy_offset` stands; otherwise it is corrected (no `max`:
/// `(minPhy, 0)`; whole queue expired: `(minPhy, max + 1)`; else the first unit at or above
/// `minPhy`, searched from the old min). When that search finds nothing the old value is
/// answered and the `min` moved to the `max` unit, as Java does.
pub fn min_cq_offset<E>(
    stored_min: Option<PhyAndCqOffset>,
    max: Option<PhyAndCqOffset>,
    min_phy_offset: i64,
    get: impl FnMut(i64) -> Result<Option<CqValue>, E>,
) -> Result<MinOffset, E> {
    let old = stored_min.map_or(0, |m| m.cq_offset);
    if stored_min.is_some_and(|m| m.phy_offset >= min_phy_offset) {
        return Ok(MinOffset {
            cq_offset: old,
            write: None,
        });
    }
    let corrected = |v: PhyAndCqOffset| MinOffset {
        cq_offset: v.cq_offset,
        write: Some(v),
    };
    let Some(max) = max else {
        return Ok(corrected(PhyAndCqOffset {
            phy_offset: min_phy_offset,
            cq_offset: 0,
        }));
    };
    if max.phy_offset < min_phy_offset {
        let v = PhyAndCqOffset {
            phy_offset: min_phy_offset,
            cq_offset: max.cq_offset + 1,
        };
        return Ok(corrected(v));
    }
    match search_by_phy(old, max.cq_offset, min_phy_offset, true, get)? {
        Some(v) => Ok(corrected(v)),
        None => Ok(MinOffset {
            cq_offset: old,
            write: (max.cq_offset != old).then_some(max),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// Units at cq offsets `first..` with phy `1000 * i` and the given timestamps.
    fn queue(
        first: i64,
        times: &[i64],
    ) -> impl FnMut(i64) -> Result<Option<CqValue>, Infallible> + '_ {
        move |i| {
            let t = usize::try_from(i - first).ok().and_then(|k| times.get(k));
            Ok(t.map(|&t| CqValue {
                phy_offset: 1000 * i,
                size: 100,
                tags_code: 0,
                store_timestamp: t,
            }))
        }
    }

    fn unit(phy: i64, size: i32) -> CqValue {
        CqValue {
            phy_offset: phy,
            size,
            tags_code: 7,
            store_timestamp: 1,
        }
    }

    #[test]
    fn batch_keeps_each_queues_last_unit_as_max_and_the_largest_end_as_checkpoint() {
        let lmq = [LmqTarget {
            queue: "%LMQ%a".into(),
            queue_id: 0,
            queue_offset: 9,
        }];
        let entries = [
            DispatchEntry {
                topic: "T",
                queue_id: 1,
                queue_offset: 4,
                unit: unit(100, 50),
                lmq: &[],
            },
            DispatchEntry {
                topic: "T",
                queue_id: 1,
                queue_offset: 5,
                unit: unit(150, 60),
                lmq: &lmq,
            },
            DispatchEntry {
                topic: "T",
                queue_id: 2,
                queue_offset: 0,
                unit: unit(210, 10),
                lmq: &[],
            },
        ];
        let p = plan_batch(&entries).unwrap();
        assert_eq!(p.units.len(), 4);
        let max = |t: &str, q: i32, phy: i64, cq: i64| {
            let v = PhyAndCqOffset {
                phy_offset: phy,
                cq_offset: cq,
            };
            (
                encode_offset_key(t, OffsetKind::Max, q).unwrap(),
                encode_offset_value(&v),
            )
        };
        assert_eq!(
            p.maxes,
            vec![
                max("T", 2, 210, 0),
                max("T", 1, 150, 5),
                max("%LMQ%a", 0, 150, 9)
            ]
        );
        assert_eq!(
            p.checkpoint,
            Some((checkpoint_key(), encode_checkpoint_value(220)))
        );
        assert_eq!(plan_batch(&[]).unwrap(), BatchPlan::default());
    }

    #[test]
    fn time_search_follows_javas_edges_and_boundaries() {
        let times = [10, 20, 20, 20, 30, 40];
        let s = |ts, b| search_by_time(0, 5, ts, 0, b, queue(0, &times)).unwrap();
        assert_eq!(
            (s(50, BoundaryType::Lower), s(50, BoundaryType::Upper)),
            (6, 5)
        );
        assert_eq!(
            (s(5, BoundaryType::Lower), s(5, BoundaryType::Upper)),
            (0, 0)
        );
        assert_eq!(
            (s(20, BoundaryType::Lower), s(20, BoundaryType::Upper)),
            (1, 3)
        );
        assert_eq!(
            (s(25, BoundaryType::Lower), s(25, BoundaryType::Upper)),
            (4, 3)
        );
        assert_eq!(
            (s(40, BoundaryType::Lower), s(40, BoundaryType::Upper)),
            (5, 5)
        );
    }

    #[test]
    fn time_search_treats_expired_units_as_too_early() {
        let times = [10, 20, 30, 40];
        // Units 0 and 1 (phy 0 and 1000) are below the commit log's min offset 1500.
        let r = search_by_time(0, 3, 15, 1500, BoundaryType::Lower, queue(0, &times)).unwrap();
        assert_eq!(r, 2);
        let neg = [10, -1, -1, 40];
        assert_eq!(
            search_by_time(0, 3, 25, 0, BoundaryType::Lower, queue(0, &neg)).unwrap(),
            0
        );
    }

    #[test]
    fn phy_search_finds_first_at_or_above_and_last_below() {
        let times = [0; 6];
        let min = search_by_phy(0, 5, 2500, true, queue(0, &times)).unwrap();
        assert_eq!(
            min,
            Some(PhyAndCqOffset {
                phy_offset: 3000,
                cq_offset: 3
            })
        );
        let max = search_by_phy(0, 5, 2500, false, queue(0, &times)).unwrap();
        assert_eq!(
            max,
            Some(PhyAndCqOffset {
                phy_offset: 2000,
                cq_offset: 2
            })
        );
        assert_eq!(
            search_by_phy(0, 5, 9000, true, queue(0, &times)).unwrap(),
            None
        );
    }

    #[test]
    fn min_offset_is_corrected_lazily_as_java_does() {
        let times = [0; 4]; // units 2..=5, phy 2000..=5000
        let pc = |phy, cq| PhyAndCqOffset {
            phy_offset: phy,
            cq_offset: cq,
        };
        let max = Some(pc(5000, 5));
        let m = min_cq_offset(Some(pc(2000, 2)), max, 1000, queue(2, &times)).unwrap();
        assert_eq!(
            m,
            MinOffset {
                cq_offset: 2,
                write: None
            }
        );
        let m = min_cq_offset(None, max, 2500, queue(2, &times)).unwrap();
        assert_eq!(
            m,
            MinOffset {
                cq_offset: 3,
                write: Some(pc(3000, 3))
            }
        );
        let m = min_cq_offset(None, None, 2500, queue(2, &times)).unwrap();
        assert_eq!(
            m,
            MinOffset {
                cq_offset: 0,
                write: Some(pc(2500, 0))
            }
        );
        let m = min_cq_offset(Some(pc(2000, 2)), max, 6000, queue(2, &times)).unwrap();
        assert_eq!(
            m,
            MinOffset {
                cq_offset: 6,
                write: Some(pc(6000, 6))
            }
        );
    }
}
