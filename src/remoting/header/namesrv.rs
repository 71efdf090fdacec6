//! Custom headers of the NameServer requests (remoting-protocol.md §6.19), Java field names.
//! Required (`@CFNotNull`) fields are plain values; optional ones are `Option`.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// REGISTER_BROKER (103) request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterBrokerRequestHeader {
    pub broker_name: String,
    pub broker_addr: String,
    pub cluster_name: String,
    pub ha_server_addr: String,
    pub broker_id: i64,
    pub heartbeat_timeout_millis: Option<i64>,
    pub enable_acting_master: Option<bool>,
    pub compressed: bool,
    /// CRC32 of the body masked to 31 bits; 0 = not checked.
    pub body_crc32: i32,
}

impl CommandHeader for RegisterBrokerRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("brokerName", &self.broker_name);
        ext.put("brokerAddr", &self.broker_addr);
        ext.put("clusterName", &self.cluster_name);
        ext.put("haServerAddr", &self.ha_server_addr);
        ext.put("brokerId", self.broker_id);
        ext.put_opt("heartbeatTimeoutMillis", &self.heartbeat_timeout_millis);
        ext.put_opt("enableActingMaster", &self.enable_acting_master);
        ext.put("compressed", self.compressed);
        ext.put("bodyCrc32", self.body_crc32);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            broker_name: ext.string("brokerName")?,
            broker_addr: ext.string("brokerAddr")?,
            cluster_name: ext.string("clusterName")?,
            ha_server_addr: ext.string("haServerAddr")?,
            broker_id: ext.i64("brokerId")?,
            heartbeat_timeout_millis: ext.i64_opt("heartbeatTimeoutMillis")?,
            enable_acting_master: ext.bool_opt("enableActingMaster"),
            compressed: ext.bool_or("compressed", false),
            body_crc32: ext.i32_opt("bodyCrc32")?.unwrap_or(0),
        })
    }
}

/// REGISTER_BROKER (103) response: the master's HA address and address, for slaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterBrokerResponseHeader {
    pub ha_server_addr: Option<String>,
    pub master_addr: Option<String>,
}

impl CommandHeader for RegisterBrokerResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("haServerAddr", &self.ha_server_addr);
        ext.put_opt("masterAddr", &self.master_addr);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            ha_server_addr: ext.string_opt("haServerAddr"),
            master_addr: ext.string_opt("masterAddr"),
        })
    }
}

/// UNREGISTER_BROKER (104) and QUERY_DATA_VERSION (322) requests: one broker's identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerIdentityHeader {
    pub broker_name: String,
    pub broker_addr: String,
    pub cluster_name: String,
    pub broker_id: i64,
}

/// Java's `UnRegisterBrokerRequestHeader`.
pub type UnRegisterBrokerRequestHeader = BrokerIdentityHeader;
/// Java's `QueryDataVersionRequestHeader`.
pub type QueryDataVersionRequestHeader = BrokerIdentityHeader;

/// Java's `QueryDataVersionResponseHeader`: `changed`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryDataVersionResponseHeader {
    pub changed: bool,
}

impl CommandHeader for QueryDataVersionResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.insert("changed", self.changed.to_string());
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            changed: ext.bool_or("changed", false),
        })
    }
}

impl CommandHeader for BrokerIdentityHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("brokerName", &self.broker_name);
        ext.put("brokerAddr", &self.broker_addr);
        ext.put("clusterName", &self.cluster_name);
        ext.put("brokerId", self.broker_id);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            broker_name: ext.string("brokerName")?,
            broker_addr: ext.string("brokerAddr")?,
            cluster_name: ext.string("clusterName")?,
            broker_id: ext.i64("brokerId")?,
        })
    }
}

/// GET_ROUTEINFO_BY_TOPIC (105) request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetRouteInfoRequestHeader {
    pub topic: String,
    pub accept_standard_json_only: Option<bool>,
}

