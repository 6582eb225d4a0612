#!/usr/bin/env python3
"""Generator for x86_64_adx.rs (2048-bit Montgomery sqr/mul, BMI2+ADX).

Usage: python3 gen_x86_64_adx.py > x86_64_adx.rs
Options (environment): LAYOUT=tiled8|tiled6|rows, REDC=loop|blk, MUL=rows|tiled.

Register plan (all explicit, passed to asm! as fixed registers):
  rax  zero register (and flag clearing via xor eax,eax)
  rdx  mulx multiplier
  rdi  t (scratch 64 limbs), moving pointer in loops
  rsi  a
  rcx  n
  r9   b (mul only) / out
  r12  n0inv
  r13  carry / temp
  r14  loop counter / temp
  r15  out
  r8, r10, r11, r9 temps
"""
import sys

NL = 32


def q(base, idx):
    off = 8 * idx
    if off == 0:
        return f"qword ptr [{base}]"
    return f"qword ptr [{base} + {off}]"


class Asm:
    def __init__(self):
        self.lines = []

    def __call__(self, s):
        self.lines.append(s)


# ---------------------------------------------------------------------------
# Squaring, phase 1: cross products t[i+j] += a_i a_j (i<j), fully unrolled.
# ---------------------------------------------------------------------------
def sqr_cross(A, t="rdi", a="rsi"):
    H = ["r10", "r11"]
    L = "r8"
    # row 0: t[1..32] = a0 * a[1..31]
    A(f"mov rdx, {q(a, 0)}")
    A("xor eax, eax")
    h = 0
    for j in range(1, NL):
        A(f"mulx {H[h]}, {L}, {q(a, j)}")
        if j > 1:
            A(f"adox {L}, {H[h ^ 1]}")
        A(f"mov {q(t, j)}, {L}")
        h ^= 1
    A(f"adox {H[h ^ 1]}, rax")
    A(f"mov {q(t, NL)}, {H[h ^ 1]}")
    for i in range(1, NL - 1):
        A(f"mov rdx, {q(a, i)}")
        A("xor eax, eax")
        h = 0
        for j in range(i + 1, NL):
            A(f"mulx {H[h]}, {L}, {q(a, j)}")
            A(f"adcx {L}, {q(t, i + j)}")
            if j > i + 1:
                A(f"adox {L}, {H[h ^ 1]}")
            A(f"mov {q(t, i + j)}, {L}")
            h ^= 1
        A(f"adcx {H[h ^ 1]}, rax")
        A(f"adox {H[h ^ 1]}, rax")
        A(f"mov {q(t, i + NL)}, {H[h ^ 1]}")



# ---------------------------------------------------------------------------
# Tiled cross products: column blocks of width W, sliding register window of t.
# Per-row carry words CW[i] (scratch t[64+i]) link the blocks; after the last
# block CW[i] is row i's top word (position i+32), added in one final pass.
# Requires rbx/rbp pushed (used as window registers); rcx/r12/r15 saved.
# ---------------------------------------------------------------------------
WIN_REGS = ["rbx", "rbp", "rcx", "r9", "r12", "r13", "r14", "r15"]


def carry_word_segment(A, i, src, j_range, window, has_cw, t="rdi", cw=64):
    """One row segment: window[i + j] += rdx * src[j] for j in j_range, with mulx and the two
    carry chains; the segment starts from row i's carry word t[cw + i] (when has_cw) and leaves
    its carry out there for the next block."""
    H = ["r10", "r11"]
    L = "r8"
    A("xor eax, eax")
    h = 0
    for j in j_range:
        A(f"mulx {H[h]}, {L}, {q(src, j)}")
        A(f"adcx {window[i + j]}, {L}")
        if j == j_range[0]:
            if has_cw:
                A(f"adox {window[i + j]}, {q(t, cw + i)}")
        else:
            A(f"adox {window[i + j]}, {H[h ^ 1]}")
        h ^= 1
    hl = H[h ^ 1]
    A(f"adcx {hl}, rax")
    A(f"adox {hl}, rax")
    A(f"mov {q(t, cw + i)}, {hl}")


