//! Non-uniform random offsets (fio's `random_distribution`): which block of a job's region a
//! random request goes to, drawn from zipf, pareto, normal or zoned shares.
//!
//! A distribution is over the region's `n` blocks of the job's smallest block size (or its
//! `blockalign`). zipf, pareto and normal draw a *rank* (0 the most likely) and scatter the
//! ranks over the region with a keyed permutation, so the hot blocks lie apart as they do
//! in fio (which hashes the rank); a `center` puts the most likely block at that share of
//! the region. Zoned distributions pick a zone by its share of the accesses, then a block
//! uniformly within it.
//!
//! The formulas are the published ones fio uses: zipf after Gray et al., "Quickly
//! generating billion-record synthetic databases" (SIGMOD 1994), with ζ(n, θ) summed
//! exactly for the first 2^16 ranks and by its integral beyond; pareto as `(n-1)·u^(ln h /
//! ln(1-h))`; normal as the mean of twelve uniform draws over the ranks, plus a uniform
//! deviation of `dev` percent of the region (fio's recipe).

use crate::spec::{Distribution, Zone};
use crate::stream::{BlockShuffle, Dir, Rng};

/// A non-uniform distribution of blocks over one region, ready to draw from.
#[derive(Clone, Debug)]
pub struct OffsetDist {
    /// Blocks in the region.
    n: u64,
    shape: Shape,
}

#[derive(Clone, Debug)]
enum Shape {
    /// A rank drawn by `ranks`, placed by `scatter`.
    Ranked { ranks: Ranks, scatter: Scatter },
    /// Per direction (reads, writes): zones as (cumulative access percent up to and
    /// including the zone, first block, blocks).
    Zoned([Vec<(u32, u64, u64)>; 3]),
}

#[derive(Clone, Copy, Debug)]
enum Ranks {
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        power: f64,
    },
    Normal {
        /// Width of the uniform deviation, blocks (0: none).
        spread: u64,
    },
}

/// Where ranks land: a permutation of the blocks, turned so that rank `anchor` lands on
/// block `at` (a `center`), or as it falls.
#[derive(Clone, Copy, Debug)]
struct Scatter {
    perm: BlockShuffle,
    /// `(rank, block)`: the permutation is rotated to send this rank to this block.
    turn: Option<(u64, u64)>,
}

/// Ranks summed exactly in ζ(n, θ); the rest by the integral of x^-θ.
const ZETA_EXACT: u64 = 1 << 16;