impl CommandHeader for GetRouteInfoRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put_opt("acceptStandardJsonOnly", &self.accept_standard_json_only);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            accept_standard_json_only: ext.bool_opt("acceptStandardJsonOnly"),
        })
    }
}

/// BROKER_HEARTBEAT (904) request; only the identity fields are used by the NameServer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerHeartbeatRequestHeader {
    pub cluster_name: String,
    pub broker_addr: String,
    pub broker_name: String,
    pub broker_id: Option<i64>,
    pub epoch: Option<i32>,
    pub max_offset: Option<i64>,
    pub confirm_offset: Option<i64>,
    pub heartbeat_timeout_mills: Option<i64>,
    pub election_priority: Option<i32>,
}

impl CommandHeader for BrokerHeartbeatRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("clusterName", &self.cluster_name);
        ext.put("brokerAddr", &self.broker_addr);
        ext.put("brokerName", &self.broker_name);
        ext.put_opt("brokerId", &self.broker_id);
        ext.put_opt("epoch", &self.epoch);
        ext.put_opt("maxOffset", &self.max_offset);
        ext.put_opt("confirmOffset", &self.confirm_offset);
        ext.put_opt("heartbeatTimeoutMills", &self.heartbeat_timeout_mills);
        ext.put_opt("electionPriority", &self.election_priority);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            cluster_name: ext.string("clusterName")?,
            broker_addr: ext.string("brokerAddr")?,
            broker_name: ext.string("brokerName")?,
            broker_id: ext.i64_opt("brokerId")?,
            epoch: ext.i32_opt("epoch")?,
            max_offset: ext.i64_opt("maxOffset")?,
            confirm_offset: ext.i64_opt("confirmOffset")?,
            heartbeat_timeout_mills: ext.i64_opt("heartbeatTimeoutMills")?,
            election_priority: ext.i32_opt("electionPriority")?,
        })
    }
}

/// PUT_KV_CONFIG (100) request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PutKVConfigRequestHeader {
    pub namespace: String,
    pub key: String,
    pub value: String,
}

impl CommandHeader for PutKVConfigRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("namespace", &self.namespace);
        ext.put("key", &self.key);
        ext.put("value", &self.value);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            namespace: ext.string("namespace")?,
            key: ext.string("key")?,
            value: ext.string("value")?,
        })
    }
}

/// GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102) requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KVConfigKeyHeader {
    pub namespace: String,
    pub key: String,
}

/// Java's `GetKVConfigRequestHeader`.
pub type GetKVConfigRequestHeader = KVConfigKeyHeader;
/// Java's `DeleteKVConfigRequestHeader`.
pub type DeleteKVConfigRequestHeader = KVConfigKeyHeader;

impl CommandHeader for KVConfigKeyHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("namespace", &self.namespace);
        ext.put("key", &self.key);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            namespace: ext.string("namespace")?,
            key: ext.string("key")?,
        })
    }
}

/// A header of one required string field; `NAME` is its Java field name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SingleFieldHeader<const KIND: u8> {
    pub value: String,
}

const NAMESPACE: u8 = 0;
const BROKER_NAME: u8 = 1;
const TOPIC: u8 = 2;
const CLUSTER: u8 = 3;

impl<const KIND: u8> SingleFieldHeader<KIND> {
    pub const NAME: &'static str = match KIND {
        NAMESPACE => "namespace",
        BROKER_NAME => "brokerName",
        TOPIC => "topic",
        _ => "cluster",
    };

    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
        }
    }
}

impl<const KIND: u8> CommandHeader for SingleFieldHeader<KIND> {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put(Self::NAME, &self.value);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            value: ext.string(Self::NAME)?,
        })
    }
}

