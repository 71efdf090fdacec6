//! Lite topics (Java 5.5.0, seed 004): child queues of a LITE parent topic stored as LMQs named
//! `%LMQ%$<parent>$<lite>`. This is the broker's memory of who consumes them, as Java keeps it
//! (nothing here is persisted): the clients' lite subscriptions (`LiteSubscriptionRegistryImpl`),
//! each client's event set — the LMQs it is told have messages (`LiteEventDispatcher`) — the
//! POP_LITE requests held per client, and the per-(group, LMQ) order info that makes every lite
//! queue FIFO (`MemoryConsumerOrderInfoManager`).

pub mod lifecycle;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::broker::long_polling::PullRequestHoldService;
use crate::broker::pop::order_info::ConsumerOrderInfoManager;
use crate::common::topic::lite_parent_and_topic;
use crate::server::Connection;

/// Java `maxClientEventCount`: a client's event set holds this many LMQs unless its group says
/// otherwise (`lite.sub.client.max.event.cnt`).
pub const DEFAULT_MAX_CLIENT_EVENTS: usize = 100;

/// A client's lite subscription and its events.
struct Client {
    group: String,
    topic: String,
    lmqs: HashSet<String>,
    conn: Option<Weak<Connection>>,
    events: VecDeque<String>,
    queued: HashSet<String>,
    max_events: usize,
    /// ms of the last POP_LITE (GET_LITE_CLIENT_INFO's lastAccessTime).
    last_access: i64,
}

impl Client {
    fn offer(&mut self, lmq: &str) -> bool {
        if self.queued.contains(lmq) {
            return true;
        }
        if self.events.len() >= self.max_events {
            return false;
        }
        self.queued.insert(lmq.to_string());
        self.events.push_back(lmq.to_string());
        true
    }
}

#[derive(Default)]
struct Registry {
    clients: HashMap<String, Client>,
    /// LMQ → (group, clientId) subscribed to it.
    subscribers: HashMap<String, BTreeSet<(String, String)>>,
    /// (client, LMQ) references (Java's active subscription count, against `maxLiteSubscriptionCount`).
    active: usize,
}

impl Registry {
    fn register(&mut self, client: &str, group: &str, lmq: &str) -> bool {
        let added = self
            .subscribers
            .entry(lmq.to_string())
            .or_default()
            .insert((group.to_string(), client.to_string()));
        if added {
            self.active += 1;
        }
        added
    }

    fn unregister(&mut self, client: &str, group: &str, lmq: &str) {
        if let Some(s) = self.subscribers.get_mut(lmq) {
            if s.remove(&(group.to_string(), client.to_string())) {
                self.active -= 1;
            }
            if s.is_empty() {
                self.subscribers.remove(lmq);
            }
        }
    }
}

/// A client another took a lite topic from (exclusive groups): NOTIFY_UNSUBSCRIBE_LITE goes to it.
pub struct Evicted {
    pub client_id: String,
    pub group: String,
    pub lmq: String,
    pub conn: Option<Arc<Connection>>,
}

/// What a subscription change asks of the caller once the registry is unlocked.
#[derive(Default)]
pub struct Registered {
    /// LMQs newly subscribed (an event is dispatched for each that has messages).
    pub added: Vec<String>,
    pub evicted: Vec<Evicted>,
}

pub struct LiteService {
    reg: Mutex<Registry>,
    /// (group, LMQ) → when a wake-up is scheduled for its FIFO block's end (one per key).
    wakes: dashmap::DashMap<(String, String), i64>,
    /// POP_LITE requests held, keyed by (clientId, 0).
    pub hold: PullRequestHoldService,
    /// FIFO state of every (LMQ, group); memory only, as Java's.
    pub order: ConsumerOrderInfoManager,
    rotate: AtomicUsize,
}

impl Default for LiteService {
    fn default() -> Self {
        Self::new()
    }
}

impl LiteService {
    pub fn new() -> Self {
        Self {
            reg: Mutex::new(Registry::default()),
            wakes: dashmap::DashMap::new(),
            hold: PullRequestHoldService::new(),
            order: ConsumerOrderInfoManager::in_memory(),
            rotate: AtomicUsize::new(0),
        }
    }

