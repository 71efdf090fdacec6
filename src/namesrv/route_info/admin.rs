//! Route administration: deleting and registering topics, wiping and adding write permission.

use super::{remove_queue_data, RouteInfoManager};
use crate::common::topic::{PERM_READ, PERM_WRITE};
use crate::remoting::body::topic_route::QueueData;

impl RouteInfoManager {
    /// DELETE_TOPIC_IN_NAMESRV without a cluster: the whole route goes.
    pub fn delete_topic(&self, topic: &str) {
        self.tables.write().topic_queue_table.remove(topic);
    }

    /// DELETE_TOPIC_IN_NAMESRV with a cluster: only that cluster's brokers' queues go.
    pub fn delete_topic_in_cluster(&self, topic: &str, cluster: &str) {
        let mut t = self.tables.write();
        let names: Vec<String> = match t.cluster_addr_table.get(cluster) {
            Some(n) => n.iter().cloned().collect(),
            None => return,
        };
        for name in names {
            remove_queue_data(&mut t, topic, &name);
        }
    }

    /// REGISTER_TOPIC_IN_NAMESRV: every QueueData must name a known broker, else nothing changes.
    pub fn register_topic(&self, topic: &str, queue_datas: &[QueueData]) {
        let mut t = self.tables.write();
        if queue_datas.is_empty()
            || queue_datas
                .iter()
                .any(|q| !t.broker_addr_table.contains_key(&q.broker_name))
        {
            return;
        }
        let map = t.topic_queue_table.entry(topic.to_string()).or_default();
        for q in queue_datas {
            map.insert(q.broker_name.clone(), q.clone());
        }
    }

    /// WIPE_WRITE_PERM_OF_BROKER: clears the write bit on every topic of the broker; the count.
    pub fn wipe_write_perm_of_broker(&self, broker_name: &str) -> i32 {
        self.operate_write_perm(broker_name, |perm| perm & !PERM_WRITE)
    }

    /// ADD_WRITE_PERM_OF_BROKER: sets perm to read|write on every topic of the broker; the count.
    pub fn add_write_perm_of_broker(&self, broker_name: &str) -> i32 {
        self.operate_write_perm(broker_name, |_| PERM_READ | PERM_WRITE)
    }

    fn operate_write_perm(&self, broker_name: &str, f: impl Fn(i32) -> i32) -> i32 {
        let mut t = self.tables.write();
        let mut count = 0;
        for qds in t.topic_queue_table.values_mut() {
            if let Some(qd) = qds.get_mut(broker_name) {
                qd.perm = f(qd.perm);
                count += 1;
            }
        }
        count
    }
}
