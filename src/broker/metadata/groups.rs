//! `SubscriptionGroupManager`: consumer group configs (retry and DLQ policy, consume permission),
//! the built-in system groups, auto-creation on first use, persisted as `subscriptionGroup.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::persist::JsonFile;
use super::MetadataError;
use crate::broker::error::BrokerError;
use crate::common::topic::is_system_group;
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
    file: JsonFile,
}

impl SubscriptionGroupManager {
    pub fn load(path: PathBuf, auto_create: bool) -> Result<Self, MetadataError> {
        let mut table = BTreeMap::new();
        for g in SYSTEM_GROUPS {
            table.insert(g.to_string(), Arc::new(SubscriptionGroupConfig::new(g)));
        }
        let file = JsonFile::new(path);
        let mut forbidden = BTreeMap::new();
        let mut data_version = DataVersion::default();
        if let Some(text) = file.load() {
            let w = SubscriptionGroupWrapper::decode(text.as_bytes())
                .map_err(|e| MetadataError::unreadable(file.path(), "subscriptionGroup.json", e))?;
            for (name, mut c) in w.subscription_group_table {
                if c.group_name.is_empty() {
                    c.group_name = name.clone();
                }
                table.insert(name, Arc::new(c));
            }
            forbidden = w.forbidden_table;
            data_version = w.data_version;
        }
        Ok(Self {
            table: RwLock::new(table),
            forbidden: RwLock::new(forbidden),
            data_version: Mutex::new(data_version),
            auto_create,
            file,
        })
    }

    pub fn find(&self, group: &str) -> Option<Arc<SubscriptionGroupConfig>> {
        self.table.read().get(group).cloned()
    }

    /// Java `findSubscriptionGroupConfig`: creates the group with defaults when auto-creation is
    /// on (or it is a system group); otherwise SUBSCRIPTION_GROUP_NOT_EXIST.
    pub fn find_or_create(&self, group: &str) -> Result<Arc<SubscriptionGroupConfig>, BrokerError> {
        if let Some(c) = self.find(group) {
            return Ok(c);
        }
        if !(self.auto_create || is_system_group(group)) {
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
        self.table
            .write()
            .insert(config.group_name.clone(), Arc::new(config));
        self.changed()
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

    pub fn persist(&self) -> Result<(), MetadataError> {
        self.file
            .persist(|| config_files::to_fastjson_pretty(&self.wrapper()))
    }
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
