//! What a job with `verify` reads back of what it wrote, and when: fio's `do_verify` (every
//! block written, once the writes are done) and `verify_backlog` (every N blocks written,
//! what is in flight completes and the blocks since the last check are read back). Both
//! executors follow this plan, so a simulated run issues the read-backs a real run would.
//!
//! Plain data in, plain data out: which blocks, in what order, and which jobs must not read
//! back at all. Checking the data read is the real engine's business; the simulator only
//! spends the time.

use crate::JobSpec;

/// A block written: (the job's file index, offset, length), as the job's requests number
/// their files.
pub type Block = (u32, u64, u64);

/// Whether `spec`, once its writes are done, reads back every block it wrote (fio's
/// `do_verify`): a job that only writes, with verify, run to its size. (A time-based job
/// would have to keep every offset it ever wrote: it checks as it goes, with
/// `verify_backlog`, or not at all.)
pub fn at_end(spec: &JobSpec) -> bool {
    spec.verify && spec.do_verify && spec.read_percent() == 0 && !spec.time_based
}

/// What a run says of a job that asks for verify and yet never reads anything back: a
/// time-based job that only writes writes until its runtime ends, so the check at the end
/// never comes, and without `verify_backlog` it checks nothing as it goes (fio 3.33 warns
/// likewise that its "verification read phase will never start"). None for any other job.
pub fn never_note(spec: &JobSpec) -> Option<String> {
    let silent = spec.verify
        && spec.do_verify
        && spec.time_based
        && spec.writes()
        && spec.read_percent() == 0
        && spec.verify_backlog == 0;
    silent.then(|| {
        format!(
            "job '{}': verify reads nothing back: a time_based job writes until its runtime ends, so no block it writes is checked (valid: verify_backlog=N to check as it goes, or a size-bound job without time_based)",
            spec.name
        )
    })
}

/// `spec`'s `verify_backlog` and `verify_backlog_batch`: every `.0` blocks written (0:
/// never) the blocks written since the last check are read back, or `.1` of them (0: all).
/// `do_verify=0` turns these checks off too, as fio 3.33 does (it issues no read then).
pub fn backlog(spec: &JobSpec) -> (u64, u64) {
    if spec.verify && spec.do_verify {
        (spec.verify_backlog, spec.verify_backlog_batch.unwrap_or(0))
    } else {
        (0, 0)
    }
}

/// What a backlog check reads of the blocks written since the last (`wrote`, in the order
/// their writes completed): all of them (`batch` 0), or `batch` of them, the oldest first and
/// round again if it asks for more than there are (as fio's `verify_backlog_batch` may); in
/// (file, offset) order, the order they are read in.
pub fn backlog_blocks(wrote: &[Block], batch: u64) -> Vec<Block> {
    let mut v: Vec<Block> = if batch == 0 {
        wrote.to_vec()
    } else {
        wrote.iter().copied().cycle().take(batch as usize).collect()
    };
    // (A block written twice is read twice, harmlessly.)
    v.sort_unstable();
    v
}

/// What the check at the end reads of the blocks written (`wrote`): each block once, in
/// (file, offset) order.
pub fn end_blocks(mut wrote: Vec<Block>) -> Vec<Block> {
    wrote.sort_unstable();
    wrote.dedup_by_key(|b| (b.0, b.1));
    wrote
}

/// One job of a run, as far as reading back goes: its stonewall group, whether it writes,
/// whether it reads back (at the end or as it goes), and the regions it covers, (target,
/// start, length) in its files' order, the target named however the executor tells targets
/// apart.
#[derive(Clone, Debug)]
pub struct ReadBackJob<K> {
    pub group: usize,
    pub writes: bool,
    pub reads_back: bool,
    pub regions: Vec<(K, u64, u64)>,
}

/// What a run says of a job that [`clashes`] keeps from reading back: `job` (its name) does
/// not read back because `by` (another job's name; None: another instance of the same job)
/// writes some of its blocks of `target` at the same time. Both executors say it in these
/// words.
pub fn clash_note(job: &str, by: Option<&str>, target: &str) -> String {
    let by = match by {
        Some(other) => format!("job '{other}'"),
        None => "another of its instances".to_string(),
    };
    format!(
        "job '{job}': verify does not read back what it wrote: {by} writes some of its blocks of {target} at the same time (valid: regions apart, e.g. offset_increment, or a stonewall between the jobs)"
    )
}

