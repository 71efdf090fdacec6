//! `TopicConfigManager`: the broker's topic table — system topics created at start, `topics.json`
//! laid over them, auto-creation from a template topic (TBW102) on send, and the data version the
//! NameServer registration carries.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::kv::{self, KvMirror};
use super::persist::JsonFile;
use super::MetadataError;
use crate::broker::config::BrokerConfig;
use crate::common::topic::{is_lmq, TopicConfig, PERM_INHERIT, PERM_READ, PERM_WRITE};
use crate::remoting::body::data_version::DataVersion;
use crate::remoting::body::register_broker::TopicConfigSerializeWrapper;
use crate::store::config_files;

pub const AUTO_CREATE_TOPIC_KEY_TOPIC: &str = "TBW102";
pub const SCHEDULE_TOPIC: &str = "SCHEDULE_TOPIC_XXXX";

pub struct TopicConfigManager {
    table: RwLock<BTreeMap<String, Arc<TopicConfig>>>,
    /// `enableLmq` (Java `LmqTopicConfigManager`): every `%LMQ%` topic exists, with one queue and
    /// read/write permission, and is never stored.
    lmq: bool,
    data_version: Mutex<DataVersion>,
    file: JsonFile,
    /// Java 5.5.0's topics RocksDB (`storeType=defaultRocksDB`), written before the file.
    kv: Option<KvMirror>,
}

impl TopicConfigManager {
    /// Builds the system topics for `config`, then loads `topics.json` (or its `.bak`) over them.
    pub fn load(config: &BrokerConfig, path: PathBuf) -> Result<Self, MetadataError> {
        Self::load_with(config, path, None)
    }

    /// [`Self::load`]; with `kv` (`storeType=defaultRocksDB`) the topics are Java 5.5.0's
    /// RocksDB's, with `topics.json` imported over them when its version is newer
    /// (`metadata::kv`).
    pub fn load_with(
        config: &BrokerConfig,
        path: PathBuf,
        kv: Option<KvMirror>,
    ) -> Result<Self, MetadataError> {
        let mut table = BTreeMap::new();
        for t in system_topics(config) {
            table.insert(t.topic_name.clone(), Arc::new(t));
        }
        let file = JsonFile::new(path);
        let mut data_version = DataVersion::default();
        let json = match file.load() {
            Some(text) => Some(
                crate::common::fastjson::from_str::<TopicConfigSerializeWrapper>(&text)
                    .map_err(|e| MetadataError::unreadable(file.path(), "topics.json", e))?,
            ),
            None => None,
        };
        let mut json_wins = true;
        if let Some(kv) = &kv {
            let read = kv.read()?;
            let json_version = json.as_ref().map(|w| &w.data_version);
            json_wins = read.json_wins(json_version);
            data_version = read.merged_version(json_version);
            for (name, tc) in kv::decode_entries::<TopicConfig>("topic", &read.entries) {
                insert_topic(&mut table, name, tc);
            }
            if json_wins {
                tracing::info!(db = %kv.path().display(), "topics.json is newer than the config RocksDB: imported");
            }
        }
        if let Some(wrapper) = json.filter(|_| json_wins) {
            for (name, tc) in wrapper.topic_config_table {
                insert_topic(&mut table, name, tc);
            }
            if kv.is_none() {
                data_version = wrapper.data_version;
            }
        }
        if let Some(kv) = &kv {
            let separate = kv.read_separate()?;
            if let Some((sep, v)) =
                separate.and_then(|s| s.migrates_over(&data_version).map(|v| (s, v)))
            {
                tracing::info!(db = %kv.path().display(), version = ?v, "imported the topics of the separate config RocksDB (useSingleRocksDBForAllConfigs turned on)");
                for (name, tc) in kv::decode_entries::<TopicConfig>("topic", &sep.entries) {
                    insert_topic(&mut table, name, tc);
                }
                data_version = v;
            }
        }
        Ok(Self {
            table: RwLock::new(table),
            lmq: false,
            data_version: Mutex::new(data_version),
            file,
            kv,
        })
    }

