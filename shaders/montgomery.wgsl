// Montgomery arithmetic modulo one odd N of 2..64 limbs of 32 bits (64..2048 bits), one
// independent chain per invocation. Loaded by engine/src/batch/gpu.rs.
//
// Numbers are little-endian arrays of u32 limbs. WGSL has no 64-bit integers, so a 32×32→64
// product is built from four 16×16→32 products (`mul_wide`). R = 2^(32·limbs); the host
// converts values into Montgomery form (x·R mod N) and back, and computes n0inv = −N^(−1) mod
// 2^32. Every function keeps its result below N, so values stay canonical between dispatches.
//
// The limb count is a uniform, not a pipeline constant: private arrays must have a fixed size in
// WGSL anyway, and one pipeline then serves every modulus. Loops run to `params.limbs`.
//
// Layout of `values` (and `bases`): structure of arrays, limb j of item i at j·count + i, so the
// invocations of a workgroup read consecutive words (coalesced on real GPUs).
//
// Timing: the conditional subtraction is branch-free, but the pow kernel's multiply depends on
// the exponent bit. Neither matters here: VDF inputs and verification exponents are public.

const MAX_LIMBS: u32 = 64u;
const WORKGROUP: u32 = 64u;

struct Params {
    // Limbs of N (2..64).
    limbs: u32,
    // Items in this dispatch; also the stride of the structure-of-arrays layout.
    count: u32,
    // square_many: squarings in this dispatch. pow_many: exponent rounds in this dispatch.
    steps: u32,
    // pow_many: the first round of this dispatch (round r handles bit bits − 2 − r).
    first: u32,
    // −N^(−1) mod 2^32.
    n0inv: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> modulus: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
// pow_many only: the bases in Montgomery form, the exponents' words (little-endian, item after
// item) and, per item, (offset of its first word, bit length of its exponent).
@group(0) @binding(3) var<storage, read> bases: array<u32>;
@group(0) @binding(4) var<storage, read> exp_words: array<u32>;
@group(0) @binding(5) var<storage, read> exp_meta: array<vec2<u32>>;

// a·b as (low word, high word).
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    // The middle sum can exceed 32 bits; its carry is worth 2^48, i.e. 2^16 in the high word.
    let mid = p01 + p10;
    let mid_carry = select(0u, 0x10000u, mid < p01);
    let lo = p00 + (mid << 16u);
    let lo_carry = select(0u, 1u, lo < p00);
    let hi = p11 + (mid >> 16u) + mid_carry + lo_carry;
    return vec2<u32>(lo, hi);
}

// t + a·b + c as (low word, high word); at most (2^32 − 1)^2 + 2·(2^32 − 1) = 2^64 − 1.
fn mac(t: u32, a: u32, b: u32, c: u32) -> vec2<u32> {
    let p = mul_wide(a, b);
    let s = p.x + t;
    var hi = p.y + select(0u, 1u, s < t);
    let s2 = s + c;
    hi = hi + select(0u, 1u, s2 < c);
    return vec2<u32>(s2, hi);
}

// out ← t − N if (top, t) ≥ N, else t; (top, t) < 2N. Two passes instead of a scratch array:
// the first finds the borrow, the second writes the chosen value without a branch.
fn reduce_once(t: ptr<function, array<u32, 128>>, base: u32, top: u32,
               out: ptr<function, array<u32, 64>>) {
    let limbs = params.limbs;
    var borrow = 0u;
    for (var j = 0u; j < limbs; j = j + 1u) {
        let tj = (*t)[base + j];
        let nj = modulus[j];
        let d = tj - nj;
        borrow = select(0u, 1u, tj < nj || d < borrow);
    }
    // (top, t) − N is non-negative iff the borrow out of the low limbs is covered by top.
    let take = top >= borrow;
    borrow = 0u;
    for (var j = 0u; j < limbs; j = j + 1u) {
        let tj = (*t)[base + j];
        let nj = modulus[j];
        let d = tj - nj;
        let d2 = d - borrow;
        borrow = select(0u, 1u, tj < nj || d < borrow);
        (*out)[j] = select(tj, d2, take);
    }
}

// x ← x²·R^(−1) mod N: the square by separated operand scanning (each cross product once, then
// doubled: about ½·limbs² products instead of limbs²), then Montgomery reduction word by word.
fn mont_sqr(x: ptr<function, array<u32, 64>>) {
    let limbs = params.limbs;
    let n0inv = params.n0inv;
    // 2·limbs words of product (zero-initialised by WGSL); word 2·limbs is `top` below.
    var p: array<u32, 128>;
    // Cross products x[i]·x[j], i < j. Row i ends at p[i + limbs], which no earlier row reached.
    for (var i = 0u; i + 1u < limbs; i = i + 1u) {
        let xi = (*x)[i];
        var c = 0u;
        for (var j = i + 1u; j < limbs; j = j + 1u) {
            let r = mac(p[i + j], xi, (*x)[j], c);
            p[i + j] = r.x;
            c = r.y;
        }
        p[i + limbs] = c;
    }
    // Double: the cross sum is below x²/2 < 2^(64·limbs − 1), so no bit falls off the top.
    for (var i = 2u * limbs - 1u; i > 0u; i = i - 1u) {
        p[i] = (p[i] << 1u) | (p[i - 1u] >> 31u);
    }
    p[0] = p[0] << 1u;
    // Diagonal squares x[i]² at word 2i; each carry is at most 1.
    var c = 0u;
    for (var i = 0u; i < limbs; i = i + 1u) {
        let sq = mul_wide((*x)[i], (*x)[i]);
        let s0 = p[2u * i] + sq.x;
        var c0 = select(0u, 1u, s0 < sq.x);
        let s1 = s0 + c;
        c0 = c0 + select(0u, 1u, s1 < c);
        p[2u * i] = s1;
        let h0 = p[2u * i + 1u] + sq.y;
        var c1 = select(0u, 1u, h0 < sq.y);
        let h1 = h0 + c0;
        c1 = c1 + select(0u, 1u, h1 < c0);
        p[2u * i + 1u] = h1;
        c = c1;
    }
    // Reduction: add m·N·2^(32i) so that word i becomes zero. The total stays below
    // N² + R·N < 2·R·N, so one extra bit (`top`) holds what overflows word 2·limbs − 1.
    var top = 0u;
    for (var i = 0u; i < limbs; i = i + 1u) {
        let m = p[i] * n0inv;
        var carry = 0u;
        for (var j = 0u; j < limbs; j = j + 1u) {
            let r = mac(p[i + j], m, modulus[j], carry);
            p[i + j] = r.x;
            carry = r.y;
        }
        let s = p[i + limbs] + carry;
        let c2 = select(0u, 1u, s < carry);
        let s2 = s + top;
        top = c2 + select(0u, 1u, s2 < top);
        p[i + limbs] = s2;
    }
    reduce_once(&p, limbs, top, x);
}

