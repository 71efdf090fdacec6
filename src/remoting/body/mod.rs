//! JSON bodies in the shapes Java (fastjson) emits and Java and Go accept.

pub mod cluster_info;
pub mod data_version;
pub mod kv_table;
pub mod register_broker;
pub mod topic_list;
pub mod topic_route;