/// ζ(n, θ) = Σ_{i=1..n} i^-θ: exact up to [`ZETA_EXACT`], then the integral of x^-θ over
/// [ZETA_EXACT + ½, n + ½] (the midpoint rule, close for a smooth decreasing term).
fn zeta(n: u64, theta: f64) -> f64 {
    let exact = n.min(ZETA_EXACT);
    let mut sum = 0.0;
    for i in 1..=exact {
        sum += (i as f64).powf(-theta);
    }
    if n > exact {
        let (a, b) = (exact as f64 + 0.5, n as f64 + 0.5);
        sum += (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    }
    sum
}

impl OffsetDist {
    /// The distribution `dist` over `n` blocks of `unit` bytes (n ≥ 1); `key` places the
    /// scattered ranks. `None` for the uniform distribution. A zoned_abs distribution whose
    /// zones run past the region is refused, with what the region holds.
    pub fn new(dist: &Distribution, n: u64, unit: u64, key: u64) -> Result<Option<Self>, String> {
        debug_assert!(n >= 1 && unit >= 1);
        let scatter = |center: Option<f64>, anchor: u64| {
            let perm = BlockShuffle::new(n, key);
            Scatter {
                perm,
                turn: center.map(|c| (anchor, ((c * n as f64) as u64).min(n - 1))),
            }
        };
        let shape = match dist {
            Distribution::Random => return Ok(None),
            &Distribution::Zipf { theta, center } => {
                let zetan = zeta(n, theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Shape::Ranked {
                    ranks: Ranks::Zipf {
                        theta,
                        zetan,
                        alpha,
                        eta,
                    },
                    scatter: scatter(center, 0),
                }
            }
            &Distribution::Pareto { h, center } => Shape::Ranked {
                ranks: Ranks::Pareto {
                    power: h.ln() / (1.0 - h).ln(),
                },
                scatter: scatter(center, 0),
            },
            &Distribution::Normal { dev, center } => {
                let spread = ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2);
                Shape::Ranked {
                    ranks: Ranks::Normal { spread },
                    scatter: scatter(center, n / 2),
                }
            }
            Distribution::Zoned {
                absolute,
                read,
                write,
                trim,
            } => {
                let table = |zones: &[Zone]| -> Result<Vec<(u32, u64, u64)>, String> {
                    let mut out = Vec::with_capacity(zones.len());
                    let (mut acc, mut first) = (0u32, 0u64);
                    let mut pct_before = 0u64;
                    for z in zones {
                        acc += z.access_percent;
                        let blocks = if *absolute {
                            z.size / unit
                        } else {
                            // As fio: a zone from stotal% to send% of the blocks.
                            let start = pct_before * n / 100;
                            pct_before += z.size;
                            pct_before * n / 100 - start
                        };
                        if z.access_percent > 0 {
                            out.push((acc, first, blocks.max(1)));
                        }
                        first += blocks;
                    }
                    if *absolute && first > n {
                        let sum: u64 = zones.iter().map(|z| z.size).sum();
                        return Err(format!(
                            "zoned_abs zones cover {sum} bytes but the job's region holds {} (valid: zones within the region)",
                            n * unit
                        ));
                    }
                    // A zone of a region too small for it still has its one block.
                    for z in &mut out {
                        if z.1 >= n {
                            z.1 = n - 1;
                        }
                        z.2 = z.2.min(n - z.1);
                    }
                    Ok(out)
                };
                let trims = table(trim.as_deref().unwrap_or(write))?;
                Shape::Zoned([table(read)?, table(write)?, trims])
            }
        };
        Ok(Some(OffsetDist { n, shape }))
    }

    /// Blocks in the region.
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// The next block (0..n) of a request in direction `dir`.
    pub fn block(&self, dir: Dir, rng: &mut Rng) -> u64 {
        match &self.shape {
            Shape::Ranked { ranks, scatter } => {
                let rank = self.rank(ranks, rng).min(self.n - 1);
                let b = scatter.perm.at(rank);
                match scatter.turn {
                    None => b,
                    Some((anchor, at)) => {
                        let from = scatter.perm.at(anchor.min(self.n - 1));
                        (b + self.n - from + at) % self.n
                    }
                }
            }
            Shape::Zoned(tables) => {
                let zones = &tables[dir as usize];
                let v = rng.below(100) as u32 + 1; // 1..=100, as fio's
                let &(_, first, blocks) = zones
                    .iter()
                    .find(|z| v <= z.0)
                    .unwrap_or_else(|| zones.last().expect("zones validated non-empty"));
                first + rng.below(blocks)
            }
        }
    }

    fn rank(&self, ranks: &Ranks, rng: &mut Rng) -> u64 {
        let n = self.n;
        match *ranks {
            Ranks::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u = rng.next_f64();
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(theta) {
                    1
                } else {
                    let v = n as f64 * (eta * u - eta + 1.0).powf(alpha);
                    (v as u64).min(n - 1)
                }
            }
            Ranks::Pareto { power } => ((n - 1) as f64 * rng.next_f64().powf(power)) as u64,
            Ranks::Normal { spread } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += rng.below(n + 1);
                }
                let mut v = sum.div_ceil(12) as i64;
                if spread > 0 {
                    let mut dev = (spread as f64 * rng.next_f64()) as i64 - (spread / 2) as i64;
                    while dev != 0 && v + dev >= n as i64 {
                        dev /= 2;
                    }
                    v += dev;
                }
                v.clamp(0, n as i64 - 1) as u64
            }
        }
    }
}
