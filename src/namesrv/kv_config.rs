//! `KVConfigManager`: namespace -> key -> value, persisted after every change to `kvConfigPath`
//! as Java writes it: `{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicA":"broker-a:4"}}}`, the
//! previous content kept in `<path>.bak`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::common::json_file::{self, bak_path, JsonFileError};
use crate::remoting::body::kv_table::KVTable;

/// The namespace whose entries become `orderTopicConf` in routes.
pub const NAMESPACE_ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

type Table = BTreeMap<String, BTreeMap<String, String>>;

/// `KVConfigSerializeWrapper`, the file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct KvConfigFile {
    config_table: Table,
}

#[derive(Debug)]
pub struct KvConfigManager {
    path: PathBuf,
    table: RwLock<Table>,
}

impl KvConfigManager {
    /// An empty table persisted to `path`; call `load` to read what is there.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            table: RwLock::new(Table::new()),
        }
    }

    /// Reads `path` (or its `.bak` when the file is missing or unreadable). A missing file is an
    /// empty table; an unparsable one is logged and ignored, as Java does.
    pub fn load(&self) {
        for candidate in [self.path.clone(), bak_path(&self.path)] {
            let Ok(text) = std::fs::read_to_string(&candidate) else {
                continue;
            };
            match crate::common::fastjson::from_str::<KvConfigFile>(&text) {
                Ok(file) => {
                    self.table.write().extend(file.config_table);
                    return;
                }
                Err(e) => {
                    tracing::warn!(path = %candidate.display(), error = %e, "bad kvConfig file")
                }
            }
        }
    }

    pub fn put(&self, namespace: &str, key: &str, value: &str) {
        self.table
            .write()
            .entry(namespace.to_string())
            .or_default()
            .insert(key.to_string(), value.to_string());
        self.persist_logged();
    }

    pub fn get(&self, namespace: &str, key: &str) -> Option<String> {
        self.table.read().get(namespace)?.get(key).cloned()
    }

    pub fn delete(&self, namespace: &str, key: &str) {
        if let Some(ns) = self.table.write().get_mut(namespace) {
            ns.remove(key);
        }
        self.persist_logged();
    }

    /// The namespace as a KVTable body, `None` when the namespace was never created.
    pub fn kv_list(&self, namespace: &str) -> Option<KVTable> {
        self.table
            .read()
            .get(namespace)
            .map(|t| KVTable { table: t.clone() })
    }

    /// Writes the table durably, the previous content kept as `.bak` (`common::json_file`).
    pub fn persist(&self) -> Result<(), JsonFileError> {
        let content = {
            let table = self.table.read();
            let file = KvConfigFile {
                config_table: table.clone(),
            };
            serde_json::to_vec(&file).unwrap_or_default()
        };
        json_file::write(&self.path, &content)
    }

    fn persist_logged(&self) {
        if let Err(e) = self.persist() {
            tracing::error!(path = %self.path.display(), error = %e, "persist kvConfig failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persists_in_java_shape_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("namesrv").join("kvConfig.json");
        let kv = KvConfigManager::new(path.clone());
        kv.put(NAMESPACE_ORDER_TOPIC_CONFIG, "TopicA", "broker-a:4");
        kv.put("ns", "k", "v");
        kv.delete("ns", "k");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicA":"broker-a:4"},"ns":{}}}"#
        );
        assert!(bak_path(&path).exists());
        let again = KvConfigManager::new(path);
        again.load();
        assert_eq!(
            again.get(NAMESPACE_ORDER_TOPIC_CONFIG, "TopicA").as_deref(),
            Some("broker-a:4")
        );
        assert_eq!(again.kv_list("ns").unwrap().table.len(), 0);
        assert!(again.kv_list("missing").is_none());
    }
}
