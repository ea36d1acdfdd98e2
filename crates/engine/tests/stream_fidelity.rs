//! The engine issues exactly the workload's request stream: every request, once, nothing else.

mod common;
use common::*;
use proptest::prelude::*;
use raidlab_engine::RunOptions;
use raidlab_workload::{Dir, JobInstance, RequestStream, RwMode};
use std::sync::Arc;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn executed_requests_are_the_stream(
        mode in prop_oneof![Just(RwMode::Read), Just(RwMode::Write), Just(RwMode::RandRead), Just(RwMode::RandRw), Just(RwMode::ReadWrite)],
        bs_sectors in 1u64..32, blocks in 1u64..64, off_sectors in 0u64..64,
        depth in 1u32..16, loops in 1u32..3, numjobs in 1u32..3, seed in any::<u64>(),
    ) {
        let bs = bs_sectors * 512;
        let size = bs * blocks;
        let mut s = spec(&[("bs", &bs.to_string()), ("size", &size.to_string()), ("offset", &(off_sectors * 512).to_string())]);
        s.rw = mode;
        s.iodepth = depth;
        s.loops = loops;
        s.numjobs = numjobs;
        s.offset_increment = size;
        s.randseed = seed;
        s.filenames = vec!["mem".into()];
        let dev_size = off_sectors * 512 + size * numjobs as u64;
        let dev = Arc::new(MemTarget::new(dev_size as usize, 512));
        let r = run_block(std::slice::from_ref(&s), dev.clone(), &RunOptions::default()).unwrap();
        let mut expected: Vec<(bool, u64, u64)> = Vec::new();
        for inst in JobInstance::expand(std::slice::from_ref(&s)) {
            for q in RequestStream::new(&s, &inst, dev_size).unwrap() {
                expected.push((q.dir == Dir::Write, q.offset, q.len));
            }
        }
        let mut got: Vec<(bool, u64, u64)> = dev.log.lock().unwrap().iter().map(|e| (e.1, e.2, e.3)).collect();
        expected.sort_unstable();
        got.sort_unstable();
        prop_assert_eq!(&got, &expected);
        let ios: u64 = r.jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).sum();
        prop_assert_eq!(ios, expected.len() as u64);
        let bytes: u64 = r.jobs.iter().map(|j| j.read.io_bytes + j.write.io_bytes).sum();
        prop_assert_eq!(bytes, expected.iter().map(|e| e.2).sum::<u64>());
    }
}
