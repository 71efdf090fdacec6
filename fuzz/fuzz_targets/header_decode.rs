//! Fuzz target: every `CommandHeader::read_from` on an extFields map built from arbitrary bytes.
#![no_main]

#[allow(dead_code)]
mod decoders {
    include!("../decoders.rs");
}
use decoders::*;

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_all_headers(&ext_from_bytes(data)));
