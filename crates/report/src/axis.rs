//! Axes: how a data value maps to a position, where the ticks go and how they are labelled.
//!
//! Byte quantities (block size, buffer, total transferred) are labelled in binary units
//! (512 B, 4 KiB, 2 MiB) because that is how they are chosen; rates are decimal MB/s
//! (10^6 bytes per second) because that is how the seed studies and fio's `bw` in MB/s quote
//! them. The axis label always names the unit.

/// What kind of quantity an axis carries, which decides how its ticks are labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes, labelled in binary units: 512 B, 1 KiB, 2 MiB, 1 GiB.
    Bytes,
    /// A plain number (MB/s, IOPS, µs, threads): labelled 0.5, 20, 1500, 2e+06.
    Plain,
    /// A percentage 0–100: labelled 25%.
    Percent,
}

/// How values map onto the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic. Ticks fall on powers of two for byte axes and on 1–2–5 × 10^k otherwise.
    Log,
}

/// One axis of a chart: its label (with unit), scale, unit and data range.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    pub min: f64,
    pub max: f64,
}

/// A tick: where (in data units) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

impl Axis {
    /// An axis spanning the given data values, padded to nice limits. Non-finite values are
    /// ignored; on a log axis non-positive values are too (they cannot be drawn).
    pub fn fit(
        label: &str,
        scale: Scale,
        unit: Unit,
        values: impl IntoIterator<Item = f64>,
        zero: bool,
    ) -> Axis {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for v in values {
            if !v.is_finite() || (scale == Scale::Log && v <= 0.0) {
                continue;
            }
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            // Nothing drawable: an arbitrary but valid range.
            (lo, hi) = if scale == Scale::Log {
                (1.0, 10.0)
            } else {
                (0.0, 1.0)
            };
        }
        let (min, max) = match scale {
            Scale::Linear => {
                let lo = if zero { lo.min(0.0) } else { lo };
                let hi = if zero { hi.max(0.0) } else { hi };
                if unit == Unit::Percent && lo >= 0.0 && hi <= 100.0 {
                    (0.0, 100.0)
                } else if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
                    let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                    (lo - pad, hi + pad)
                } else {
                    let step = nice_step((hi - lo) / 5.0);
                    ((lo / step).floor() * step, (hi / step).ceil() * step)
                }
            }
            Scale::Log => match unit {
                Unit::Bytes => (
                    2f64.powf(lo.log2().floor()),
                    2f64.powf(hi.log2().ceil().max(lo.log2().floor() + 1.0)),
                ),
                _ => {
                    let (a, b) = (nice_floor_125(lo), nice_ceil_125(hi));
                    if b <= a {
                        (a, a * 2.0)
                    } else {
                        (a, b)
                    }
                }
            },
        };
        Axis {
            label: label.to_string(),
            scale,
            unit,
            min,
            max,
        }
    }

    /// Position of `v` as a fraction 0..1 of the axis length (outside that range when `v` is
    /// outside the axis). Non-positive values on a log axis map to -inf.
    pub fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.min) / (self.max - self.min),
            Scale::Log => {
                if v <= 0.0 {
                    f64::NEG_INFINITY
                } else {
                    (v.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
                }
            }
        }
    }

    /// The major ticks, at most about eight, all inside [min, max].
    pub fn ticks(&self) -> Vec<Tick> {
        let values = match (self.scale, self.unit) {
            (Scale::Log, Unit::Bytes) => log2_ticks(self.min, self.max),
            (Scale::Log, _) => log10_ticks(self.min, self.max),
            (Scale::Linear, _) => linear_ticks(self.min, self.max),
        };
        values
            .into_iter()
            .map(|v| Tick {
                value: v,
                label: self.format(v),
            })
            .collect()
    }

    /// Unlabelled minor ticks: every power of two on a log byte axis, 2…9 × 10^k on a log
    /// axis spanning few decades, none on a linear axis.
    pub fn minor_ticks(&self) -> Vec<f64> {
        match (self.scale, self.unit) {
            (Scale::Log, Unit::Bytes) => {
                let (lo, hi) = (
                    self.min.log2().ceil() as i32,
                    self.max.log2().floor() as i32,
                );
                (lo..=hi).map(|e| 2f64.powi(e)).collect()
            }
            (Scale::Log, _) if (self.max / self.min).log10() <= 4.0 => {
                let (lo, hi) = (
                    self.min.log10().floor() as i32,
                    self.max.log10().ceil() as i32,
                );
                let mut out = Vec::new();
                for k in lo..=hi {
                    for m in 1..10 {
                        let v = m as f64 * 10f64.powi(k);
                        if v >= self.min * (1.0 - 1e-9) && v <= self.max * (1.0 + 1e-9) {
                            out.push(v);
                        }
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// A value as this axis labels it.
    pub fn format(&self, v: f64) -> String {
        match self.unit {
            Unit::Bytes => format_bytes(v),
            Unit::Plain => format_number(v),
            Unit::Percent => format!("{}%", format_number(v)),
        }
    }
}

/// Ticks on powers of two; every 2nd or 4th power when the range spans many.
fn log2_ticks(min: f64, max: f64) -> Vec<f64> {
    let lo = min.log2().ceil() as i32;
    let hi = max.log2().floor() as i32;
    let span = (hi - lo).max(0) as u32;
    let step = match span {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 10,
    };
    // Label both ends when the step divides the span (512 B … 2 MiB); otherwise anchor on
    // multiples of the step so that 1 KiB, 1 MiB, 1 GiB are among the ticks.
    let mut e = if span as i32 % step == 0 {
        lo
    } else {
        lo + (step - lo.rem_euclid(step)) % step
    };
    let mut out = Vec::new();
    while e <= hi {
        out.push(2f64.powi(e));
        e += step;
    }
    out
}

/// Ticks at 1, 2, 5 × 10^k when the range is narrow; at powers of ten (or every other one)
/// when it is wide.
fn log10_ticks(min: f64, max: f64) -> Vec<f64> {
    let decades = (max / min).log10();
    let lo = min.log10().floor() as i32;
    let hi = max.log10().ceil() as i32;
    let mults: &[f64] = if decades <= 1.3 {
        &[1.0, 2.0, 5.0]
    } else if decades <= 3.2 {
        &[1.0, 3.0]
    } else {
        &[1.0]
    };
    let step = if decades > 8.0 { 2 } else { 1 };
    let mut out = Vec::new();
    let mut k = lo;
    while k <= hi {
        for m in mults {
            let v = m * 10f64.powi(k);
            // Tolerate rounding at the ends.
            if v >= min * (1.0 - 1e-9) && v <= max * (1.0 + 1e-9) {
                out.push(v);
            }
        }
        k += step;
    }
    if out.len() < 2 {
        // A very narrow log range: fall back to linear spacing within it.
        return linear_ticks(min, max);
    }
    out
}

/// Evenly spaced ticks at a 1–2–5 step.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN bounds take this branch too
fn linear_ticks(min: f64, max: f64) -> Vec<f64> {
    if !(max > min) {
        return vec![min];
    }
    let step = nice_step((max - min) / 5.0);
    let first = (min / step).ceil() as i64;
    let last = (max / step).floor() as i64;
    (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            // Clear the -0 and 0.30000000000000004 kind of noise.
            (v / step).round() * step + 0.0
        })
        .collect()
}

/// The 1, 2, 5 × 10^k step nearest above `raw`.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN takes this branch too
pub fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0) || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn nice_floor_125(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    let f = v / mag;
    let m = if f >= 5.0 {
        5.0
    } else if f >= 2.0 {
        2.0
    } else {
        1.0
    };
    m * mag
}

fn nice_ceil_125(v: f64) -> f64 {
    let mag = 10f64.powf(v.log10().floor());
    let f = v / mag;
    let m = if f <= 1.0 + 1e-12 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Bytes in binary units: 512 B, 1 KiB, 1.5 MiB, 2 GiB.
pub fn format_bytes(v: f64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if !v.is_finite() {
        return format!("{v}");
    }
    let mut x = v.abs();
    let mut u = 0;
    while x >= 1024.0 && u < UNITS.len() - 1 {
        x /= 1024.0;
        u += 1;
    }
    let sign = if v < 0.0 { "-" } else { "" };
    if (x - x.round()).abs() < 1e-9 {
        format!("{sign}{} {}", x.round() as u64, UNITS[u])
    } else {
        format!("{sign}{} {}", trim_zeros(&format!("{x:.2}")), UNITS[u])
    }
}

/// A plain number, short: 0.05, 1.5, 20, 1500, 250000, 1.2e7.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.1e}");
        // 1.0e7 -> 1e+07 style is noisy; keep Rust's 1.0e7 but drop ".0".
        return s.replace(".0e", "e");
    }
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    trim_zeros(&format!("{v:.decimals$}"))
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<String> {
        a.ticks().into_iter().map(|t| t.label).collect()
    }

    #[test]
    fn block_size_axis_from_512_b_to_2_mib_ticks_on_powers_of_two_in_binary_units() {
        let sizes = (9..=21).map(|e| 2f64.powi(e));
        let a = Axis::fit("block size", Scale::Log, Unit::Bytes, sizes, false);
        assert_eq!((a.min, a.max), (512.0, 2.0 * 1024.0 * 1024.0));
        let l = labels(&a);
        // 13 powers are too many for one label each: every other one, both ends labelled.
        assert_eq!(
            l,
            ["512 B", "2 KiB", "8 KiB", "32 KiB", "128 KiB", "512 KiB", "2 MiB"]
        );
        // An odd span cannot label both ends: the labels fall on 1 KiB and its multiples.
        let odd = Axis::fit("bs", Scale::Log, Unit::Bytes, [512.0, 1048576.0], false);
        assert_eq!(
            labels(&odd),
            ["1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"]
        );
        let few = Axis::fit("bs", Scale::Log, Unit::Bytes, [4096.0, 65536.0], false);
        assert_eq!(
            labels(&few),
            ["4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"]
        );
    }

    #[test]
    fn log_rate_axis_gets_one_two_five_ticks_or_decades() {
        let a = Axis::fit("MB/s", Scale::Log, Unit::Plain, [1.5, 50.2], false);
        assert_eq!((a.min, a.max), (1.0, 100.0));
        assert_eq!(labels(&a), ["1", "3", "10", "30", "100"]);
        let b = Axis::fit("MB/s", Scale::Log, Unit::Plain, [12.0, 48.0], false);
        assert_eq!(labels(&b), ["10", "20", "50"]);
        let wide = Axis::fit("IOPS", Scale::Log, Unit::Plain, [0.5, 2e6], false);
        assert_eq!(
            labels(&wide),
            ["1", "10", "100", "1000", "10000", "100000", "1e6"]
        );
    }

    #[test]
    fn log_axis_positions_are_logarithmic() {
        let a = Axis {
            label: String::new(),
            scale: Scale::Log,
            unit: Unit::Bytes,
            min: 512.0,
            max: 2048.0,
        };
        assert!((a.frac(1024.0) - 0.5).abs() < 1e-12);
        assert_eq!(a.frac(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn linear_axis_ticks_are_round_and_cover_the_data() {
        let a = Axis::fit("MB/s", Scale::Linear, Unit::Plain, [3.0, 87.0], true);
        assert_eq!((a.min, a.max), (0.0, 100.0));
        assert_eq!(labels(&a), ["0", "20", "40", "60", "80", "100"]);
        let p = Axis::fit(
            "read",
            Scale::Linear,
            Unit::Percent,
            [0.0, 30.0, 100.0],
            false,
        );
        assert_eq!(labels(&p), ["0%", "20%", "40%", "60%", "80%", "100%"]);
        let flat = Axis::fit("x", Scale::Linear, Unit::Plain, [5.0, 5.0], false);
        assert!(flat.min < 5.0 && flat.max > 5.0);
        let frac = Axis::fit("x", Scale::Linear, Unit::Plain, [0.1, 0.7], false);
        assert_eq!(labels(&frac), ["0", "0.2", "0.4", "0.6", "0.8"]);
    }

    #[test]
    fn numbers_and_bytes_format_short() {
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bytes(1536.0), "1.5 KiB");
        assert_eq!(format_bytes(8.0 * 1024.0 * 1024.0 * 1024.0), "8 GiB");
        assert_eq!(format_number(117.0), "117");
        assert_eq!(format_number(49.94), "49.9");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(4262.0), "4262");
    }
}
