//! Statistics over the repetitions of one point: min / median / mean / max / standard
//! deviation / spread and a 95% confidence interval for the mean.

/// Summary of repeated measurements of one metric at one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stddev: f64,
    /// (max − min) / median × 100, the precision measure seed 000 used (it flagged > 5%).
    pub spread_pct: f64,
    /// 95% confidence interval of the mean, Student's t with n − 1 degrees of freedom;
    /// equal to (mean, mean) for a single value.
    pub ci95: (f64, f64),
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom (standard
/// statistical tables); beyond 30 the normal 1.96 is within 2%.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Statistics of the finite values; `None` when there are none.
pub fn stats(values: &[f64]) -> Option<Stats> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let (min, max) = (v[0], v[n - 1]);
    let spread_pct = if median != 0.0 {
        (max - min) / median.abs() * 100.0
    } else {
        0.0
    };
    let half = if n > 1 {
        let t = T975.get(n - 2).copied().unwrap_or(1.96);
        t * stddev / (n as f64).sqrt()
    } else {
        0.0
    };
    Some(Stats {
        n,
        min,
        median,
        mean,
        max,
        stddev,
        spread_pct,
        ci95: (mean - half, mean + half),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_runs_as_seed_000_reported_them() {
        let s = stats(&[50.0, 49.0, 51.0, 50.0, 52.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.max), (5, 49.0, 50.0, 52.0));
        assert!((s.mean - 50.4).abs() < 1e-12);
        assert!((s.spread_pct - 6.0).abs() < 1e-12);
        // s = sqrt(5.2 / 4) = 1.1402; half-width = 2.776 * 1.1402 / sqrt(5) = 1.4156
        assert!((s.stddev - 1.140175).abs() < 1e-5);
        assert!((s.ci95.0 - (50.4 - 1.41556)).abs() < 1e-4);
        assert!((s.ci95.1 - (50.4 + 1.41556)).abs() < 1e-4);
    }

    #[test]
    fn one_value_has_no_spread_and_nan_is_ignored() {
        let s = stats(&[f64::NAN, 7.0]).unwrap();
        assert_eq!(
            (s.n, s.stddev, s.spread_pct, s.ci95),
            (1, 0.0, 0.0, (7.0, 7.0))
        );
        assert!(stats(&[]).is_none());
        assert_eq!(stats(&[1.0, 3.0]).unwrap().median, 2.0);
    }
}
