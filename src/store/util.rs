//! Small helpers shared by the store: Java hashes, clock, local time, property lookup.

/// Java `String.hashCode` over UTF-16 code units (i32 wrap-around).
pub fn java_hash(s: &str) -> i32 {
    let mut h: i32 = 0;
    for u in s.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(u as i32);
    }
    h
}

/// Java `String.hashCode` of a byte string that is valid UTF-8 (falls back to bytes if not).
pub fn java_hash_bytes(b: &[u8]) -> i32 {
    match std::str::from_utf8(b) {
        Ok(s) => java_hash(s),
        Err(_) => b
            .iter()
            .fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(c as i32)),
    }
}

/// Current wall-clock time in ms since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Looks up `key` in an encoded properties blob (`k 0x01 v 0x02 ...`). A key present twice
/// yields its **last** value, as Java's `string2messageProperties` (a HashMap filled in order)
/// does: Java batches append the batch-level `UNIQ_KEY`/`WAIT` after each message's own, and
/// dispatch indexes the batch-level one.
pub fn find_property<'a>(props: &'a [u8], key: &str) -> Option<&'a [u8]> {
    props_iter(props)
        .filter(|(k, _)| *k == key.as_bytes())
        .last()
        .map(|(_, v)| v)
}

/// Iterates the (key, value) pairs of a properties blob with Java's rules (empty keys/values dropped).
pub fn props_iter(props: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    props.split(|&b| b == 2).filter_map(|seg| {
        let i = seg.iter().position(|&b| b == 1)?;
        (i > 0 && i + 1 < seg.len()).then(|| (&seg[..i], &seg[i + 1..]))
    })
}

/// Broken-down local time.
#[derive(Debug, Clone, Copy)]
pub struct LocalTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

/// Local time of `ms` (via `localtime_r`), for index file names and `deleteWhen`.
pub fn local_time(ms: i64) -> LocalTime {
    let offset = crate::store::mapped_file::os::utc_offset_secs(ms.div_euclid(1000));
    civil(ms + offset * 1000)
}

/// UTC civil time of `ms` (Howard Hinnant's days-to-civil).
pub fn civil(ms: i64) -> LocalTime {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    LocalTime {
        year,
        month,
        day,
        hour: (sod / 3600) as u32,
        minute: (sod % 3600 / 60) as u32,
        second: (sod % 60) as u32,
        millis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_reference() {
        assert_eq!(java_hash("TagA"), 2_598_919);
        assert_eq!(java_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn civil_time() {
        let t = civil(1_726_000_000_123);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute),
            (2024, 9, 10, 20, 26)
        );
        assert_eq!((t.second, t.millis), (40, 123));
    }

    #[test]
    fn props() {
        let p = b"TAGS\x01TagA\x02KEYS\x01K1 K2\x02\x01x\x02";
        assert_eq!(find_property(p, "KEYS"), Some(&b"K1 K2"[..]));
        assert_eq!(props_iter(p).count(), 2);
    }
}
