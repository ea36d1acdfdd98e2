//! Number parsing in fio's conventions: sizes with k/m/g/t suffixes, durations, percentages.
//!
//! Sizes are powers of 2 whatever the suffix (unless a job's `kb_base=1000` says otherwise:
//! [`parse_size_kb`]): `4k`, `4K`, `4KB` and `4KiB` all mean 4096 bytes. `k`, `m`, `g`, …
//! (with or without `b`) mean what they mean to fio under its default `kb_base=1024`; IEC
//! units do not: fio reads `4KiB` as 4000 bytes there (its compatibility mode), which
//! surprises more than it helps, so raidlab keeps powers of 2 and notes such lines in job
//! files ([`crate::fio_notes`]). Output labels decimal and binary units explicitly.

/// Parse a size such as `512`, `4k`, `64KiB`, `1m`, `2g`, `1t` into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    parse_size_kb(text, 1024)
}

/// [`parse_size`] under fio's `kb_base`: 1024 (its default) makes every suffix a power of
/// 2; 1000 makes `k`, `kb`, `m`, `mb`, … powers of 10 and keeps `KiB`, `MiB`, … powers of 2
/// (fio 3.33 with kb_base=1000 first: size=1m is 1 000 000 bytes, bs=4KiB 4096).
pub fn parse_size_kb(text: &str, kb_base: u32) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size (valid: a number with an optional k/m/g/t suffix, e.g. 4k)".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{t}' is not a size (valid: a number with an optional k/m/g/t suffix, e.g. 4k)"
        ));
    }
    let lower = suffix.to_ascii_lowercase();
    let (prefix, iec) = match lower.strip_suffix("ib") {
        Some(p) => (p, true),
        None => (lower.strip_suffix('b').unwrap_or(&lower), false),
    };
    let step: u64 = if kb_base == 1000 && !iec { 1000 } else { 1024 };
    let power = match prefix {
        "" if !iec => Some(0),
        "k" => Some(1),
        "m" => Some(2),
        "g" => Some(3),
        "t" => Some(4),
        "p" => Some(5),
        _ => None,
    };
    let mult: u64 = match power {
        Some(n) => step.pow(n),
        None => {
            return Err(format!(
                "'{t}' has unknown unit '{suffix}' (valid: k, m, g, t, p, optionally followed by b or ib)"
            ))
        }
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| {
            format!(
                "'{t}' is not a size (valid: a number with an optional k/m/g/t suffix, e.g. 4k)"
            )
        })?;
        let bytes = v * mult as f64;
        if bytes >= u64::MAX as f64 {
            return Err(too_large(t));
        }
        if !(bytes.is_finite()) || bytes < 0.0 || bytes.fract() != 0.0 {
            return Err(format!("'{t}' is not a whole number of bytes"));
        }
        Ok(bytes as u64)
    } else {
        let v: u64 = num.parse().map_err(|_| too_large(t))?;
        v.checked_mul(mult).ok_or_else(|| too_large(t))
    }
}

/// A size past what 64 bits count, with what is valid.
fn too_large(t: &str) -> String {
    format!("'{t}' is too large (valid: below 16384p, 2^64 bytes)")
}

/// Parse a duration into nanoseconds. A bare number is seconds, as in fio's `runtime`;
/// suffixes `ns`, `us`, `ms`, `s`, `m`, `h`, `d` are accepted.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{t}' is not a duration (valid: a number with an optional ns/us/ms/s/m/h/d suffix)"
        ));
    }
    let unit_ns: f64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1e9,
        "ns" => 1.0,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => {
            return Err(format!(
                "'{t}' has unknown time unit '{suffix}' (valid: ns, us, ms, s, m, h, d)"
            ))
        }
    };
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "'{t}' is not a duration (valid: a number with an optional ns/us/ms/s/m/h/d suffix)"
        )
    })?;
    let ns = v * unit_ns;
    if !ns.is_finite() || !(0.0..=1e19).contains(&ns) {
        return Err(format!("'{t}' is out of range (valid: 0 to 115740d)"));
    }
    Ok(ns.round() as u64)
}