    /// (client, LMQ) subscriptions in all.
    pub fn active(&self) -> usize {
        self.reg.lock().active
    }

    /// Clients with a lite subscription, and their pending events in all.
    pub fn sizes(&self) -> (usize, usize) {
        let r = self.reg.lock();
        let events = r.clients.values().map(|c| c.events.len()).sum();
        (r.clients.len(), events)
    }

    /// PARTIAL_ADD / COMPLETE_ADD: `lmqs` become (part of) the client's subscription. With
    /// `complete` the subscription is exactly `lmqs`. In an exclusive group the other clients
    /// of the group lose each added LMQ.
    #[allow(clippy::too_many_arguments)]
    pub fn subscribe(
        &self,
        client_id: &str,
        group: &str,
        topic: &str,
        lmqs: &[String],
        conn: &Arc<Connection>,
        max_events: usize,
        exclusive: bool,
        complete: bool,
    ) -> Registered {
        let mut out = Registered::default();
        let mut r = self.reg.lock();
        let c = r
            .clients
            .entry(client_id.to_string())
            .or_insert_with(|| Client {
                group: group.to_string(),
                topic: topic.to_string(),
                lmqs: HashSet::new(),
                conn: None,
                events: VecDeque::new(),
                queued: HashSet::new(),
                max_events,
                last_access: 0,
            });
        c.conn = Some(Arc::downgrade(conn));
        c.max_events = max_events;
        let group = c.group.clone();
        if complete {
            let keep: HashSet<&String> = lmqs.iter().collect();
            let gone: Vec<String> = c
                .lmqs
                .iter()
                .filter(|l| !keep.contains(l))
                .cloned()
                .collect();
            for l in &gone {
                c.lmqs.remove(l);
            }
            for l in gone {
                r.unregister(client_id, &group, &l);
            }
        }
        for lmq in lmqs {
            if let Some(c) = r.clients.get_mut(client_id) {
                c.lmqs.insert(lmq.clone());
            }
            if exclusive && !complete {
                let others: Vec<String> = r
                    .subscribers
                    .get(lmq)
                    .map(|s| {
                        s.iter()
                            .filter(|(g, c)| g == &group && c != client_id)
                            .map(|(_, c)| c.clone())
                            .collect()
                    })
                    .unwrap_or_default();
                for other in others {
                    let conn = r.clients.get_mut(&other).and_then(|oc| {
                        oc.lmqs.remove(lmq);
                        oc.conn.as_ref().and_then(Weak::upgrade)
                    });
                    if r.clients.get(&other).is_some_and(|oc| oc.lmqs.is_empty()) {
                        r.clients.remove(&other);
                    }
                    r.unregister(&other, &group, lmq);
                    out.evicted.push(Evicted {
                        client_id: other,
                        group: group.clone(),
                        lmq: lmq.clone(),
                        conn,
                    });
                }
            }
            if r.register(client_id, &group, lmq) {
                out.added.push(lmq.clone());
            }
        }
        out
    }

    /// PARTIAL_REMOVE.
    pub fn unsubscribe(&self, client_id: &str, lmqs: &[String]) {
        let mut r = self.reg.lock();
        let Some(group) = r.clients.get(client_id).map(|c| c.group.clone()) else {
            return;
        };
        for lmq in lmqs {
            if let Some(c) = r.clients.get_mut(client_id) {
                c.lmqs.remove(lmq);
            }
            r.unregister(client_id, &group, lmq);
        }
    }

    /// COMPLETE_REMOVE (or the client's connection gone): forgets it; its pending events are
    /// returned, for dispatch to the other clients of `group`.
    pub fn remove_client(&self, client_id: &str) -> Option<(String, Vec<String>)> {
        let mut r = self.reg.lock();
        let c = r.clients.remove(client_id)?;
        for lmq in &c.lmqs {
            r.unregister(client_id, &c.group, lmq);
        }
        Some((c.group, c.events.into_iter().collect()))
    }