    /// Serves `%LMQ%` topics as Java's `LmqTopicConfigManager` does (`enableLmq`).
    pub fn with_lmq(mut self, on: bool) -> Self {
        self.lmq = on;
        self
    }

    fn is_lmq(&self, topic: &str) -> bool {
        self.lmq && is_lmq(topic)
    }

    pub fn select(&self, topic: &str) -> Option<Arc<TopicConfig>> {
        if self.is_lmq(topic) {
            return Some(Arc::new(TopicConfig::new(
                topic,
                1,
                1,
                PERM_READ | PERM_WRITE,
            )));
        }
        self.table.read().get(topic).cloned()
    }

    pub fn contains(&self, topic: &str) -> bool {
        self.is_lmq(topic) || self.table.read().contains_key(topic)
    }

    pub fn all(&self) -> Vec<Arc<TopicConfig>> {
        self.table.read().values().cloned().collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.table.read().keys().cloned().collect()
    }

    pub fn data_version(&self) -> DataVersion {
        *self.data_version.lock()
    }

    /// Creates or replaces a topic, bumps the data version and persists.
    pub fn update(&self, tc: TopicConfig) -> Result<(), MetadataError> {
        if self.is_lmq(&tc.topic_name) {
            return Ok(());
        }
        self.table
            .write()
            .insert(tc.topic_name.clone(), Arc::new(tc));
        self.changed()
    }

    /// Creates or replaces several topics: a data-version step for each, one persist (Java
    /// `updateTopicConfigList`).
    pub fn update_all(&self, list: Vec<TopicConfig>) -> Result<(), MetadataError> {
        let list: Vec<_> = list
            .into_iter()
            .filter(|tc| !self.is_lmq(&tc.topic_name))
            .collect();
        if list.is_empty() {
            return Ok(());
        }
        {
            let mut table = self.table.write();
            let mut version = self.data_version.lock();
            for tc in list {
                table.insert(tc.topic_name.clone(), Arc::new(tc));
                version.next_version();
            }
        }
        self.persist()
    }

    /// Removes a topic; false when it did not exist.
    pub fn delete(&self, topic: &str) -> Result<bool, MetadataError> {
        let removed = self.table.write().remove(topic).is_some();
        if removed {
            self.changed()?;
        }
        Ok(removed)
    }

    /// Java `createTopicInSendMessageMethod`: a new topic from a template that has PERM_INHERIT.
    /// `None` when the template is missing or may not be inherited.
    pub fn create_from_template(
        &self,
        topic: &str,
        template: &str,
        client_queue_nums: i32,
        topic_sys_flag: i32,
    ) -> Result<Option<Arc<TopicConfig>>, MetadataError> {
        if let Some(existing) = self.select(topic) {
            return Ok(Some(existing));
        }
        let Some(tpl) = self.select(template) else {
            return Ok(None);
        };
        if tpl.perm & PERM_INHERIT == 0 {
            return Ok(None);
        }
        let queues = client_queue_nums.min(tpl.write_queue_nums).max(1);
        let mut tc = TopicConfig::new(topic, queues, queues, tpl.perm & !PERM_INHERIT);
        tc.topic_sys_flag = topic_sys_flag;
        tc.topic_filter_type = tpl.topic_filter_type.clone();
        self.update(tc)?;
        Ok(self.select(topic))
    }

    /// Java `createTopicInSendMessageBackMethod`: retry/DLQ topics made on first use.
    pub fn create_if_absent(
        &self,
        topic: &str,
        queue_nums: i32,
        perm: i32,
        sys_flag: i32,
    ) -> Result<Arc<TopicConfig>, MetadataError> {
        if let Some(existing) = self.select(topic) {
            return Ok(existing);
        }
        let mut tc = TopicConfig::new(topic, queue_nums, queue_nums, perm);
        tc.topic_sys_flag = sys_flag;
        self.update(tc)?;
        Ok(self.select(topic).expect("just inserted"))
    }

