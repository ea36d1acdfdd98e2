//! Statistics of one metric over a point's repetitions: min, median, mean, max, sample standard
//! deviation, spread ((max − min) / median, in percent, seed 000's precision test) and a 95%
//! confidence interval of the mean from Student's t distribution.

use serde::{Deserialize, Serialize};

/// Summary of `n` repeated measurements of one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: u32,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stddev: f64,
    /// (max − min) / median × 100; 0 when the median is 0.
    pub spread_pct: f64,
    /// 95% confidence interval of the mean: mean ± t(0.975, n−1) · stddev / √n. Equal to the
    /// mean for a single value (no interval can be given). When every value is ≥ 0 (rates,
    /// latencies, sizes, CPU: every metric the lab stores) the low end is clamped at 0, since
    /// the quantity cannot be negative (few repetitions can otherwise give e.g. −3877 MB/s).
    pub ci95_low: f64,
    pub ci95_high: f64,
}

impl Stats {
    /// Statistics of `values` (non-finite values are ignored). `None` if none are left.
    pub fn of(values: &[f64]) -> Option<Stats> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.partial_cmp(b).expect("finite values compare"));
        let n = v.len();
        let min = v[0];
        let max = v[n - 1];
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        // Summed as offsets from the least value, and kept within [min, max]: equal values
        // then give exactly that value with no spread, where a plain sum's rounding would put
        // the mean beside every value (3 × 0.1 averages 0.10000000000000002) and give a
        // standard deviation and interval to identical repetitions.
        let mean = (min + v.iter().map(|x| x - min).sum::<f64>() / n as f64).clamp(min, max);
        let stddev = if n > 1 && min != max {
            (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let spread_pct = if median != 0.0 {
            (max - min) / median.abs() * 100.0
        } else {
            0.0
        };
        let half = if n > 1 {
            t_975(n as u32 - 1) * stddev / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Stats {
            n: n as u32,
            min,
            median,
            mean,
            max,
            stddev,
            spread_pct,
            ci95_low: if min >= 0.0 {
                (mean - half).max(0.0)
            } else {
                mean - half
            },
            ci95_high: mean + half,
        })
    }

    /// Whether the spread exceeds `threshold` (a fraction: 0.05 = 5%).
    pub fn over(&self, threshold: f64) -> bool {
        self.spread_pct > threshold * 100.0
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided 95%).
/// Table values for df ≤ 30 (standard tables, 3 decimals); beyond, the Cornish–Fisher
/// expansion around the normal quantile z = 1.959964, accurate to better than 0.001 there.
pub fn t_975(df: u32) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z: f64 = 1.959964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn known_values() {
        let s = Stats::of(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.max), (5, 9.0, 11.0, 13.0));
        assert!(close(s.mean, 11.0));
        // Sample variance: (1+1+0+4+4)/4 = 2.5.
        assert!(close(s.stddev, 2.5f64.sqrt()));
        assert!(close(s.spread_pct, 4.0 / 11.0 * 100.0));
        let half = 2.776 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!(close(s.ci95_low, 11.0 - half) && close(s.ci95_high, 11.0 + half));
        assert!(s.over(0.05) && !s.over(0.5));
    }

    #[test]
    fn even_count_median_and_single_value() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!(close(s.median, 2.5));
        let one = Stats::of(&[7.0]).unwrap();
        assert_eq!(
            (one.stddev, one.spread_pct, one.ci95_low, one.ci95_high),
            (0.0, 0.0, 7.0, 7.0)
        );
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[f64::NAN]).is_none());
    }

    /// Identical repetitions (a simulated point run again) have that value as their mean and
    /// no spread or interval, whatever the rounding of their sum.
    #[test]
    fn identical_values_have_their_value_as_mean_and_no_interval() {
        for x in [
            0.1,
            0.7,
            99.9,
            4.655984,
            54.659152837211565,
            3511.1415768229167,
        ] {
            for n in 2..=10 {
                let s = Stats::of(&vec![x; n]).unwrap();
                assert_eq!(
                    (s.mean, s.stddev, s.ci95_low, s.ci95_high),
                    (x, 0.0, x, x),
                    "{n} × {x}"
                );
            }
        }
        // The mean of different values stays within them.
        let s = Stats::of(&[0.1, 0.1, 0.1, 0.1 + 1e-16]).unwrap();
        assert!(s.min <= s.mean && s.mean <= s.max, "{s:?}");
    }

    #[test]
    fn interval_of_non_negative_values_stays_non_negative() {
        // n = 2: t = 12.706, the raw interval reaches far below zero.
        let s = Stats::of(&[100.0, 900.0]).unwrap();
        assert_eq!(s.ci95_low, 0.0);
        assert!(s.ci95_high > 900.0);
        // Values that may be negative keep their interval.
        let d = Stats::of(&[-1.0, 1.0]).unwrap();
        assert!(d.ci95_low < -1.0);
    }

    #[test]
    fn t_quantile_meets_the_normal_one() {
        assert!(close(t_975(4), 2.776));
        assert!((t_975(31) - 2.040).abs() < 0.001);
        assert!((t_975(60) - 2.000).abs() < 0.001);
        assert!((t_975(120) - 1.980).abs() < 0.001);
        assert!((t_975(100_000) - 1.96).abs() < 0.001);
        let mut prev = f64::INFINITY;
        for df in 1..200 {
            assert!(t_975(df) < prev, "t must fall with df (df={df})");
            prev = t_975(df);
        }
    }
}
