//! Base64 as `java.util.Base64` writes it: the standard alphabet (fastjson's byte arrays) and the
//! URL-safe one (`getUrlEncoder`, the recall handle), both with `=` padding. Decoding takes the
//! padding or leaves it out, as Java's decoders do, and gives `None` on any other character.

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Standard Base64 with padding.
pub fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, STANDARD)
}

/// URL-safe Base64 with padding (Java `Base64.getUrlEncoder()`).
pub fn encode_url(bytes: &[u8]) -> String {
    encode_with(bytes, URL_SAFE)
}

/// Standard Base64, padded or not.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    decode_with(s, b'+', b'/')
}

/// URL-safe Base64, padded or not (Java `Base64.getUrlDecoder()`).
pub fn decode_url(s: &str) -> Option<Vec<u8>> {
    decode_with(s, b'-', b'_')
}

fn encode_with(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn decode_with(s: &str, c62: u8, c63: u8) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            _ if c == c62 => 62,
            _ if c == c63 => 63,
            _ => return None,
        } as u32)
    };
    let bytes = s.trim().trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in bytes {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_both_alphabets() {
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
            assert_eq!(decode_url(&encode_url(&bytes)).unwrap(), bytes);
        }
        assert_eq!(encode(&[5]), "BQ==");
        assert!(decode("B!").is_none());
        // 0xfb 0xff: '+' '/' in the standard alphabet, '-' '_' in the URL-safe one (Java's bytes)
        assert_eq!(encode(&[0xfb, 0xff]), "+/8=");
        assert_eq!(encode_url(&[0xfb, 0xff]), "-_8=");
        assert!(decode_url("+/8=").is_none());
        assert_eq!(decode_url("-_8").unwrap(), vec![0xfb, 0xff]);
    }
}
