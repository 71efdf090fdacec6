//! The broker's metadata: topics, subscription groups and consumer offsets, persisted as the
//! Java broker's `config/*.json`.

pub mod groups;
pub mod offsets;
pub mod persist;
pub mod topics;
