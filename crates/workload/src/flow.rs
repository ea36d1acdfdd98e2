//! fio's flow control (`flow`, `flow_id`, `flow_sleep`): the jobs of one flow keep the
//! requests they issue in proportion to their weights, whatever their speeds — a job whose
//! share of the flow's requests is above its share of the flow's weight issues nothing until
//! the others catch up. The rule both executors apply, as fio 3.33's `flow.c` does: a job's
//! requests over the flow's, against its weight over the flow's.
//!
//! What it is not: the counting itself (the real engine shares atomics between its job
//! threads, the simulator keeps them in its world), or the waiting (a sleep, or an event).

use crate::spec::JobSpec;

/// Whether a job that has issued `own` of its flow's `issued` requests is ahead of its
/// `weight` of the flow's `total_weight`, and so waits (fio: its ratio of requests above
/// its ratio of weight; nothing issued yet is never ahead).
pub fn ahead(own: u64, issued: u64, weight: u32, total_weight: u64) -> bool {
    issued > 0 && (own as u128) * (total_weight as u128) > (weight as u128) * (issued as u128)
}

/// The flows of jobs that run together, by `flow_id`: `(flow_id, total weight)` of the jobs
/// in a flow (each instance counted: fio weighs every job thread), given the spec of each
/// running instance.
pub fn flows<'s>(running: impl Iterator<Item = &'s JobSpec>) -> Vec<(u32, u64)> {
    let mut out: Vec<(u32, u64)> = Vec::new();
    for s in running.filter(|s| s.flow > 0) {
        match out.iter_mut().find(|f| f.0 == s.flow_id) {
            Some(f) => f.1 += u64::from(s.flow),
            None => out.push((s.flow_id, u64::from(s.flow))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job waits exactly when its share of the requests passes its share of the weight:
    /// at weights 2 and 1, the first issues two for each of the second's.
    #[test]
    fn a_job_ahead_of_its_weight_waits() {
        assert!(!ahead(0, 0, 1, 3), "nothing issued: nobody is ahead");
        assert!(!ahead(2, 3, 2, 3));
        assert!(ahead(3, 4, 2, 3));
        assert!(ahead(2, 3, 1, 3));
        assert!(!ahead(1, 3, 1, 3));
        // Two jobs issuing in turn by the rule: 2:1.
        let (mut a, mut b) = (0u64, 0u64);
        for _ in 0..300 {
            if !ahead(a, a + b, 2, 3) {
                a += 1;
            }
            if !ahead(b, a + b, 1, 3) {
                b += 1;
            }
        }
        assert!((a as f64 / b as f64 - 2.0).abs() < 0.02, "{a}:{b}");
    }

    #[test]
    fn flows_sum_the_weights_of_their_jobs() {
        let job = |flow: u32, flow_id: u32| JobSpec {
            flow,
            flow_id,
            ..Default::default()
        };
        let jobs = [job(2, 1), job(1, 1), job(5, 2), job(0, 1)];
        assert_eq!(flows(jobs.iter()), vec![(1, 3), (2, 5)]);
    }
}
