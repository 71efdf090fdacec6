//! `SubscriptionGroupManager`: consumer group configs (retry and DLQ policy, consume permission),
//! the built-in system groups, auto-creation on first use, persisted as `subscriptionGroup.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::kv::{self, KvMirror};
use super::persist::JsonFile;
use super::MetadataError;
use crate::broker::error::BrokerError;
use crate::common::topic::{
    is_lmq, is_system_group, is_topic_or_group_illegal, CHARACTER_MAX_LENGTH,
};
use crate::remoting::body::data_version::DataVersion;
use crate::remoting::body::subscription_group::{
    SubscriptionGroupConfig, SubscriptionGroupWrapper,
};
use crate::remoting::ResponseCode;
use crate::store::config_files;

/// Groups a Java broker creates for itself at start (5.3.3 `SubscriptionGroupManager.init`), each
/// with the defaults (broadcast consumption enabled). Producer and monitor groups are not among
/// them: GET_ALL_SUBSCRIPTIONGROUP_CONFIG listing them made rocketmq-dashboard show
/// CLIENT_INNER_PRODUCER, SELF_TEST_P_GROUP and __MONITOR_CONSUMER as consumer groups.
const SYSTEM_GROUPS: [&str; 8] = [
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PULL",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
    "CID_RMQ_SYS_TRANS",
];

pub struct SubscriptionGroupManager {
    table: RwLock<BTreeMap<String, Arc<SubscriptionGroupConfig>>>,
    forbidden: RwLock<BTreeMap<String, BTreeMap<String, i32>>>,
    data_version: Mutex<DataVersion>,
    auto_create: bool,
    /// `enableLmq` (Java `LmqSubscriptionGroupManager`): every `%LMQ%` group exists with the
    /// defaults and is never stored.
    lmq: bool,
    file: JsonFile,
    /// Java 5.5.0's subscription group RocksDB (`storeType=defaultRocksDB`), written before the
    /// file.
    kv: Option<KvMirror>,
}

impl SubscriptionGroupManager {
    pub fn load(path: PathBuf, auto_create: bool) -> Result<Self, MetadataError> {
        Self::load_with(path, auto_create, None)
    }

    /// [`Self::load`]; with `kv` (`storeType=defaultRocksDB`) the groups and forbidden bits are
    /// Java 5.5.0's RocksDB's, with `subscriptionGroup.json` imported over them when its version
    /// is newer (`metadata::kv`).
    pub fn load_with(
        path: PathBuf,
        auto_create: bool,
        kv: Option<KvMirror>,
    ) -> Result<Self, MetadataError> {
        let mut table = BTreeMap::new();
        for g in SYSTEM_GROUPS {
            table.insert(g.to_string(), Arc::new(SubscriptionGroupConfig::new(g)));
        }
        let file = JsonFile::new(path);
        let mut forbidden = BTreeMap::new();
        let mut data_version = DataVersion::default();
        let json =
            match file.load() {
                Some(text) => Some(SubscriptionGroupWrapper::decode(text.as_bytes()).map_err(
                    |e| MetadataError::unreadable(file.path(), "subscriptionGroup.json", e),
                )?),
                None => None,
            };
        let mut json_wins = true;
        if let Some(kv) = &kv {
            let read = kv.read()?;
            let json_version = json.as_ref().map(|w| &w.data_version);
            json_wins = read.json_wins(json_version);
            data_version = read.merged_version(json_version);
            for (name, c) in kv::decode_entries("subscription group", &read.entries) {
                insert_group(&mut table, name, c);
            }
            forbidden.extend(kv::decode_entries("forbidden", &read.forbidden));
            if json_wins {
                tracing::info!(db = %kv.path().display(), "subscriptionGroup.json is newer than the config RocksDB: imported");
            }
        }
        if let Some(w) = json.filter(|_| json_wins) {
            for (name, c) in w.subscription_group_table {
                insert_group(&mut table, name, c);
            }
            forbidden.extend(w.forbidden_table);
            if kv.is_none() {
                data_version = w.data_version;
            }
        }
        if let Some(kv) = &kv {
            let separate = kv.read_separate()?;
            if let Some((sep, v)) =
                separate.and_then(|s| s.migrates_over(&data_version).map(|v| (s, v)))
            {
                tracing::info!(db = %kv.path().display(), version = ?v, "imported the subscription groups of the separate config RocksDB (useSingleRocksDBForAllConfigs turned on)");
                for (name, c) in kv::decode_entries("subscription group", &sep.entries) {
                    insert_group(&mut table, name, c);
                }
                forbidden.extend(kv::decode_entries("forbidden", &sep.forbidden));
                data_version = v;
            }
        }
        Ok(Self {
            table: RwLock::new(table),
            forbidden: RwLock::new(forbidden),
            data_version: Mutex::new(data_version),
            auto_create,
            lmq: false,
            file,
            kv,
        })
    }

    /// Serves `%LMQ%` groups as Java's `LmqSubscriptionGroupManager` does (`enableLmq`).
    pub fn with_lmq(mut self, on: bool) -> Self {
        self.lmq = on;
        self
    }

    pub fn find(&self, group: &str) -> Option<Arc<SubscriptionGroupConfig>> {
        if self.lmq && is_lmq(group) {
            return Some(Arc::new(SubscriptionGroupConfig::new(group)));
        }
        self.table.read().get(group).cloned()
    }

