//! The seeds' qualitative findings, as the issue lists them.

mod common;
use common::*;

#[test]
fn two_interfaces_roughly_double_one_for_writes() {
    // Seed 000 §5: two 11+p units on two interfaces write about twice one unit on one.
    let one = mb_s(&system("llnl2000/fig14.toml"), &[("rw", "write"), ("bs", "1m"), ("size", "4g")]);
    let two = mb_s(&system("llnl2000/fig20.toml"), &[("rw", "write"), ("bs", "1m"), ("size", "4g")]);
    assert!((1.7..2.2).contains(&(two / one)), "one {one:.1}, two {two:.1}");
    // …while one interface with two units is held by the interface's write limit.
    let shared = mb_s(&system("llnl2000/fig16.toml"), &[("rw", "write"), ("bs", "1m"), ("size", "4g")]);
    assert!(shared < two * 0.97, "one interface {shared:.1} vs two {two:.1}");
}

#[test]
fn same_inputs_same_results_bit_for_bit() {
    let s = spec(&system("llnl2000/fig18.toml"), &[("rw", "randrw"), ("bs", "16k"), ("size", "64m"), ("iodepth", "4")]);
    let a = raidlab_sim::run(std::slice::from_ref(&s)).unwrap();
    let b = raidlab_sim::run(std::slice::from_ref(&s)).unwrap();
    assert_eq!(a, b);
}
