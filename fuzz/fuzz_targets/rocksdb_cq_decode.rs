//! Fuzz target: the RocksDB consume queue's key and value decoders (unit key and value, offset
//! key and value, checkpoint value) on arbitrary bytes, with a re-encode check.
#![no_main]

#[allow(dead_code)]
mod decoders {
    include!("../decoders.rs");
}
use decoders::*;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    decode_rocksdb_cq(data);
});
