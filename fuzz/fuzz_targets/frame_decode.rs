//! Fuzz target: `FrameCodec::decode_frame` on arbitrary bytes, then every header and body decoder
//! on what decodes.
#![no_main]

#[allow(dead_code)]
mod decoders {
    include!("../decoders.rs");
}
use decoders::*;

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_frames(data));
