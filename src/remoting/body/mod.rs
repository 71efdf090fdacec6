//! JSON bodies in the shapes Java (fastjson) emits and Java and Go accept, plus the Java
//! properties-text bodies. Every `decode` returns an error on bad input, never panics.
//! The NameServer bodies (routes, cluster info, register broker, data version, KV table, topic
//! list) live in their own files on the namesrv side.

pub mod broker_stats;
pub mod cluster_info;
pub mod connection;
pub mod consume_stats;
pub mod consumer_connection;
pub mod consumer_list;
pub mod consumer_running_info;
/// `DataVersion` lives in `common` (shared with the store's config files).
pub use crate::common::data_version;
pub mod fastjson;
pub mod group_list;
pub mod heartbeat;
pub mod kv_table;
pub mod lite;
pub mod lock_batch;
pub mod pop;
pub mod properties_text;
pub mod query_consume_queue;
pub mod register_broker;
pub mod reset_offset_body;
pub mod subscription_data;
pub mod subscription_group;
pub mod topic_config_and_queue_mapping;
pub mod topic_config_list;
pub mod topic_config_wrapper;
pub mod topic_list;
pub mod topic_route;
pub mod topic_stats_table;

pub use connection::{Connection, ProducerConnection};
pub use consume_stats::{ConsumeStats, OffsetWrapper};
pub use consumer_connection::ConsumerConnection;
pub use consumer_list::GetConsumerListByGroupResponseBody;
pub use consumer_running_info::ConsumerRunningInfo;
pub use group_list::GroupList;
pub use heartbeat::{
    ConsumeFromWhere, ConsumeType, ConsumerData, HeartbeatData, MessageModel, ProducerData,
};
pub use lock_batch::{LockBatchRequestBody, LockBatchResponseBody, UnlockBatchRequestBody};
pub use query_consume_queue::{ConsumeQueueData, QueryConsumeQueueResponseBody};
pub use reset_offset_body::ResetOffsetBody;
pub use subscription_data::SubscriptionData;
pub use subscription_group::{
    GroupRetryPolicy, SimpleSubscriptionData, SubscriptionGroupConfig, SubscriptionGroupWrapper,
};
pub use topic_config_and_queue_mapping::TopicConfigAndQueueMapping;
pub use topic_config_wrapper::TopicConfigAndMappingSerializeWrapper;
pub use topic_stats_table::{TopicOffset, TopicStatsTable};
