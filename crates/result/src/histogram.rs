//! A log-linear ("HDR") latency histogram in nanoseconds, bucketed exactly as fio buckets
//! completion latencies, so `json+` output carries bins fio's own tools understand.
//!
//! Values below 128 ns get one bucket each; above, every power of two is split into 64
//! equal buckets (6 bits of precision, under 1.6% error). 29 groups × 64 = 1856 buckets
//! reach about 17 seconds; larger values land in the last bucket. Min, max, sum and sum of
//! squares are kept exactly beside the buckets.

use serde::{Deserialize, Serialize};

/// Sub-bucket bits per power of two (fio's FIO_IO_U_PLAT_BITS).
pub const PLAT_BITS: u32 = 6;
/// Sub-buckets per power of two.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Number of power-of-two groups.
pub const PLAT_GROUPS: usize = 29;
/// Total buckets.
pub const PLAT_NR: usize = PLAT_GROUPS * PLAT_VAL as usize;

/// Bucket index of a latency value in ns.
#[inline]
pub fn bucket_of(value: u64) -> usize {
    // A value's top PLAT_BITS + 1 bits (64–127) above the group's 64 × its error bits.
    // Below 128 there are no error bits and the value is its own bucket: one expression,
    // without a branch, serves every value.
    let msb = 63 - (value | 1).leading_zeros();
    let error_bits = msb.saturating_sub(PLAT_BITS);
    let index = ((error_bits as usize) << PLAT_BITS) + (value >> error_bits) as usize;
    index.min(PLAT_NR - 1)
}

/// Representative value (ns) of a bucket: its midpoint, as fio reports it.
#[inline]
pub fn bucket_value(index: usize) -> u64 {
    if index < (PLAT_VAL as usize) << 1 {
        return index as u64;
    }
    let error_bits = (index >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (index as u64) % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyHistogram {
    #[serde(with = "sparse_counts")]
    counts: Vec<u64>,
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: f64,
}

impl Clone for LatencyHistogram {
    fn clone(&self) -> Self {
        LatencyHistogram {
            counts: self.counts.clone(),
            ..*self
        }
    }
    /// Copies the counts into the buckets `self` already has, without allocating.
    fn clone_from(&mut self, source: &Self) {
        let mut counts = std::mem::take(&mut self.counts);
        counts.clone_from(&source.counts);
        *self = LatencyHistogram { counts, ..*source };
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; PLAT_NR],
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0.0,
        }
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.sum_sq += (ns as f64) * (ns as f64);
    }
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// Sample standard deviation, as fio reports it.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let mean = self.sum as f64 / n;
        ((self.sum_sq - n * mean * mean) / (n - 1.0))
            .max(0.0)
            .sqrt()
    }
    /// Latency at percentile `p` (0–100): the value of the bucket holding that rank, clamped
    /// to the exact min and max.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return bucket_value(i).clamp(self.min, self.max);
            }
        }
        self.max
    }
    /// Non-empty buckets as (representative ns, count), ascending.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_value(i), c))
    }
}

/// Store only non-empty buckets in serialized form.
mod sparse_counts {
    use super::PLAT_NR;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(counts: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(usize, u64)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i, c))
            .collect();
        pairs.serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let pairs: Vec<(usize, u64)> = Vec::deserialize(d)?;
        let mut counts = vec![0; PLAT_NR];
        for (i, c) in pairs {
            if i >= PLAT_NR {
                return Err(serde::de::Error::custom(format!(
                    "histogram bucket {i} out of range"
                )));
            }
            counts[i] = c;
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_within_precision() {
        for v in [
            0u64,
            1,
            100,
            127,
            128,
            1000,
            4096,
            123_456,
            9_999_999,
            1_000_000_000,
        ] {
            let b = bucket_value(bucket_of(v));
            let err = (b as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err < 0.016, "{v} -> bucket {} -> {b}", bucket_of(v));
        }
        // Buckets are monotonic.
        let mut last = 0;
        for i in 0..PLAT_NR {
            let v = bucket_value(i);
            assert!(v >= last);
            last = v;
        }
    }

    /// fio's bucketing, as written in its stat.c.
    fn fio_bucket(value: u64) -> usize {
        if value == 0 {
            return 0;
        }
        let msb = 63 - value.leading_zeros();
        if msb <= PLAT_BITS {
            return value as usize;
        }
        let error_bits = msb - PLAT_BITS;
        let base = ((error_bits + 1) as usize) << PLAT_BITS;
        let offset = ((PLAT_VAL - 1) & (value >> error_bits)) as usize;
        (base + offset).min(PLAT_NR - 1)
    }

    #[test]
    fn buckets_as_fio_buckets_them() {
        for v in 0..70_000u64 {
            assert_eq!(bucket_of(v), fio_bucket(v), "{v}");
        }
        for shift in 0..64 {
            for d in [0u64, 1, 2, 3, 63, 64, 65, 127] {
                for v in [
                    (1u64 << shift).wrapping_add(d),
                    (1u64 << shift).wrapping_sub(d),
                ] {
                    assert_eq!(bucket_of(v), fio_bucket(v), "{v}");
                }
            }
        }
        assert_eq!(bucket_of(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn statistics() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.min(), 1000);
        assert_eq!(h.max(), 1_000_000);
        assert!((h.mean() - 500_500.0).abs() < 1e-6);
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.02, "{p50}");
        let p99 = h.percentile(99.0) as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.02, "{p99}");
        assert!((h.stddev() - 288_819.4).abs() < 1.0, "{}", h.stddev());
        let mut g = LatencyHistogram::new();
        g.record(5);
        g.merge(&h);
        assert_eq!(g.count(), 1001);
        assert_eq!(g.min(), 5);
        let mut c = LatencyHistogram::new();
        c.record(7);
        c.clone_from(&g);
        assert_eq!(c, g);
        assert_eq!(c, g.clone());
    }

    #[test]
    fn serde_keeps_only_used_buckets() {
        let mut h = LatencyHistogram::new();
        h.record(42);
        h.record(4242);
        let s = serde_json::to_string(&h).unwrap();
        assert!(s.len() < 200, "{s}");
        let back: LatencyHistogram = serde_json::from_str(&s).unwrap();
        assert_eq!(back, h);
    }
}
