//! The two header serializations: fastjson-style JSON (type 0) and ROCKETMQ binary (type 1).

pub mod json;
pub mod rocketmq;
