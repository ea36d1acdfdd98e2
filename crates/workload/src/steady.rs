//! fio's `steadystate` criterion as a job gives it (`iops_slope:0.01%`, …): which rate must
//! settle and under what limit; and which jobs one judge takes together. The judge that
//! samples the rates and applies it is the result crate's (`raidlab_result::steady`), fed by
//! each executor.

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

/// Which jobs of a run one steady-state judge samples together (fio's `steadystate`): `jobs`
/// gives each job's spec and reporting group, in the run's order. A job with a
/// `steadystate_duration` is judged alone, or under `group_reporting` with the others of its
/// reporting group that have one, their rates summed. Each judge's members in run order; the
/// last is the one whose criterion applies and whose result carries the report, as fio's.
pub fn steady_judges(specs: &[crate::JobSpec], jobs: &[(usize, u32)]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    // (A reporting group's judge, by its place in `out`.)
    let mut of_group: Vec<(u32, usize)> = Vec::new();
    for (k, &(si, group)) in jobs.iter().enumerate() {
        let s = &specs[si];
        if s.ss_dur_s == 0 {
            continue;
        }
        match of_group.iter().find(|g| s.group_reporting && g.0 == group) {
            Some(&(_, j)) => out[j].push(k),
            None => {
                if s.group_reporting {
                    of_group.push((group, out.len()));
                }
                out.push(vec![k]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs judged alone, and a group_reporting group's judged together, its last job last;
    /// jobs without a window are not judged.
    #[test]
    fn judges_take_a_job_or_its_reporting_group() {
        let spec = |ss: bool, grouped: bool| crate::JobSpec {
            ss_dur_s: u32::from(ss) * 5,
            group_reporting: grouped,
            ..Default::default()
        };
        let specs = [
            spec(true, false),
            spec(true, true),
            spec(false, true),
            spec(true, true),
        ];
        // (spec, reporting group) of each job: spec 0 twice, then a group of specs 1–3, then
        // spec 3 alone in a group of its own.
        let jobs = [(0, 0), (0, 0), (1, 1), (2, 1), (3, 1), (3, 2)];
        assert_eq!(
            steady_judges(&specs, &jobs),
            [vec![0], vec![1], vec![2, 4], vec![5]]
        );
    }

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
