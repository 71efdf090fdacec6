//! Fuzz target: every body decoder (fastjson bodies, properties text, batch, properties string,
//! msgId, tag expression) on arbitrary bytes.
#![no_main]

#[allow(dead_code)]
mod decoders {
    include!("../decoders.rs");
}
use decoders::*;

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_all_bodies(data));