def sqr_cross_tiled(A, W=8, t="rdi", a="rsi", b=None, regs=None):
    CW = 64
    regs = list(regs or WIN_REGS)[:W]
    if b is None:
        b = a
        rows = [(i, i + 1, NL) for i in range(NL - 1)]
    else:
        rows = [(i, 0, NL) for i in range(NL)]
    written = set()
    j0 = rows[0][1]
    blocks = []
    while j0 < NL:
        blocks.append((j0, min(NL, j0 + W)))
        j0 += W
    for (b0, b1) in blocks:
        segs = []
        for (i, rs, re_) in rows:
            s, e = max(rs, b0), min(re_, b1)
            if s < e:
                segs.append((i, s, e, s > rs, e == re_))
        window = {}
        free = list(regs)
        for idx, (i, s, e, has_cw, last) in enumerate(segs):
            for p in range(i + s, i + e):
                if p not in window:
                    r = free.pop(0)
                    window[p] = r
                    if p in written:
                        A(f"mov {r}, {q(t, p)}")
                    else:
                        A(f"mov {r}, 0")
            A(f"mov rdx, {q(b, i)}")
            carry_word_segment(A, i, a, range(s, e), window, has_cw, t, CW)
            nextmin = segs[idx + 1][0] + segs[idx + 1][1] if idx + 1 < len(segs) else 10**9
            for p in sorted(window):
                if p < nextmin:
                    A(f"mov {q(t, p)}, {window[p]}")
                    written.add(p)
                    free.append(window.pop(p))
    # final pass: t[32+i] += CW[i], i = 0..30 (or 0..31 for a full product)
    A("xor eax, eax")
    for i in range(len(rows)):
        p = NL + i
        if p in written:
            A(f"mov r8, {q(t, p)}")
            A(f"adcx r8, {q(t, CW + i)}")
        else:
            A(f"mov r8, {q(t, CW + i)}")
            A("adcx r8, rax")
        A(f"mov {q(t, p)}, r8")
    return written


def save_regs(A, t="rdi"):
    A(f"mov {q(t, 96)}, rcx")
    A(f"mov {q(t, 97)}, r12")
    A(f"mov {q(t, 98)}, r15")
    A("push rbx")
    A("push rbp")


def restore_regs(A, t="rdi"):
    A("pop rbp")
    A("pop rbx")
    A(f"mov rcx, {q(t, 96)}")
    A(f"mov r12, {q(t, 97)}")
    A(f"mov r15, {q(t, 98)}")



# ---------------------------------------------------------------------------
# Blocked Montgomery reduction: output positions in blocks of 8 held in a fixed
# register window; every row i contributes one segment per block, linked by a
# carry word CW[i] (scratch t[64+i]); m_i kept in M[i] (scratch t[100+i]).
# Final: u = t[32..64] + sum CW[i] 2^(64 i), carry -> r13; rdi -> t+256.
# Expects rbx/rbp pushed, n0inv at t[97]; clobbers rsi, r9, r12..r15.
# ---------------------------------------------------------------------------
RWIN = ["rbx", "rbp", "rsi", "r9", "r12", "r13", "r14", "r15"]


def redc_blocks(A, t="rdi", n="rcx"):
    CW, M, NI = 64, 100, 97
    for p0 in range(0, 2 * NL, 8):
        Wr = {p0 + k: RWIN[k] for k in range(8)}
        for k in range(8):
            A(f"mov {Wr[p0 + k]}, {q(t, p0 + k)}")
        segs = []
        for i in range(NL):
            if i >= p0 + 8:
                break
            if i < p0:
                js, je = p0 - i, min(NL - 1, p0 + 7 - i)
                if js > NL - 1:
                    continue
                segs.append((i, js, je, True))
            else:
                segs.append((i, 0, p0 + 7 - i, False))
        for (i, js, je, has_cw) in segs:
            if not has_cw:
                A(f"mov rdx, {Wr[i]}")
                A(f"imul rdx, {q(t, NI)}")
                A(f"mov {q(t, M + i)}, rdx")
            else:
                A(f"mov rdx, {q(t, M + i)}")
            carry_word_segment(A, i, n, range(js, je + 1), Wr, has_cw, t, CW)
        if p0 >= NL:
            for k in range(8):
                A(f"mov {q(t, p0 + k)}, {Wr[p0 + k]}")
    # final pass
    for k in range(NL):
        A(f"mov r8, {q(t, NL + k)}")
        A(f"{'add' if k == 0 else 'adc'} r8, {q(t, CW + k)}")
        A(f"mov {q(t, NL + k)}, r8")
    A("mov r13d, 0")
    A("adc r13, 0")
    A(f"lea {t}, [{t} + 256]")