    /// Clients whose connection is gone.
    pub fn disconnected(&self) -> Vec<String> {
        let r = self.reg.lock();
        r.clients
            .iter()
            .filter(|(_, c)| {
                c.conn
                    .as_ref()
                    .and_then(Weak::upgrade)
                    .is_none_or(|conn| conn.is_closed())
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Java `doDispatch`: the LMQ is offered to one subscriber per group (of `group` only, when
    /// given), avoiding `exclude` unless it is the only one; returns the clients to wake.
    pub fn dispatch(&self, group: Option<&str>, lmq: &str, exclude: Option<&str>) -> Vec<String> {
        let mut r = self.reg.lock();
        let Some(subs) = r.subscribers.get(lmq) else {
            return Vec::new();
        };
        let mut by_group: HashMap<String, Vec<String>> = HashMap::new();
        for (g, c) in subs {
            if group.is_none_or(|want| want == g) {
                by_group.entry(g.clone()).or_default().push(c.clone());
            }
        }
        let mut woken = Vec::new();
        for (_, clients) in by_group {
            let start = self.rotate.fetch_add(1, Ordering::Relaxed) % clients.len();
            let order = (0..clients.len()).map(|i| &clients[(start + i) % clients.len()]);
            let (mut first, mut last): (Vec<&String>, Vec<&String>) = (Vec::new(), Vec::new());
            for c in order {
                if Some(c.as_str()) == exclude {
                    last.push(c);
                } else {
                    first.push(c);
                }
            }
            for c in first.into_iter().chain(last) {
                if r.clients.get_mut(c).is_some_and(|cl| cl.offer(lmq)) {
                    woken.push(c.clone());
                    break;
                }
            }
        }
        woken
    }

    /// [`Self::dispatch`], then wakes the POP_LITE requests held for the chosen clients.
    pub fn dispatch_and_wake(&self, group: Option<&str>, lmq: &str, exclude: Option<&str>) {
        for client in self.dispatch(group, lmq, exclude) {
            self.hold.notify_arrival(&client, 0);
        }
    }

    /// When the (group, LMQ) FIFO block ends at `at_ms`, offers the LMQ to the group again (Java:
    /// the order-info lock manager's `notifyLockIsFree` dispatches a lite queue's event), so
    /// what was popped and not acknowledged comes back without new traffic.
    pub fn wake_when_free(self: &Arc<Self>, group: &str, lmq: &str, at_ms: i64) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let now = crate::broker::now_millis();
        let key = (group.to_string(), lmq.to_string());
        {
            let mut slot = self.wakes.entry(key.clone()).or_insert(i64::MAX);
            if *slot > now && *slot <= at_ms {
                return;
            }
            *slot = at_ms;
        }
        let svc = Arc::downgrade(self);
        let wait = at_ms.saturating_sub(now).clamp(0, 600_000) as u64;
        rt.spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(wait + 1)).await;
            let Some(svc) = svc.upgrade() else { return };
            svc.wakes.remove_if(&key, |_, t| *t == at_ms);
            let (group, lmq) = key;
            let now = crate::broker::now_millis();
            match svc.order.lock_free_at(&lmq, &group, 0, now) {
                Some(t) if t > now => svc.wake_when_free(&group, &lmq, t),
                _ => svc.dispatch_and_wake(Some(&group), &lmq, None),
            }
        });
    }

    /// Offers one LMQ to one client (a full dispatch); false when its event set is full.
    pub fn offer(&self, client_id: &str, lmq: &str) -> bool {
        self.reg
            .lock()
            .clients
            .get_mut(client_id)
            .is_some_and(|c| c.offer(lmq))
    }

    /// The next LMQ the client was told has messages (Java's event iterator polls it).
    pub fn next_event(&self, client_id: &str, now: i64) -> Option<String> {
        let mut r = self.reg.lock();
        let c = r.clients.get_mut(client_id)?;
        c.last_access = now;
        let lmq = c.events.pop_front()?;
        c.queued.remove(&lmq);
        Some(lmq)
    }