/// The jobs that must not read back: a read-back while another job of the same group writes
/// some of the same blocks could catch its writes half done. Each as (the job, the other
/// job, the index of the job's region they share), the first such other job for each.
/// Jobs writing apart (offsets of their own, `offset_increment`) each read back their own.
pub fn clashes<K: PartialEq>(jobs: &[ReadBackJob<K>]) -> Vec<(usize, usize, usize)> {
    let overlap = |a: &ReadBackJob<K>, b: &ReadBackJob<K>| {
        a.regions.iter().position(|(fa, sa, la)| {
            b.regions
                .iter()
                .any(|(fb, sb, lb)| fa == fb && *sa < sb + lb && *sb < sa + la)
        })
    };
    let mut out = Vec::new();
    for (i, a) in jobs.iter().enumerate() {
        if !a.reads_back {
            continue;
        }
        let other = jobs.iter().enumerate().find_map(|(k, b)| {
            (k != i && b.group == a.group && b.writes)
                .then(|| overlap(a, b).map(|f| (k, f)))
                .flatten()
        });
        if let Some((k, f)) = other {
            out.push((i, k, f));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backlog_batch_takes_the_oldest_and_goes_round_and_reads_in_offset_order() {
        let wrote = [(0, 8192, 4096), (0, 0, 4096), (1, 0, 4096)];
        assert_eq!(backlog_blocks(&wrote, 0), {
            let mut v = wrote.to_vec();
            v.sort();
            v
        });
        assert_eq!(
            backlog_blocks(&wrote, 2),
            vec![(0, 0, 4096), (0, 8192, 4096)]
        );
        assert_eq!(
            backlog_blocks(&wrote, 4),
            vec![(0, 0, 4096), (0, 8192, 4096), (0, 8192, 4096), (1, 0, 4096)]
        );
    }

    #[test]
    fn a_time_based_writer_without_a_backlog_is_told_it_checks_nothing() {
        let mut spec = JobSpec::default();
        spec.name = "j".into();
        for (k, v) in [
            ("rw", "randwrite"),
            ("verify", "crc32c"),
            ("time_based", "1"),
        ] {
            crate::apply_option(&mut spec, k, Some(v)).unwrap();
        }
        let note = never_note(&spec).expect("noted");
        assert!(
            note.starts_with("job 'j': verify reads nothing back"),
            "{note}"
        );
        let mut backlog = spec.clone();
        crate::apply_option(&mut backlog, "verify_backlog", Some("16")).unwrap();
        assert_eq!(
            never_note(&backlog),
            None,
            "verify_backlog checks as it goes"
        );
        let mut sized = spec.clone();
        sized.time_based = false;
        assert_eq!(
            never_note(&sized),
            None,
            "a size-bound job checks at the end"
        );
        let mut off = spec.clone();
        crate::apply_option(&mut off, "do_verify", Some("0")).unwrap();
        assert_eq!(never_note(&off), None, "do_verify=0 asks for no check");
    }

    #[test]
    fn the_end_check_reads_each_block_once() {
        let wrote = vec![(0, 4096, 4096), (0, 0, 4096), (0, 4096, 4096)];
        assert_eq!(end_blocks(wrote), vec![(0, 0, 4096), (0, 4096, 4096)]);
    }

    #[test]
    fn only_writers_of_the_same_group_over_the_same_blocks_clash() {
        let job = |group, writes, reads_back, start| ReadBackJob {
            group,
            writes,
            reads_back,
            regions: vec![("a", start, 100u64)],
        };
        // Overlapping writers of one group: both stop reading back.
        assert_eq!(
            clashes(&[job(0, true, true, 0), job(0, true, true, 50)]),
            vec![(0, 1, 0), (1, 0, 0)]
        );
        // Apart, in other groups, or the other only reads: no clash.
        assert!(clashes(&[job(0, true, true, 0), job(0, true, true, 100)]).is_empty());
        assert!(clashes(&[job(0, true, true, 0), job(1, true, true, 0)]).is_empty());
        assert!(clashes(&[job(0, true, true, 0), job(0, false, false, 0)]).is_empty());
        // Another target with the same offsets: no clash.
        let other = ReadBackJob {
            regions: vec![("b", 0, 100)],
            ..job(0, true, false, 0)
        };
        assert!(clashes(&[job(0, true, true, 0), other]).is_empty());
    }

    #[test]
    fn what_reads_back_follows_verify_do_verify_and_the_pattern() {
        let mut s = JobSpec::default();
        crate::apply_option(&mut s, "rw", Some("write")).unwrap();
        assert!(!at_end(&s), "no verify, nothing read back");
        crate::apply_option(&mut s, "verify", Some("crc32c")).unwrap();
        assert!(at_end(&s));
        crate::apply_option(&mut s, "do_verify", Some("0")).unwrap();
        assert!(!at_end(&s));
        crate::apply_option(&mut s, "do_verify", Some("1")).unwrap();
        crate::apply_option(&mut s, "rw", Some("randrw")).unwrap();
        assert!(!at_end(&s), "a job that reads checks as it reads");
        crate::apply_option(&mut s, "rw", Some("write")).unwrap();
        crate::apply_option(&mut s, "verify_backlog", Some("16")).unwrap();
        assert_eq!(backlog(&s), (16, 0));
        crate::apply_option(&mut s, "do_verify", Some("0")).unwrap();
        assert_eq!(backlog(&s), (0, 0), "do_verify=0: no checks at all");
        crate::apply_option(&mut s, "do_verify", Some("1")).unwrap();
        crate::apply_option(&mut s, "verify", Some("0")).unwrap();
        assert_eq!(backlog(&s), (0, 0));
    }
}
