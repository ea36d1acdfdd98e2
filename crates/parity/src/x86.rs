//! x86-64 SIMD kernels and their run-time dispatch.

use crate::Kernel;

pub(crate) fn available(_k: Kernel) -> bool {
    false
}

pub(crate) fn xor_gen(k: Kernel, _srcs: &[&[u8]], _dst: &mut [u8]) {
    unreachable!("{k} not built")
}
pub(crate) fn pq_gen(k: Kernel, _srcs: &[&[u8]], _p: Option<&mut [u8]>, _q: &mut [u8]) {
    unreachable!("{k} not built")
}
pub(crate) fn update(
    k: Kernel,
    _old: &[u8],
    _new: &[u8],
    _p: &mut [u8],
    _q: Option<(&mut [u8], u8)>,
) {
    unreachable!("{k} not built")
}
pub(crate) fn recover_dp(k: Kernel, _c: u8, _dx: &mut [u8], _p: &mut [u8], _q: &[u8]) {
    unreachable!("{k} not built")
}
pub(crate) fn recover_dd(
    k: Kernel,
    _ca: u8,
    _cb: u8,
    _dx: &mut [u8],
    _dy: &mut [u8],
    _p: &[u8],
    _q: &[u8],
) {
    unreachable!("{k} not built")
}