    /// Java `findSubscriptionGroupConfig`: creates the group with defaults when auto-creation is
    /// on (or it is a system group); otherwise SUBSCRIPTION_GROUP_NOT_EXIST.
    pub fn find_or_create(&self, group: &str) -> Result<Arc<SubscriptionGroupConfig>, BrokerError> {
        if let Some(c) = self.find(group) {
            return Ok(c);
        }
        // as Java, a name no client could have registered is never auto-created
        if !(self.auto_create || is_system_group(group))
            || group.len() > CHARACTER_MAX_LENGTH
            || is_topic_or_group_illegal(group)
        {
            let remark =
                format!("subscription group [{group}] does not exist, apply first please!");
            return Err(BrokerError::refused(
                ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
                remark,
            ));
        }
        // as Java's ConfigManager.persist, a file that cannot be written is logged and the group
        // serves from memory: a disk gone read-only must not stop consumers reading
        if let Err(e) = self.update(SubscriptionGroupConfig::new(group)) {
            tracing::error!(group, error = %e, "auto-created subscription group not persisted");
        }
        Ok(self.find(group).expect("just created"))
    }

    pub fn all(&self) -> Vec<Arc<SubscriptionGroupConfig>> {
        self.table.read().values().cloned().collect()
    }

    pub fn update(&self, config: SubscriptionGroupConfig) -> Result<(), MetadataError> {
        if self.lmq && is_lmq(&config.group_name) {
            return Ok(());
        }
        self.table
            .write()
            .insert(config.group_name.clone(), Arc::new(config));
        self.changed()
    }

    /// Creates or replaces several groups: a data-version step for each, one persist (Java
    /// `updateSubscriptionGroupConfigList`).
    pub fn update_all(&self, list: Vec<SubscriptionGroupConfig>) -> Result<(), MetadataError> {
        let list: Vec<_> = list
            .into_iter()
            .filter(|g| !(self.lmq && is_lmq(&g.group_name)))
            .collect();
        if list.is_empty() {
            return Ok(());
        }
        {
            let mut table = self.table.write();
            let mut version = self.data_version.lock();
            for g in list {
                table.insert(g.group_name.clone(), Arc::new(g));
                version.next_version();
            }
        }
        self.persist()
    }

    pub fn delete(&self, group: &str) -> Result<bool, MetadataError> {
        let removed = self.table.write().remove(group).is_some();
        self.forbidden.write().remove(group);
        if removed {
            self.changed()?;
        }
        Ok(removed)
    }

    pub fn data_version(&self) -> DataVersion {
        *self.data_version.lock()
    }

    fn changed(&self) -> Result<(), MetadataError> {
        self.data_version.lock().next_version();
        self.persist()
    }

    /// The wrapper body (GET_ALL_SUBSCRIPTIONGROUP_CONFIG) and file content.
    pub fn wrapper(&self) -> SubscriptionGroupWrapper {
        SubscriptionGroupWrapper {
            data_version: self.data_version(),
            forbidden_table: self.forbidden.read().clone(),
            subscription_group_table: self
                .table
                .read()
                .iter()
                .map(|(k, v)| (k.clone(), (**v).clone()))
                .collect(),
        }
    }

    /// Writes `subscriptionGroup.json` (and, first, the RocksDB).
    pub fn persist(&self) -> Result<(), MetadataError> {
        self.file.persist_with(|| {
            let w = self.wrapper();
            if let Some(kv) = &self.kv {
                let groups = kv::encode_values(w.subscription_group_table.iter());
                let forbidden = kv::encode_values(w.forbidden_table.iter());
                kv.write(groups, forbidden, &w.data_version)?;
            }
            Ok(config_files::to_fastjson_pretty(&w))
        })
    }
}

fn insert_group(
    table: &mut BTreeMap<String, Arc<SubscriptionGroupConfig>>,
    name: String,
    mut c: SubscriptionGroupConfig,
) {
    if c.group_name.is_empty() {
        c.group_name = name.clone();
    }
    table.insert(name, Arc::new(c));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh broker's groups are the Java 5.3.3 broker's: these eight, nothing else.
    #[test]
    fn fresh_table_holds_the_java_system_groups_only() {
        let dir = tempfile::tempdir().unwrap();
        let m = SubscriptionGroupManager::load(dir.path().join("subscriptionGroup.json"), true)
            .unwrap();
        let names: Vec<String> = m.wrapper().subscription_group_table.into_keys().collect();
        let mut want: Vec<&str> = SYSTEM_GROUPS.to_vec();
        want.sort_unstable();
        assert_eq!(names, want);
        assert!(m.wrapper().subscription_group_table["CID_RMQ_SYS_TRANS"].consume_broadcast_enable);
    }

    /// Pulls of new groups arriving together each auto-create and persist: every write must
    /// succeed and the file must hold every group.
    #[test]
    fn concurrent_auto_creates_all_persist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config/subscriptionGroup.json");
        let m = Arc::new(SubscriptionGroupManager::load(path.clone(), true).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in 0..20 {
                        m.find_or_create(&format!("G{t}_{i}")).expect("auto-create");
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        for t in 0..8 {
            assert!(text.contains(&format!("\"G{t}_19\"")), "G{t}_19 missing");
        }
    }
}
