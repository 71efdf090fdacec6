//! The message model broker, store and wire share: topic configs and permissions, properties,
//! sysflags, message ids, tag hash, topic/group name rules, system topic names.

pub mod java_properties;
pub mod topic;