/// Parse an unsigned integer with optional size suffix (fio accepts `iodepth=1k`? no: plain).
pub fn parse_u32(text: &str, min: u32, max: u32) -> Result<u32, String> {
    let t = text.trim();
    let v: u64 = t
        .parse()
        .map_err(|_| format!("'{t}' is not a whole number (valid: {min} to {max})"))?;
    if v < min as u64 || v > max as u64 {
        return Err(format!("{v} is out of range (valid: {min} to {max})"));
    }
    Ok(v as u32)
}

/// Parse a boolean the way fio does: 1/0, true/false, yes/no, on/off.
pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        t => Err(format!(
            "'{t}' is not a boolean (valid: 1, 0, true, false, yes, no)"
        )),
    }
}

/// A fio switch (its options that may be given without a value: `time_based`,
/// `norandommap`, `stonewall`, `group_reporting`, …): as [`parse_bool`], or any whole number
/// as fio reads one there, 0 off and any other on (`time_based=10` is on). fio's other
/// booleans (`direct`, `end_fsync`, …) take 0 and 1 only; [`parse_bool`] reads those.
pub fn parse_switch(text: &str) -> Result<bool, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(t.bytes().any(|b| b != b'0'));
    }
    parse_bool(t).map_err(|_| {
        format!("'{t}' is not a switch (valid: 1 or any other whole number for on, 0 for off, true, false, yes, no)")
    })
}

/// Bytes in the largest binary unit they fill at least one of: (how many, the unit), e.g.
/// (1.5, "MiB"); bytes under 1 KiB in "B".
pub fn binary_unit(bytes: u64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    (v, UNITS[u])
}

/// Format bytes with a binary unit, e.g. `4 KiB`, `1.5 MiB` (for labels, not parsing).
pub fn format_bytes_binary(bytes: u64) -> String {
    let (v, unit) = binary_unit(bytes);
    if v.fract() == 0.0 {
        format!("{} {unit}", v as u64)
    } else {
        format!("{v:.1} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_follow_fio_kb_base_1024() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("2m").unwrap(), 2 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("0.5k").unwrap(), 512);
        assert!(parse_size("4q").unwrap_err().contains("unknown unit"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("20000000p").is_err());
    }

    #[test]
    fn bad_sizes_and_durations_say_what_is_valid() {
        for t in [
            "99999999t",
            "99999999999999999999",
            "1.5e9",
            "99999999999999999999.5t",
        ] {
            let e = parse_size(t).unwrap_err();
            assert!(e.contains("(valid: "), "{t}: {e}");
        }
        for t in ["99999999999d", "18446744073s", "1.5.5s"] {
            let e = parse_duration_ns(t).unwrap_err();
            assert!(e.contains("(valid: "), "{t}: {e}");
        }
        assert!(parse_duration_ns("115740d").is_ok());
        assert!(parse_size("16383p").is_ok());
        assert!(parse_size("16384p").unwrap_err().contains("too large"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("2").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_duration_ns("1m").unwrap(), 60_000_000_000);
        assert!(parse_duration_ns("3 fortnights").is_err());
    }

    #[test]
    fn binary_labels() {
        assert_eq!(format_bytes_binary(4096), "4 KiB");
        assert_eq!(format_bytes_binary(1536 * 1024), "1.5 MiB");
    }

    proptest! {
        #[test]
        fn size_parser_never_panics(s in "\\PC{0,20}") {
            let _ = parse_size(&s);
            let _ = parse_duration_ns(&s);
        }

        #[test]
        fn size_roundtrip(v in 0u64..1_000_000, unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("k", 1024), ("m", 1 << 20), ("g", 1 << 30)][unit];
            prop_assert_eq!(parse_size(&format!("{v}{suffix}")).unwrap(), v * mult);
        }
    }
}