/// GET_KVLIST_BY_NAMESPACE (219): `namespace`.
pub type GetKVListByNamespaceRequestHeader = SingleFieldHeader<NAMESPACE>;
/// WIPE_WRITE_PERM_OF_BROKER (205): `brokerName`.
pub type WipeWritePermOfBrokerRequestHeader = SingleFieldHeader<BROKER_NAME>;
/// ADD_WRITE_PERM_OF_BROKER (327): `brokerName`.
pub type AddWritePermOfBrokerRequestHeader = SingleFieldHeader<BROKER_NAME>;
/// REGISTER_TOPIC_IN_NAMESRV (217): `topic`.
pub type RegisterTopicRequestHeader = SingleFieldHeader<TOPIC>;
/// GET_TOPICS_BY_CLUSTER (224): `cluster`.
pub type GetTopicsByClusterRequestHeader = SingleFieldHeader<CLUSTER>;

/// Java's `GetKVConfigResponseHeader`: `value`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetKVConfigResponseHeader {
    pub value: String,
}

impl CommandHeader for GetKVConfigResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("value", &self.value);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            value: ext.string("value")?,
        })
    }
}

/// Java's `WipeWritePermOfBrokerResponseHeader`: `wipeTopicCount`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WipeWritePermOfBrokerResponseHeader {
    pub wipe_topic_count: i32,
}

impl CommandHeader for WipeWritePermOfBrokerResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("wipeTopicCount", self.wipe_topic_count);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            wipe_topic_count: ext.i32("wipeTopicCount")?,
        })
    }
}

/// Java's `AddWritePermOfBrokerResponseHeader`: `addTopicCount`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddWritePermOfBrokerResponseHeader {
    pub add_topic_count: i32,
}

impl CommandHeader for AddWritePermOfBrokerResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("addTopicCount", self.add_topic_count);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            add_topic_count: ext.i32("addTopicCount")?,
        })
    }
}

/// DELETE_TOPIC_IN_NAMESRV (216): `topic`, optional `clusterName`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteTopicFromNamesrvRequestHeader {
    pub topic: String,
    pub cluster_name: Option<String>,
}

impl CommandHeader for DeleteTopicFromNamesrvRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put_opt("clusterName", &self.cluster_name);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            cluster_name: ext.string_opt("clusterName"),
        })
    }
}

/// GET_BROKER_MEMBER_GROUP (901): `clusterName`, `brokerName`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetBrokerMemberGroupRequestHeader {
    pub cluster_name: String,
    pub broker_name: String,
}

impl CommandHeader for GetBrokerMemberGroupRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("clusterName", &self.cluster_name);
        ext.put("brokerName", &self.broker_name);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            cluster_name: ext.string("clusterName")?,
            broker_name: ext.string("brokerName")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_header_round_trips_and_requires_broker_id() {
        let h = RegisterBrokerRequestHeader {
            broker_name: "broker-a".into(),
            broker_addr: "127.0.0.1:10911".into(),
            cluster_name: "DefaultCluster".into(),
            ha_server_addr: "127.0.0.1:10912".into(),
            broker_id: 0,
            heartbeat_timeout_millis: Some(30000),
            enable_acting_master: Some(false),
            compressed: false,
            body_crc32: 12345,
        };
        let mut ext = ExtFields::new();
        h.write_to(&mut ext);
        assert_eq!(ext.get("bodyCrc32"), Some("12345"));
        assert_eq!(RegisterBrokerRequestHeader::read_from(&ext).unwrap(), h);
        ext.remove("brokerId");
        assert!(RegisterBrokerRequestHeader::read_from(&ext).is_err());
    }

    #[test]
    fn single_field_headers_use_java_names() {
        let mut ext = ExtFields::new();
        GetTopicsByClusterRequestHeader::new("C").write_to(&mut ext);
        WipeWritePermOfBrokerRequestHeader::new("b").write_to(&mut ext);
        assert_eq!(ext.get("cluster"), Some("C"));
        assert_eq!(ext.get("brokerName"), Some("b"));
    }
}
