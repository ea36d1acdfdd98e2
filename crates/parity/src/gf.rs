//! Arithmetic in GF(2^8) with the reducing polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d) and
//! generator g = 2 (the field used by Linux md's RAID-6 and by ISA-L).
//!
//! Addition is XOR. Multiplication uses logarithm and exponential tables: since g generates the
//! multiplicative group (order 255), every nonzero a is g^log(a), and a·b = g^(log a + log b).
//! Reference: H. Peter Anvin, "The mathematics of RAID-6" (2004, revised 2011), sections 1–2.
//! The tables are computed at compile time from the polynomial; nothing is copied in.

/// The reducing polynomial, bit 8 included.
pub const POLY: u16 = 0x11d;

/// The field's generator.
pub const GENERATOR: u8 = 2;

/// Multiply by x (= 2) and reduce: shift left, and if bit 8 was set subtract (XOR) the polynomial.
pub const fn mul2(a: u8) -> u8 {
    let wide = (a as u16) << 1;
    if wide & 0x100 != 0 {
        (wide ^ POLY) as u8
    } else {
        wide as u8
    }
}

const fn build_exp() -> [u8; 510] {
    let mut t = [0u8; 510];
    let mut x: u8 = 1;
    let mut i = 0;
    while i < 255 {
        t[i] = x;
        t[i + 255] = x; // doubled so that EXP[log a + log b] needs no reduction mod 255
        x = mul2(x);
        i += 1;
    }
    t
}

const fn build_log(exp: &[u8; 510]) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 255 {
        t[exp[i] as usize] = i as u8;
        i += 1;
    }
    t
}

/// `EXP[i]` = g^i for i in 0..510 (two periods).
pub const EXP: [u8; 510] = build_exp();
/// `LOG[a]` = i with g^i = a, for a != 0; `LOG[0]` is meaningless (0 has no logarithm).
pub const LOG: [u8; 256] = build_log(&EXP);

/// a · b in GF(2^8).
#[inline]
pub const fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        0
    } else {
        EXP[LOG[a as usize] as usize + LOG[b as usize] as usize]
    }
}

/// Multiplicative inverse. Panics on 0, which has none.
#[inline]
pub const fn inv(a: u8) -> u8 {
    assert!(a != 0, "0 has no inverse in GF(2^8)");
    EXP[255 - LOG[a as usize] as usize]
}

/// a / b. Panics when b is 0.
#[inline]
pub const fn div(a: u8, b: u8) -> u8 {
    mul(a, inv(b))
}

/// g^e for any exponent (negative exponents give inverses).
#[inline]
pub const fn pow_g(e: i64) -> u8 {
    EXP[e.rem_euclid(255) as usize]
}

/// The 256 products c·x for x = 0..=255: a scalar multiply-by-constant table.
pub fn mul_row(c: u8) -> [u8; 256] {
    let mut row = [0u8; 256];
    for (x, r) in row.iter_mut().enumerate() {
        *r = mul(c, x as u8);
    }
    row
}

/// The two 16-entry nibble tables for multiplying by c: `c·x = lo[x & 15] ^ hi[x >> 4]`, since
/// multiplication distributes over XOR and x = (x & 15) ^ (x & 0xf0). This is what byte
/// shuffles (pshufb) evaluate sixteen or more bytes at a time.
pub fn nibble_tables(c: u8) -> ([u8; 16], [u8; 16]) {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    for i in 0..16u8 {
        lo[i as usize] = mul(c, i);
        hi[i as usize] = mul(c, i << 4);
    }
    (lo, hi)
}

/// The 8×8 bit matrix, in the layout GF2P8AFFINEQB expects, that multiplies a byte by c.
///
/// Multiplication by a constant is linear over GF(2), so it is a matrix: column j is c·2^j.
/// GF2P8AFFINEQB computes output bit i as the parity of (x AND byte 7−i of the matrix
/// qword), so byte 7−i holds row i: bit j of it is bit i of c·2^j. (Intel SDM, GF2P8AFFINEQB.)
/// This is how GF(2^8) products for a polynomial other than GFNI's own 0x11b are done with it.
pub const fn affine_matrix(c: u8) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut j = 0;
        while j < 8 {
            if (mul(c, 1 << j) >> i) & 1 == 1 {
                row |= 1 << j;
            }
            j += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Carry-less multiply then reduce by 0x11d: the definition, independent of the tables.
    fn mul_slow(a: u8, b: u8) -> u8 {
        let mut acc: u16 = 0;
        for i in 0..8 {
            if (b >> i) & 1 == 1 {
                acc ^= (a as u16) << i;
            }
        }
        for bit in (8..16).rev() {
            if acc & (1 << bit) != 0 {
                acc ^= POLY << (bit - 8);
            }
        }
        acc as u8
    }

    #[test]
    fn tables_agree_with_polynomial_multiplication() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_slow(a, b), "{a}·{b}");
            }
        }
    }

    #[test]
    fn generator_has_order_255() {
        let mut seen = [false; 256];
        for i in 0..255 {
            assert!(!seen[EXP[i] as usize], "g^{i} repeats");
            seen[EXP[i] as usize] = true;
        }
        assert!(!seen[0]);
        assert_eq!(EXP[255], 1);
    }

    #[test]
    fn inverses() {
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1);
            assert_eq!(pow_g(-(LOG[a as usize] as i64)), inv(a));
        }
    }

    #[test]
    fn nibble_tables_multiply() {
        for c in 0..=255u8 {
            let (lo, hi) = nibble_tables(c);
            for x in 0..=255u8 {
                assert_eq!(lo[(x & 15) as usize] ^ hi[(x >> 4) as usize], mul(c, x));
            }
        }
    }

    /// What GF2P8AFFINEQB does to one byte with matrix m and constant 0 (Intel SDM).
    fn affine_byte(m: u64, x: u8) -> u8 {
        let mut r = 0u8;
        for i in 0..8 {
            let row = (m >> (8 * (7 - i))) as u8;
            r |= (((row & x).count_ones() & 1) as u8) << i;
        }
        r
    }

    #[test]
    fn affine_matrix_multiplies() {
        for c in 0..=255u8 {
            let m = affine_matrix(c);
            for x in 0..=255u8 {
                assert_eq!(affine_byte(m, x), mul(c, x), "c={c} x={x}");
            }
        }
    }
}