    fn changed(&self) -> Result<(), MetadataError> {
        self.data_version.lock().next_version();
        self.persist()
    }

    /// Writes `topics.json` in the shape the Java broker reads (and, first, the RocksDB).
    pub fn persist(&self) -> Result<(), MetadataError> {
        // the file holds no mapping fields (Java's TopicConfigManager.encode)
        self.file.persist_with(|| {
            let wrapper = config_files::types::TopicConfigSerializeWrapper {
                topic_config_table: self
                    .table
                    .read()
                    .iter()
                    .map(|(k, v)| (k.clone(), (**v).clone()))
                    .collect(),
                data_version: self.data_version(),
            };
            if let Some(kv) = &self.kv {
                let values = kv::encode_values(wrapper.topic_config_table.iter());
                kv.write(values, Default::default(), &wrapper.data_version)?;
            }
            Ok(config_files::to_fastjson_pretty(&wrapper))
        })
    }
}

fn insert_topic(table: &mut BTreeMap<String, Arc<TopicConfig>>, name: String, mut tc: TopicConfig) {
    if tc.topic_name.is_empty() {
        tc.topic_name = name.clone();
    }
    table.insert(name, Arc::new(tc));
}

/// The topics a Java 5.x broker creates for itself at every start (store-format.md §8.1).
fn system_topics(c: &BrokerConfig) -> Vec<TopicConfig> {
    let rw = PERM_READ | PERM_WRITE;
    let mut v = vec![TopicConfig::new("SELF_TEST_TOPIC", 1, 1, rw)];
    if c.auto_create_topic_enable {
        let n = c.default_topic_queue_nums;
        v.push(TopicConfig::new(
            AUTO_CREATE_TOPIC_KEY_TOPIC,
            n,
            n,
            PERM_INHERIT | rw,
        ));
    }
    v.push(TopicConfig::new("BenchmarkTest", 1024, 1024, rw));
    let inherit_if = |on: bool| if on { PERM_INHERIT | rw } else { PERM_INHERIT };
    v.push(TopicConfig::new(
        &c.broker_cluster_name,
        16,
        16,
        inherit_if(c.cluster_topic_enable),
    ));
    v.push(TopicConfig::new(
        &c.broker_name,
        1,
        1,
        inherit_if(c.broker_topic_enable),
    ));
    v.push(TopicConfig::new("OFFSET_MOVED_EVENT", 1, 1, rw));
    v.push(TopicConfig::new(SCHEDULE_TOPIC, 18, 18, rw));
    if c.trace_topic_enable {
        v.push(TopicConfig::new(&c.msg_trace_topic_name, 1, 1, rw));
    }
    // Request/reply: where SEND_REPLY_MESSAGE stores replies (Java `REPLY_TOPIC_POSTFIX`).
    v.push(TopicConfig::new(
        &format!("{}_REPLY_TOPIC", c.broker_cluster_name),
        1,
        1,
        rw,
    ));
    v.push(TopicConfig::new(
        &format!("rmq_sys_REVIVE_LOG_{}", c.broker_cluster_name),
        c.revive_queue_num,
        c.revive_queue_num,
        rw,
    ));
    v.push(TopicConfig::new(
        &format!("rmq_sys_SYNC_BROKER_MEMBER_{}", c.broker_name),
        1,
        1,
        PERM_INHERIT,
    ));
    v.push(TopicConfig::new("RMQ_SYS_TRANS_HALF_TOPIC", 1, 1, rw));
    v.push(TopicConfig::new("RMQ_SYS_TRANS_OP_HALF_TOPIC", 1, 1, rw));
    v.push(TopicConfig::new("rmq_sys_wheel_timer", 1, 1, rw));
    v
}
