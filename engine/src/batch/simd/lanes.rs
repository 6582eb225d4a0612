//! Four 64-bit lanes and the handful of operations the lane Montgomery arithmetic needs.
//!
//! The arithmetic (monty.rs) is written once, generic over [`Lanes`]; [`Portable`] runs it on
//! plain `[u64; 4]`, [`Avx2`] on one ymm register. Both give the same bits on the same
//! inputs, which is how the tests check the AVX2 path.

/// Four independent 64-bit lanes. Every operation acts lane by lane.
pub(crate) trait Lanes: Copy {
    fn zero() -> Self;
    fn splat(v: u64) -> Self;
    fn from_lanes(v: [u64; 4]) -> Self;
    fn to_lanes(self) -> [u64; 4];
    /// Wrapping addition.
    fn add(self, o: Self) -> Self;
    /// (self mod 2^32) · (o mod 2^32): the full 64-bit product of the low halves
    /// (`vpmuludq`).
    fn mul(self, o: Self) -> Self;
    /// `mul` with the second factor read from memory (one instruction on AVX2).
    fn mul_mem(self, o: &Self) -> Self {
        self.mul(*o)
    }
    fn and(self, o: Self) -> Self;
    /// Logical shift right by `S` bits.
    fn shr<const S: i32>(self) -> Self;
}

/// The portable twin: the same lanes in a plain array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Portable(pub [u64; 4]);

impl Lanes for Portable {
    #[inline(always)]
    fn zero() -> Self {
        Self([0; 4])
    }
    #[inline(always)]
    fn splat(v: u64) -> Self {
        Self([v; 4])
    }
    #[inline(always)]
    fn from_lanes(v: [u64; 4]) -> Self {
        Self(v)
    }
    #[inline(always)]
    fn to_lanes(self) -> [u64; 4] {
        self.0
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l].wrapping_add(o.0[l])))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| {
            (self.0[l] & 0xffff_ffff) * (o.0[l] & 0xffff_ffff)
        }))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] & o.0[l]))
    }
    #[inline(always)]
    fn shr<const S: i32>(self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] >> S))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// Four lanes in one ymm register.
    ///
    /// Values of this type exist only inside the AVX2 entry points (kernel.rs), which are
    /// `#[target_feature(enable = "avx2")]` functions reached only after
    /// `is_x86_feature_detected!("avx2")` held; every method is `#[inline(always)]`, so it
    /// is compiled into those functions with AVX2 enabled.
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub(crate) struct Avx2(__m256i);

    /// `vpmuludq` as inline assembly. LLVM turns `_mm256_mul_epu32` into a generic multiply
    /// of masked operands, and where it then finds the masks unneeded (it sees only low bits
    /// of the product used) it emits a full 64-bit product: three multiplies for one.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn vpmuludq(a: __m256i, b: __m256i) -> __m256i {
        let out: __m256i;
        // SAFETY: one AVX2 instruction on registers (this function needs AVX2 to be called).
        unsafe {
            std::arch::asm!(
                "vpmuludq {out}, {a}, {b}",
                a = in(ymm_reg) a,
                b = in(ymm_reg) b,
                out = lateout(ymm_reg) out,
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        out
    }

    /// [`vpmuludq`] with the second factor from memory.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn vpmuludq_mem(a: __m256i, b: &__m256i) -> __m256i {
        let out: __m256i;
        // SAFETY: one AVX2 instruction reading 32 bytes through a valid reference (the
        // memory form of vpmuludq needs no alignment).
        unsafe {
            std::arch::asm!(
                "vpmuludq {out}, {a}, ymmword ptr [{b}]",
                a = in(ymm_reg) a,
                b = in(reg) b,
                out = lateout(ymm_reg) out,
                options(pure, readonly, nostack, preserves_flags),
            )
        };
        out
    }

    // SAFETY (all the `unsafe` blocks below): the intrinsics and the one instruction of
    // inline assembly need AVX2, which the CPU has wherever an `Avx2` is used (see the
    // type's comment); loads and stores go through references to `[u64; 4]`, which are
    // valid for 32 bytes; the assembly reads and writes registers only.
    impl Lanes for Avx2 {
        #[inline(always)]
        fn zero() -> Self {
            Self(unsafe { _mm256_setzero_si256() })
        }
        #[inline(always)]
        fn splat(v: u64) -> Self {
            Self(unsafe { _mm256_set1_epi64x(v as i64) })
        }
        #[inline(always)]
        fn from_lanes(v: [u64; 4]) -> Self {
            Self(unsafe { _mm256_loadu_si256(v.as_ptr().cast()) })
        }
        #[inline(always)]
        fn to_lanes(self) -> [u64; 4] {
            let mut out = [0u64; 4];
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) };
            out
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Self(unsafe { _mm256_add_epi64(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            Self(unsafe { vpmuludq(self.0, o.0) })
        }
        #[inline(always)]
        fn mul_mem(self, o: &Self) -> Self {
            Self(unsafe { vpmuludq_mem(self.0, &o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Self(unsafe { _mm256_and_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn shr<const S: i32>(self) -> Self {
            Self(unsafe { _mm256_srli_epi64::<S>(self.0) })
        }
    }
}
