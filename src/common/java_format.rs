//! Numbers printed as Java prints them, for answers whose text clients and tools parse.

/// Java `Double.toString`: at least one fractional digit (`0.0`, `12.5`) between 10^-3 and 10^7,
/// computerized scientific notation (`1.0E7`, `2.5E-4`) outside it.
pub fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = d.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{d}");
        return if s.contains('.') { s } else { s + ".0" };
    }
    let s = format!("{d:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

#[cfg(test)]
mod tests {
    use super::java_double;

    #[test]
    fn formats_as_java_does() {
        for (d, s) in [
            (0.0, "0.0"),
            (1.0, "1.0"),
            (12.5, "12.5"),
            (0.001, "0.001"),
            (1234567.0, "1234567.0"),
            (1e7, "1.0E7"),
            (2.5e-4, "2.5E-4"),
            (-3.0, "-3.0"),
            (123456789.5, "1.234567895E8"),
        ] {
            assert_eq!(java_double(d), s, "{d}");
        }
    }
}

/// Java `MQVersion.getVersionDesc`: the `Version` constant a client's version number names
/// ("V5_3_3" for 479). From 4.0.0 on the constants run SNAPSHOT, release for every x.y.z; the
/// irregular 3.x names are answered as "V3"; numbers past the table as Java's `HIGHER_VERSION`.
pub fn mq_version_desc(version: i32) -> String {
    const V4_0_0_SNAPSHOT: i32 = 212;
    const LAST: i32 = 611;
    if version < V4_0_0_SNAPSHOT {
        return "V3".into();
    }
    if version > LAST {
        return "HIGHER_VERSION".into();
    }
    let v = version - V4_0_0_SNAPSHOT;
    let k = v / 2;
    let snapshot = if v % 2 == 0 { "_SNAPSHOT" } else { "" };
    format!("V{}_{}_{}{snapshot}", 4 + k / 100, k / 10 % 10, k % 10)
}

#[cfg(test)]
mod version_tests {
    use super::mq_version_desc;

    #[test]
    fn names_javas_version_constants() {
        assert_eq!(mq_version_desc(479), "V5_3_3");
        assert_eq!(mq_version_desc(478), "V5_3_3_SNAPSHOT");
        assert_eq!(mq_version_desc(212), "V4_0_0_SNAPSHOT");
        assert_eq!(mq_version_desc(411), "V4_9_9");
        assert_eq!(mq_version_desc(611), "V5_9_9");
        assert_eq!(mq_version_desc(10_000), "HIGHER_VERSION");
    }
}
