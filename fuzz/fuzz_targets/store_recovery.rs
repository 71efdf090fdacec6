//! Fuzz target: recovery of a small valid store whose files the input mutates (patches,
//! truncations, removals, copies of commit-log, consume-queue, index, checkpoint, abort and
//! config files), then reads of every queue, key lookups, config loads and one append.
#![no_main]

use std::sync::OnceLock;

#[allow(dead_code)]
mod store_recovery {
    include!("../store_recovery.rs");
}
use store_recovery::*;

static TEMPLATE: OnceLock<StoreTemplate> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let template = TEMPLATE.get_or_init(StoreTemplate::build);
    recover_mutated_store(template, data);
});