// a ← a·b·R^(−1) mod N by coarsely integrated operand scanning (CIOS): one row of a·b[i], then
// one reduction row, with limbs + 2 words of state.
fn mont_mul(a: ptr<function, array<u32, 64>>, b: ptr<function, array<u32, 64>>) {
    let limbs = params.limbs;
    let n0inv = params.n0inv;
    var t: array<u32, 128>;
    for (var i = 0u; i < limbs; i = i + 1u) {
        let bi = (*b)[i];
        var c = 0u;
        for (var j = 0u; j < limbs; j = j + 1u) {
            let r = mac(t[j], (*a)[j], bi, c);
            t[j] = r.x;
            c = r.y;
        }
        let s = t[limbs] + c;
        t[limbs + 1u] = select(0u, 1u, s < c);
        t[limbs] = s;
        let m = t[0] * n0inv;
        var r = mac(t[0], m, modulus[0], 0u);
        c = r.y;
        for (var j = 1u; j < limbs; j = j + 1u) {
            r = mac(t[j], m, modulus[j], c);
            t[j - 1u] = r.x;
            c = r.y;
        }
        let s2 = t[limbs] + c;
        t[limbs - 1u] = s2;
        t[limbs] = t[limbs + 1u] + select(0u, 1u, s2 < c);
    }
    reduce_once(&t, 0u, t[limbs], a);
}

// The item of this invocation; the grid is 2D when one dimension has too few workgroups.
fn item_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WORKGROUP;
}

fn store(i: u32, x: ptr<function, array<u32, 64>>) {
    let count = params.count;
    for (var j = 0u; j < params.limbs; j = j + 1u) {
        values[j * count + i] = (*x)[j];
    }
}

// values[i] ← values[i]^(2^steps), in Montgomery form.
@compute @workgroup_size(64)
fn square_many(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) groups: vec3<u32>) {
    let i = item_index(gid, groups);
    if i >= params.count {
        return;
    }
    var x: array<u32, 64>;
    let count = params.count;
    for (var j = 0u; j < params.limbs; j = j + 1u) {
        x[j] = values[j * count + i];
    }
    for (var s = 0u; s < params.steps; s = s + 1u) {
        mont_sqr(&x);
    }
    store(i, &x);
}

// Left-to-right square-and-multiply, rounds first .. first + steps of it. values[i] starts as
// the base (the top bit of the exponent); round r squares and, if bit bits − 2 − r is set,
// multiplies by the base. Items whose exponent has run out stop early (exponents of 0 or 1 bit
// have no rounds: the host fixes up exponent 0).
@compute @workgroup_size(64)
fn pow_many(@builtin(global_invocation_id) gid: vec3<u32>,
            @builtin(num_workgroups) groups: vec3<u32>) {
    let i = item_index(gid, groups);
    if i >= params.count {
        return;
    }
    let em = exp_meta[i];
    let bits = em.y;
    if params.first + 1u >= bits {
        return;
    }
    var acc: array<u32, 64>;
    var base: array<u32, 64>;
    let count = params.count;
    for (var j = 0u; j < params.limbs; j = j + 1u) {
        acc[j] = values[j * count + i];
        base[j] = bases[j * count + i];
    }
    for (var s = 0u; s < params.steps; s = s + 1u) {
        let r = params.first + s;
        if r + 1u >= bits {
            break;
        }
        let b = bits - 2u - r;
        mont_sqr(&acc);
        if ((exp_words[em.x + b / 32u] >> (b % 32u)) & 1u) == 1u {
            mont_mul(&acc, &base);
        }
    }
    store(i, &acc);
}

// Counts `steps` loop iterations into values[0]. Some drivers end every loop of a shader once
// the invocation has run a fixed number of loop iterations in total (the llvmpipe of Debian
// 12's Mesa 22.3: 65,535), which silently corrupts long chains. The host runs this once; if
// the count comes back short, it cuts dispatches so that each stays below that number.
@compute @workgroup_size(1)
fn probe_loops() {
    var n = modulus[0] & 0u;
    for (var i = 0u; i < params.steps; i = i + 1u) {
        n = n + 1u;
    }
    values[0] = n;
}
