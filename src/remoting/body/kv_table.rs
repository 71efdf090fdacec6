//! `KVTable`: `{"table":{"key":"value",...}}` (GET_KVLIST_BY_NAMESPACE, REGISTER_BROKER response).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::remoting::error::RemotingError;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KVTable {
    pub table: BTreeMap<String, String>,
}

impl KVTable {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RemotingError> {
        super::fastjson::from_slice(bytes).map_err(|e| RemotingError::Body(format!("KVTable: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_shape() {
        let mut t = KVTable::default();
        t.table.insert("TopicA".into(), "broker-a:4".into());
        assert_eq!(
            String::from_utf8(t.encode()).unwrap(),
            r#"{"table":{"TopicA":"broker-a:4"}}"#
        );
        assert_eq!(KVTable::decode(&t.encode()).unwrap(), t);
    }
}