    /// The client's group, parent topic and LMQs.
    pub fn subscription(&self, client_id: &str) -> Option<(String, String, Vec<String>, i64)> {
        let r = self.reg.lock();
        let c = r.clients.get(client_id)?;
        let mut lmqs: Vec<String> = c.lmqs.iter().cloned().collect();
        lmqs.sort();
        Some((c.group.clone(), c.topic.clone(), lmqs, c.last_access))
    }

    /// (clientId, group) subscribed to the LMQ.
    pub fn subscribers(&self, lmq: &str) -> Vec<(String, String)> {
        let r = self.reg.lock();
        r.subscribers
            .get(lmq)
            .map(|s| s.iter().map(|(g, c)| (c.clone(), g.clone())).collect())
            .unwrap_or_default()
    }

    /// Clients of a group.
    pub fn clients_of(&self, group: &str) -> Vec<String> {
        let r = self.reg.lock();
        r.clients
            .iter()
            .filter(|(_, c)| c.group == group)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Java `cleanSubscription(lmq, false)`: the LMQ is gone (TTL, parent deleted).
    pub fn forget_lmq(&self, lmq: &str) {
        let mut r = self.reg.lock();
        if let Some(subs) = r.subscribers.remove(lmq) {
            r.active -= subs.len();
            for (_, c) in subs {
                if let Some(cl) = r.clients.get_mut(&c) {
                    cl.lmqs.remove(lmq);
                }
            }
        }
    }
}

/// The parent topic of a lite LMQ name.
pub fn parent_of(lmq: &str) -> Option<&str> {
    lite_parent_and_topic(lmq).map(|(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Arc<Connection> {
        Connection::detached_for_tests()
    }

    #[test]
    fn an_event_goes_to_one_client_per_group_and_is_polled_once() {
        let s = LiteService::new();
        let c = conn();
        let lmq = "%LMQ%$P$l1".to_string();
        for (client, group) in [("c1", "G"), ("c2", "G"), ("c3", "H")] {
            let r = s.subscribe(
                client,
                group,
                "P",
                std::slice::from_ref(&lmq),
                &c,
                2,
                false,
                false,
            );
            assert_eq!(r.added, std::slice::from_ref(&lmq));
        }
        assert_eq!(s.active(), 3);
        let woken = s.dispatch(None, &lmq, None);
        assert_eq!(woken.len(), 2, "one per group: {woken:?}");
        assert!(woken.contains(&"c3".to_string()));
        let g = woken.iter().find(|c| *c != "c3").unwrap();
        assert_eq!(s.next_event(g, 1).as_deref(), Some(lmq.as_str()));
        assert_eq!(s.next_event(g, 1), None);
        // a full event set refuses
        let mut filled = 0;
        for i in 0..3 {
            let l = format!("%LMQ%$P$x{i}");
            s.subscribe(
                "c3",
                "H",
                "P",
                std::slice::from_ref(&l),
                &c,
                2,
                false,
                false,
            );
            filled += s.dispatch(Some("H"), &l, None).len();
        }
        assert_eq!(filled, 1, "c3 already held l1; room for one more");
    }

    #[test]
    fn an_exclusive_group_moves_a_lite_topic_to_the_newest_client() {
        let s = LiteService::new();
        let c = conn();
        let lmq = "%LMQ%$P$l".to_string();
        s.subscribe(
            "old",
            "G",
            "P",
            std::slice::from_ref(&lmq),
            &c,
            10,
            true,
            false,
        );
        let r = s.subscribe(
            "new",
            "G",
            "P",
            std::slice::from_ref(&lmq),
            &c,
            10,
            true,
            false,
        );
        assert_eq!(r.evicted.len(), 1);
        assert_eq!(r.evicted[0].client_id, "old");
        assert_eq!(s.subscribers(&lmq), [("new".to_string(), "G".to_string())]);
        assert!(
            s.subscription("old").is_none(),
            "a client left with nothing is forgotten"
        );
        s.forget_lmq(&lmq);
        assert_eq!(s.active(), 0);
        assert!(s.subscription("new").unwrap().2.is_empty());
    }
}
