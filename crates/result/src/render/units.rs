//! Number formatting shared by the renderings: fio's short "4 significant digits" style, and
//! calendar time from epoch seconds (UTC; no time zone database in pure code).

/// `value` scaled by `base` until it shows in at most four digits, with the matching suffix:
/// `human(26_412_000.0, 1024.0, &["B", "KiB", "MiB"])` is `25.2MiB`.
pub fn human(value: f64, base: f64, suffixes: &[&str]) -> String {
    let mut v = if value.is_finite() && value > 0.0 {
        value
    } else {
        0.0
    };
    let mut idx = 0;
    while v >= 9999.5 && idx + 1 < suffixes.len() {
        v /= base;
        idx += 1;
    }
    let digits = if v >= 100.0 || (idx == 0 && v.fract() == 0.0) {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    format!("{digits}{}", suffixes[idx])
}

/// Binary byte count: `1984KiB`.
pub fn bytes_binary(bytes: f64) -> String {
    human(bytes, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
}

/// Decimal byte count: `2032kB`.
pub fn bytes_decimal(bytes: f64) -> String {
    human(bytes, 1000.0, &["B", "kB", "MB", "GB", "TB", "PB"])
}

/// A count such as IOPS: `6441`, `64.4k`.
pub fn count(n: f64) -> String {
    let r = if n >= 9999.5 { n } else { n.round() };
    human(r, 1000.0, &["", "k", "M", "G", "T"])
}

/// Days since 1970-01-01 → (year, month 1–12, day 1–31) in the proleptic Gregorian
/// calendar (Howard Hinnant's days_from_civil inverse, "chrono-compatible low-level date
/// algorithms").
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `Sat Nov 21 19:52:45 2026` (UTC) from seconds since the epoch.
pub fn ctime_utc(epoch_s: u64) -> String {
    let days = (epoch_s / 86_400) as i64;
    let secs = epoch_s % 86_400;
    let (year, month, day) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let mon = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!(
        "{weekday} {mon} {day:2} {:02}:{:02}:{:02} {year}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers_match_fio_style() {
        assert_eq!(bytes_binary(2_031_616.0), "1984KiB");
        assert_eq!(
            human(26_412_000.0 / 1.0, 1024.0, &["B/s", "KiB/s", "MiB/s"]),
            "25.2MiB/s"
        );
        assert_eq!(bytes_decimal(2_031_616.0), "2032kB");
        assert_eq!(count(6441.2), "6441");
        assert_eq!(count(64_412.0), "64.4k");
        assert_eq!(count(0.0), "0");
        assert_eq!(bytes_binary(268_435_456.0), "256MiB");
    }

    #[test]
    fn calendar_time() {
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(1_795_290_765), "Sat Nov 21 19:52:45 2026");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
    }
}
