//! RAID parity: XOR and GF(2^8) P+Q generation and recovery, scalar reference and SIMD kernels.