# Phase 2: t = 2*t + sum a_k^2 2^(128k)
def sqr_diag(A, t="rdi", a="rsi"):
    A("xor eax, eax")
    for k in range(NL):
        A(f"mov rdx, {q(a, k)}")
        A("mulx r10, r8, rdx")
        if k == 0:
            A(f"mov {q(t, 0)}, r8")
        else:
            A(f"mov r13, {q(t, 2 * k)}")
            A("adcx r13, r13")
            A("adox r13, r8")
            A(f"mov {q(t, 2 * k)}, r13")
        if k == NL - 1:
            A("mov r14, 0")  # mov keeps flags
        else:
            A(f"mov r14, {q(t, 2 * k + 1)}")
        A("adcx r14, r14")
        A("adox r14, r10")
        A(f"mov {q(t, 2 * k + 1)}, r14")


# Phase 3: Montgomery reduction of t[0..64] in place; result at t[32..64] + carry r13
def redc_loop(A, t="rdi", n="rcx", sepload=False, mreg=False, bias=False):
    H = ["r10", "r11"]
    L = "r8"
    tb = 128 if bias else 0
    nb = 128 if bias else 0
    def T(j): return q(t, j - tb // 8)
    def N(j): return q(n, j - nb // 8)
    if bias:
        A(f"lea {n}, [{n} + 128]")
        A(f"lea {t}, [{t} + 128]")
    A("xor r13d, r13d")
    A("mov r14d, 32")
    if mreg:
        A(f"mov r9, {T(0)}")
    A("2:")
    if mreg:
        A("mov rdx, r9")
    else:
        A(f"mov rdx, {T(0)}")
    A("imul rdx, r12")
    A("xor eax, eax")
    A(f"mulx {H[0]}, {L}, {N(0)}")
    A(f"adcx {L}, {T(0)}")
    h = 1
    for j in range(1, NL):
        if sepload:
            A(f"mov r9, {T(j)}")
            A(f"mulx {H[h]}, {L}, {N(j)}")
            A(f"adcx r9, {L}")
            A(f"adox r9, {H[h ^ 1]}")
            A(f"mov {T(j)}, r9")
        else:
            A(f"mulx {H[h]}, {L}, {N(j)}")
            A(f"adcx {L}, {T(j)}")
            A(f"adox {L}, {H[h ^ 1]}")
            A(f"mov {T(j)}, {L}")
            if mreg and j == 1:
                A(f"mov r9, {L}")
        h ^= 1
    hl = H[h ^ 1]
    A(f"adcx {hl}, rax")
    A(f"adox {hl}, rax")
    A(f"adcx {hl}, r13")
    A(f"adox {hl}, {T(NL)}")
    A(f"mov {T(NL)}, {hl}")
    A("mov r13d, 0")
    A("adcx r13, rax")
    A("adox r13, rax")
    A(f"lea {t}, [{t} + 8]")
    A("dec r14d")
    A("jnz 2b")
    if bias:
        A(f"lea {n}, [{n} - 128]")
        A(f"lea {t}, [{t} - 128]")


# Phase 4: out = u - n if (carry or u >= n) else u ; u at [t], carry r13
def final_sub(A, t="rdi", n="rcx", out="r15"):
    for j in range(NL):
        A(f"mov r8, {q(t, j)}")
        A(f"{'sub' if j == 0 else 'sbb'} r8, {q(n, j)}")
        A(f"mov {q(out, j)}, r8")
    A("sbb r8, r8")      # -borrow
    A("dec r13")         # c - 1
    A("and r8, r13")     # nonzero => keep u
    A("test r8, r8")
    for j in range(NL):
        A(f"mov r10, {q(out, j)}")
        A(f"cmovnz r10, {q(t, j)}")
        A(f"mov {q(out, j)}, r10")


# mul phase 1: t[0..64] = a * b  (rows over b_i, loop)
def mul_rows(A, t="rdi", a="rsi", b="r9"):
    H = ["r10", "r11"]
    L = "r8"
    # row 0
    A(f"mov rdx, {q(b, 0)}")
    A("xor eax, eax")
    h = 0
    for j in range(NL):
        A(f"mulx {H[h]}, {L}, {q(a, j)}")
        if j > 0:
            A(f"adox {L}, {H[h ^ 1]}")
        A(f"mov {q(t, j)}, {L}")
        h ^= 1
    A(f"adox {H[h ^ 1]}, rax")
    A(f"mov {q(t, NL)}, {H[h ^ 1]}")
    A("mov r14d, 31")
    A("3:")
    A(f"lea {t}, [{t} + 8]")
    A(f"lea {b}, [{b} + 8]")
    A(f"mov rdx, {q(b, 0)}")
    A("xor eax, eax")
    h = 0
    for j in range(NL):
        A(f"mulx {H[h]}, {L}, {q(a, j)}")
        A(f"adcx {L}, {q(t, j)}")
        if j > 0:
            A(f"adox {L}, {H[h ^ 1]}")
        A(f"mov {q(t, j)}, {L}")
        h ^= 1
    A(f"adcx {H[h ^ 1]}, rax")
    A(f"adox {H[h ^ 1]}, rax")
    A(f"mov {q(t, NL)}, {H[h ^ 1]}")
    A("dec r14d")
    A("jnz 3b")
    A(f"lea {t}, [{t} - 248]")


def emit_asm_block(lines, indent="        "):
    out = []
    for l in lines:
        out.append(f'{indent}"{l}",')
    return "\n".join(out)


def build_sqr(A, layout):
    import os
    if layout == "rows":
        sqr_cross(A)
    else:
        W = int(layout[len("tiled"):])
        save_regs(A)
        sqr_cross_tiled(A, W)
        restore_regs(A)
    sqr_diag(A)
    if "blk" in os.environ.get("REDC", "loop"):
        A(f"mov {q('rdi', 97)}, r12")
        A(f"mov {q('rdi', 98)}, r15")
        A("push rbx")
        A("push rbp")
        redc_blocks(A)
        A("pop rbp")
        A("pop rbx")
        A(f"mov r15, {q('rdi', 98 - 32)}")
    else:
        redc_loop(A, mreg=True)
    final_sub(A)


def main():
    import os
    layout = os.environ.get("LAYOUT", "tiled8")
    sq = Asm()
    build_sqr(sq, layout)
    mu = Asm()
    if os.environ.get("MUL", "rows") == "rows":
        mul_rows(mu)
        redc_loop(mu, mreg=True)
    else:
        save_regs(mu)
        sqr_cross_tiled(mu, 7, b="r9", regs=[r for r in WIN_REGS if r != "r9"])
        A = mu
        A(f"mov rcx, {q('rdi', 96)}")
        redc_blocks(mu)
        A("pop rbp")
        A("pop rbx")
        A(f"mov r15, {q('rdi', 98 - 32)}")
    final_sub(mu)

    src = f'''//! 2048-bit (32 x u64 limbs) Montgomery squaring / multiplication for x86-64
//! with BMI2 `mulx` and ADX `adcx`/`adox` (two independent carry chains).
//!
//! GENERATED by `gen_x86_64_adx.py` beside this file; do not edit by hand:
//! `python3 gen_x86_64_adx.py > x86_64_adx.rs` (the default layout below is the fastest
//! measured; others are kept in the generator for comparison).
//!
//! Squaring, all straight-line code:
//! (1) dedicated squaring: each cross product a_i*a_j (i<j) once, processed in
//!     column blocks of 8 with a sliding 8-register window of the product;
//!     every row keeps one carry word per block boundary (mulx + adcx/adox),
//! (2) double + add the diagonal a_k^2 in one pass (adcx doubles, adox adds),
//! (3) Montgomery reduction: 32 rows, each an unrolled 32-limb mulx/adcx/adox
//!     body; the next row's multiplier m_i is computed in a register as soon as
//!     its limb is final,
//! (4) final conditional subtraction, branch-free, correct when the
//!     intermediate result is >= 2^2048 (top carry) or >= n.
//! Multiplication: row loop (unrolled 32-limb body) for a*b, then a row-loop
//! Montgomery reduction; same final subtraction.
//! rbx/rbp are used as extra registers and saved/restored with push/pop
//! inside the asm (hence no `nostack` on those blocks).
//! Only `core` is used.

use core::arch::asm;
use core::mem::MaybeUninit;

/// Raw kernel: `out` may equal `a` (a is fully consumed before out is written).
#[inline(never)]
#[target_feature(enable = "bmi2,adx")]
unsafe fn sqr_raw(out: *mut u64, a: *const u64, n: *const u64, n0inv: u64) {{
    let mut t = MaybeUninit::<[u64; 132]>::uninit();
    // SAFETY: caller guarantees bmi2+adx and valid 32-limb pointers; `t` is a
    // 132-limb stack buffer (product, row carry words, saved registers) that the asm fully writes before reading; all
    // clobbered registers are declared; no stack use inside the asm.
    unsafe {{
        asm!(
{emit_asm_block(sq.lines)}
            inout("rdi") t.as_mut_ptr() as *mut u64 => _,
            in("rsi") a,
            in("rcx") n,
            in("r15") out,
            in("r12") n0inv,
            out("rax") _, out("rdx") _, out("r8") _, out("r9") _, out("r10") _,
            out("r11") _, out("r13") _, out("r14") _,
            // not nostack: rbx/rbp are pushed and popped inside
        );
    }}
}}

#[inline(never)]
#[target_feature(enable = "bmi2,adx")]
unsafe fn mul_raw(out: *mut u64, a: *const u64, b: *const u64, n: *const u64, n0inv: u64) {{
    let mut t = MaybeUninit::<[u64; 132]>::uninit();
    // SAFETY: as in `sqr_raw`; `b` is walked limb by limb (32 limbs).
    unsafe {{
        asm!(
{emit_asm_block(mu.lines)}
            inout("rdi") t.as_mut_ptr() as *mut u64 => _,
            in("rsi") a,
            inout("r9") b => _,
            in("rcx") n,
            in("r15") out,
            in("r12") n0inv,
            out("rax") _, out("rdx") _, out("r8") _, out("r10") _,
            out("r11") _, out("r13") _, out("r14") _,
            // not nostack: rbx/rbp are pushed and popped inside
        );
    }}
}}

/// out = a * a * 2^-2048 mod n, fully reduced into [0, n).
/// # Safety
/// The CPU must support `bmi2` and `adx` (caller checks with is_x86_feature_detected!).
#[target_feature(enable = "bmi2,adx")]
pub unsafe fn mont_sqr_32(out: &mut [u64; 32], a: &[u64; 32], n: &[u64; 32], n0inv: u64) {{
    // SAFETY: forwarded precondition (bmi2+adx); pointers come from references.
    unsafe {{ sqr_raw(out.as_mut_ptr(), a.as_ptr(), n.as_ptr(), n0inv) }}
}}

/// In-place variant: x = x * x * 2^-2048 mod n (same speed, no copy).
/// # Safety
/// As for [`mont_sqr_32`].
#[target_feature(enable = "bmi2,adx")]
pub unsafe fn mont_sqr_32_assign(x: &mut [u64; 32], n: &[u64; 32], n0inv: u64) {{
    let p = x.as_mut_ptr();
    // SAFETY: the kernel reads all of `a` before it writes `out`, so aliasing is fine.
    unsafe {{ sqr_raw(p, p as *const u64, n.as_ptr(), n0inv) }}
}}

/// out = a * b * 2^-2048 mod n, fully reduced into [0, n).
/// # Safety
/// The CPU must support `bmi2` and `adx` (caller checks with is_x86_feature_detected!).
#[target_feature(enable = "bmi2,adx")]
pub unsafe fn mont_mul_32(
    out: &mut [u64; 32],
    a: &[u64; 32],
    b: &[u64; 32],
    n: &[u64; 32],
    n0inv: u64,
) {{
    // SAFETY: forwarded precondition (bmi2+adx); pointers come from references.
    unsafe {{ mul_raw(out.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n.as_ptr(), n0inv) }}
}}
'''
    sys.stdout.write(src)


if __name__ == "__main__":
    main()
