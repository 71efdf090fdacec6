//! The message model broker, store and wire share: topic configs and permissions, properties,
//! sysflags, message ids, tag hash, topic/group name rules, system topic names, batch bodies.

pub mod base64;
pub mod batch;
pub mod config;
pub mod data_version;
pub mod fastjson;
pub mod filter;
pub mod histogram;
pub mod java_format;
pub mod java_properties;
pub mod json_file;
pub mod lenient;
pub mod message;
pub mod msg_id;
pub mod pairs;
pub mod properties;
pub mod recall_handle;
pub mod subscription_group;
pub mod tag;
pub mod topic;
