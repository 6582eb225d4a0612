//! The single-chain AVX-512 IFMA kernel: one value's squarings in radix 2^52, 40 digits in five
//! 512-bit vectors, each step of amm52.rs's operand scanning done for eight digits at once by
//! `vpmadd52luq` / `vpmadd52huq`. amm52.rs is its portable twin, step for step; the proptests
//! of mod.rs hold both to num-bigint.

use super::amm52::{self, Amm52, Digits, DIGITS, MASK};
use super::LIMBS;
use std::arch::x86_64::*;

/// Vectors per value.
const V: usize = DIGITS / 8;

/// x ← x^(2^k) for x in Montgomery form (R = 2^2048).
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 IFMA.
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn sqr_n(p: &Amm52, x: &mut [u64; LIMBS], k: u64) {
    let n = load(&p.n);
    let mut d = match kept(p, x) {
        Some(d) => d,
        None => {
            let mut acc = amm(&load(&amm52::from_limbs_52(x)), &p.into, &n, p.k0);
            normalize(&mut acc);
            let mut d = [0; DIGITS];
            store(&acc, &mut d);
            d
        }
    };
    let mut acc = load(&d);
    for _ in 0..k {
        acc = amm(&acc, &d, &n, p.k0);
        normalize(&mut acc);
        store(&acc, &mut d);
    }
    *x = amm52::leave(p, &d);
    keep(p, x, &d);
}

/// What this thread's last `sqr_n` returned, in both forms: the prover calls `sqr_n` on its
/// running value every few squarings (between checkpoints), and entering R₅₂-form costs a
/// product, as much as a squaring. A value in R₅₂-form is one representative below 2N of
/// the same residue, so starting from the kept one changes no output.
struct Kept {
    n: Digits,
    out: [u64; LIMBS],
    digits: Digits,
}

thread_local! {
    static KEPT: std::cell::RefCell<Option<Kept>> = const { std::cell::RefCell::new(None) };
}

fn kept(p: &Amm52, x: &[u64; LIMBS]) -> Option<Digits> {
    KEPT.with_borrow(|k| {
        k.as_ref()
            .filter(|k| k.out == *x && k.n == p.n)
            .map(|k| k.digits)
    })
}

fn keep(p: &Amm52, out: &[u64; LIMBS], digits: &Digits) {
    KEPT.with_borrow_mut(|k| {
        *k = Some(Kept {
            n: p.n,
            out: *out,
            digits: *digits,
        })
    });
}

/// a·b·R₅₂⁻¹ mod N below 2N, digits unnormalized: amm52::amm, step for step.
///
/// What bounds the speed is the chain from one step's m to the next's: m comes from the low
/// digit, which the vectors only know after this step's products are added and the digits
/// shifted. So the low digit is also kept in a scalar register: at the start of a step its
/// next value needs only digit 1 as it stands then, and the step's own scalar products, not
/// the vectors' additions that follow.
#[target_feature(enable = "avx512f,avx512ifma")]
fn amm(a: &[__m512i; V], b: &Digits, n: &[__m512i; V], k0: u64) -> [__m512i; V] {
    let zero = _mm512_setzero_si512();
    let mut acc = [zero; V];
    let (a0, a1) = (lane(a[0], 0), lane(a[0], 1));
    let (n0, n1) = (lane(n[0], 0), lane(n[0], 1));
    // Digit 0 of acc.
    let mut t = 0u64;
    for &bi in b {
        let next1 = lane(acc[0], 1);
        let bv = _mm512_set1_epi64(bi as i64);
        for j in 0..V {
            acc[j] = _mm512_madd52lo_epu64(acc[j], a[j], bv);
        }
        let low = t + amm52::lo52(a0, bi);
        let m = low.wrapping_mul(k0) & MASK;
        let mv = _mm512_set1_epi64(m as i64);
        for j in 0..V {
            acc[j] = _mm512_madd52lo_epu64(acc[j], n[j], mv);
        }
        let carry = (low + amm52::lo52(n0, m)) >> 52;
        // Down one digit: lane i takes lane i + 1, the top vector's last lane zero.
        for j in 0..V - 1 {
            acc[j] = _mm512_alignr_epi64::<1>(acc[j + 1], acc[j]);
        }
        acc[V - 1] = _mm512_alignr_epi64::<1>(zero, acc[V - 1]);
        acc[0] = _mm512_mask_add_epi64(acc[0], 1, acc[0], _mm512_set1_epi64(carry as i64));
        for j in 0..V {
            acc[j] = _mm512_madd52hi_epu64(acc[j], a[j], bv);
            acc[j] = _mm512_madd52hi_epu64(acc[j], n[j], mv);
        }
        t = next1
            + amm52::lo52(a1, bi)
            + amm52::lo52(n1, m)
            + carry
            + amm52::hi52(a0, bi)
            + amm52::hi52(n0, m);
    }
    acc
}

/// amm52::normalize on vectors: every lane's excess moves up one lane, until none is left
/// (two or three rounds, a long run of all-ones digits more).
#[target_feature(enable = "avx512f")]
fn normalize(acc: &mut [__m512i; V]) {
    let mask = _mm512_set1_epi64(MASK as i64);
    let zero = _mm512_setzero_si512();
    loop {
        let mut carry = [zero; V];
        let mut any = zero;
        for j in 0..V {
            carry[j] = _mm512_srli_epi64::<52>(acc[j]);
            any = _mm512_or_si512(any, carry[j]);
        }
        if _mm512_test_epi64_mask(any, any) == 0 {
            return;
        }
        for j in (0..V).rev() {
            let below = if j == 0 { zero } else { carry[j - 1] };
            // Lane i takes carry lane i − 1; lane 0 the previous vector's last.
            let up = _mm512_alignr_epi64::<7>(carry[j], below);
            acc[j] = _mm512_add_epi64(_mm512_and_si512(acc[j], mask), up);
        }
    }
}

/// Lane 0 or 1 of a vector.
#[target_feature(enable = "avx512f")]
fn lane(v: __m512i, i: usize) -> u64 {
    let low = _mm512_castsi512_si128(v);
    if i == 0 {
        _mm_cvtsi128_si64(low) as u64
    } else {
        _mm_extract_epi64::<1>(low) as u64
    }
}

#[target_feature(enable = "avx512f")]
fn load(d: &Digits) -> [__m512i; V] {
    let mut v = [_mm512_setzero_si512(); V];
    for (j, x) in v.iter_mut().enumerate() {
        // SAFETY: each read is of eight u64s inside `d` (40 of them); unaligned loads.
        *x = unsafe { _mm512_loadu_epi64(d.as_ptr().add(8 * j) as *const i64) };
    }
    v
}

#[target_feature(enable = "avx512f")]
fn store(v: &[__m512i; V], d: &mut Digits) {
    for (j, x) in v.iter().enumerate() {
        // SAFETY: each write is of eight u64s inside `d` (40 of them); unaligned stores.
        unsafe { _mm512_storeu_epi64(d.as_mut_ptr().add(8 * j) as *mut i64, *x) };
    }
}
