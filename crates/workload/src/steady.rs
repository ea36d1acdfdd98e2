//! fio's `steadystate` criterion as a job gives it (`iops_slope:0.01%`, …): which rate must
//! settle and under what limit. The judge that samples the rates and applies it is the result
//! crate's (`raidlab_result::steady`), fed by each executor.

use serde::{Deserialize, Serialize};

/// What settles, and under what limit (fio's `steadystate=iops_slope:0.01%`, its default).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyCriterion {
    /// Bandwidth (bytes/s) rather than IOPS.
    pub bw: bool,
    /// The slope rather than the largest deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// `limit` is a percent of the mean.
    pub percent: bool,
}

impl Default for SteadyCriterion {
    fn default() -> Self {
        SteadyCriterion {
            bw: false,
            slope: true,
            limit: 0.01,
            percent: true,
        }
    }
}

impl SteadyCriterion {
    /// fio's spelling: `iops`, `iops_slope`, `bw` or `bw_slope`, a colon, and a limit with an
    /// optional `%` (a bandwidth limit may take a size suffix, bytes/s: `bw:10m`).
    pub fn parse(text: &str) -> Result<SteadyCriterion, String> {
        let valid = "valid: iops, iops_slope, bw or bw_slope, a colon and a limit, e.g. iops_slope:0.1% or iops:50";
        let (name, limit) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("'{text}' has no limit ({valid})"))?;
        let (bw, slope) = match name.trim() {
            "iops" => (false, false),
            "iops_slope" => (false, true),
            "bw" => (true, false),
            "bw_slope" => (true, true),
            other => {
                return Err(format!(
                    "'{other}' is not a steady-state criterion ({valid})"
                ))
            }
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (limit, false),
        };
        let value = match number.parse::<f64>() {
            Ok(v) => v,
            Err(_) if bw && !percent => crate::size::parse_size(number)? as f64,
            Err(_) => return Err(format!("'{limit}' is not a limit ({valid})")),
        };
        if !(value.is_finite() && value > 0.0) {
            return Err(format!("'{limit}': the limit must be above 0 ({valid})"));
        }
        Ok(SteadyCriterion {
            bw,
            slope,
            limit: value,
            percent,
        })
    }

    /// As fio writes it in its JSON: `iops_slope:0.010000%`.
    pub fn text(&self) -> String {
        let name = match (self.bw, self.slope) {
            (false, false) => "iops",
            (false, true) => "iops_slope",
            (true, false) => "bw",
            (true, true) => "bw_slope",
        };
        format!(
            "{name}:{:.6}{}",
            self.limit,
            if self.percent { "%" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_as_fio_spells_them() {
        let c = SteadyCriterion::parse("iops:5%").unwrap();
        assert!(!c.bw && !c.slope && c.percent && c.limit == 5.0);
        assert_eq!(c.text(), "iops:5.000000%");
        let c = SteadyCriterion::parse("bw_slope:10m").unwrap();
        assert!(c.bw && c.slope && !c.percent && c.limit == 10.0 * 1048576.0);
        assert_eq!(SteadyCriterion::default().text(), "iops_slope:0.010000%");
        for bad in ["iops", "lat:1%", "iops:x", "iops:0", "iops:-1%"] {
            let e = SteadyCriterion::parse(bad).unwrap_err();
            assert!(e.contains("valid:"), "{bad}: {e}");
        }
    }
}
