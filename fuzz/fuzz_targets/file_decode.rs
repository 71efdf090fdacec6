//! Fuzz target: config files (`broker.conf`, `namesrv.conf`, topics.json, consumerOffset.json,
//! subscriptionGroup.json, delayOffset.json) and store bytes (commit-log record, consume-queue
//! unit, index header, checkpoint, file name) on arbitrary bytes.
#![no_main]

#[allow(dead_code)]
mod decoders {
    include!("../decoders.rs");
}
use decoders::*;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    decode_config_files(data);
    decode_store_bytes(data);
});
