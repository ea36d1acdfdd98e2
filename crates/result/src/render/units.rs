//! Number formatting shared by the renderings: fio's short "4 significant digits" style, and
//! calendar time from epoch seconds (UTC; no time zone database in pure code).

/// `value` scaled by `base` until it shows in at most four digits, with the matching suffix:
/// `human(26_412_000.0, 1024.0, &["B", "KiB", "MiB"])` is `25.2MiB`.
pub fn human(value: f64, base: f64, suffixes: &[&str]) -> String {
    human_sig(value, base, suffixes, DEFAULT_SIG_FIGS)
}

/// fio's default `significant_figures`.
pub const DEFAULT_SIG_FIGS: u8 = 4;

/// [`human`] in `sig` digits (fio's `significant_figures`, 1 to 10): scaled by `base` until
/// its whole part shows in at most `sig` digits, the point and decimals filling the rest
/// (a value that was not scaled shows as a whole number).
pub fn human_sig(value: f64, base: f64, suffixes: &[&str], sig: u8) -> String {
    let sig = i32::from(sig.clamp(1, 10));
    let mut v = if value.is_finite() && value > 0.0 {
        value
    } else {
        0.0
    };
    let mut idx = 0;
    while v >= 10f64.powi(sig) - 0.5 && idx + 1 < suffixes.len() {
        v /= base;
        idx += 1;
    }
    // (Digits of the whole part, at least one; the point takes one of the `sig` too.)
    let whole = if v < 10.0 {
        1
    } else {
        v.log10().floor() as i32 + 1
    };
    // (Unscaled, a whole number, as fio's integer counts show: `5B/s`, not `5.25B/s`.)
    let decimals = if idx == 0 {
        0
    } else {
        (sig - whole - 1).max(0) as usize
    };
    format!("{v:.decimals$}{}", suffixes[idx])
}

/// Byte units, binary and decimal.
pub const BYTES_BINARY: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
pub const BYTES_DECIMAL: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];

/// Binary byte count: `1984KiB`.
pub fn bytes_binary(bytes: f64) -> String {
    human(bytes, 1024.0, &BYTES_BINARY)
}

/// A count such as IOPS in `sig` digits: `6441`, `64.4k` (4).
pub fn count_sig(n: f64, sig: u8) -> String {
    let r = if n >= 10f64.powi(i32::from(sig.clamp(1, 10))) - 0.5 {
        n
    } else {
        n.round()
    };
    human_sig(r, 1000.0, &["", "k", "M", "G", "T"], sig)
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
        assert_eq!(human(2_031_616.0, 1000.0, &BYTES_DECIMAL), "2032kB");
        assert_eq!(count_sig(6441.2, 4), "6441");
        assert_eq!(count_sig(64_412.0, 4), "64.4k");
        assert_eq!(count_sig(0.0, 4), "0");
        assert_eq!(bytes_binary(268_435_456.0), "256MiB");
    }

    /// fio 3.33's text for 12 345 IOPS capped and 50 514 605 B/s under each
    /// `significant_figures` (IOPS=12k, 12.3k, 12333, 12332; BW=48MiB/s, 48.2MiB/s,
    /// 49335KiB/s, 50514605B/s; its own rates came out a little apart from these).
    #[test]
    fn significant_figures_as_fio() {
        let bin = ["B/s", "KiB/s", "MiB/s", "GiB/s"];
        for (sig, iops, bw) in [
            (2, "12k", "48MiB/s"),
            (4, "12.3k", "48.2MiB/s"),
            (6, "12333", "49331KiB/s"),
            (10, "12333", "50514605B/s"),
        ] {
            assert_eq!(count_sig(12_333.4, sig), iops, "{sig}");
            assert_eq!(human_sig(50_514_605.0, 1024.0, &bin, sig), bw, "{sig}");
        }
        assert_eq!(count_sig(999.7, 2), "1k");
        assert_eq!(human_sig(5.25, 1024.0, &bin, 6), "5B/s");
        assert_eq!(human_sig(50_514_605.4, 1024.0, &bin, 10), "50514605B/s");
    }

    #[test]
    fn calendar_time() {
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(1_795_290_765), "Sat Nov 21 19:52:45 2026");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
    }
}
