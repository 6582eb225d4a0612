// Montgomery arithmetic modulo one odd N of 64 to 2048 bits, one independent chain per
// invocation. A template: engine/src/batch/gpu/kernel.rs fills in the double-brace markers for one
// digit count D and writes the arithmetic out as straight-line code, then wgpu compiles it.
//
// Numbers: D digits of 28 bits, little-endian, each in a u32. Products are 64-bit (the
// `wgpu-shader-int64` feature): a column of a Montgomery product receives at most 2·D products
// below 2^56, and 2·74·2^56 + 2^36 < 2^64, so a whole column accumulates in one u64 with no
// carry handling (a 32-bit radix would need a carry test after every product). R = 2^(28·D)
// > 4N, so values below 2N stay below 2N through every product: no final subtraction; the host
// subtracts N once, if needed, after `convert` has taken values out of Montgomery form.
//
// Why straight-line code: every digit index is a constant, so the driver keeps the digits in
// registers (a loop with a run-time index would put them in memory), and an invocation runs
// one loop iteration per step (drivers that cap loop iterations see few).
//
// Layout of `values` (and `bases`): structure of arrays, digit j of item i at j·count + i, so
// the invocations of a workgroup read consecutive words (coalesced on real GPUs).
//
// Timing: `pow_many`'s multiply follows the exponent bits. VDF inputs and verification
// exponents are public.

const DIGITS: u32 = {{DIGITS}}u;
const MASK: u32 = 0xfffffffu;
const WORKGROUP: u32 = 64u;

struct Params {
    // Items in this dispatch; also the stride of the structure-of-arrays layout.
    count: u32,
    // square_many: squarings in this dispatch. pow_many: exponent rounds in this dispatch.
    steps: u32,
    // pow_many: the first round of this dispatch (round r handles bit bits − 2 − r).
    first: u32,
    // −N^(−1) mod 2^28.
    n0inv: u32,
    // N's digits, four to a vector (uniform arrays have a 16-byte stride).
    modulus: array<vec4<u32>, {{MODULUS_VECS}}>,
    // convert: the factor F of values[i] ← values[i]·F·R^(−1): R² mod N takes plain values
    // into Montgomery form, 1 takes them out.
    factor: array<vec4<u32>, {{MODULUS_VECS}}>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
// pow_many only: the bases in Montgomery form, the exponents' words (little-endian, item after
// item) and, per item, (offset of its first word, bit length of its exponent).
@group(0) @binding(2) var<storage, read> bases: array<u32>;
@group(0) @binding(3) var<storage, read> exp_words: array<u32>;
@group(0) @binding(4) var<storage, read> exp_meta: array<vec2<u32>>;

// x ← x²·R^(−1) mod N (below 2N), by product scanning: column k gathers the cross products
// x[i]·x[k−i] once and doubles them, adds the square on the diagonal and the reduction terms
// m[j]·N[k−j], and for k < D chooses m[k] so that the column's low 28 bits vanish.
// Digits are `let` values (x3, m3, n3, t3): one expression per column keeps the module small
// for the shader compiler (naga's time grows faster than the statement count).
fn mont_sqr(x: ptr<function, array<u32, {{DIGITS}}>>) {
    let n0inv = params.n0inv;
    var acc = 0lu;
{{SQR}}
}

// a ← a·b·R^(−1) mod N (below 2N), by product scanning as in `mont_sqr`.
fn mont_mul(a: ptr<function, array<u32, {{DIGITS}}>>, b: ptr<function, array<u32, {{DIGITS}}>>) {
    let n0inv = params.n0inv;
    var acc = 0lu;
{{MUL}}
}

// a ← a·b·R^(−1) mod N (below 2N), the same product scanning as `mont_mul` written as loops:
// for `convert`, which runs once per call, so it is kept small (quick for a driver to compile)
// rather than fast.
fn mont_mul_compact(a: ptr<function, array<u32, {{DIGITS}}>>,
                    b: ptr<function, array<u32, {{DIGITS}}>>) {
    let n0inv = params.n0inv;
    var m: array<u32, {{DIGITS}}>;
    var t: array<u32, {{DIGITS}}>;
    var acc = 0lu;
    for (var k = 0u; k < 2u * DIGITS - 1u; k = k + 1u) {
        let lo = select(0u, k + 1u - DIGITS, k + 1u > DIGITS);
        for (var i = lo; i <= min(k, DIGITS - 1u); i = i + 1u) {
            acc += u64((*a)[i]) * u64((*b)[k - i]);
        }
        for (var j = lo; j < min(k, DIGITS); j = j + 1u) {
            acc += u64(m[j]) * u64(params.modulus[(k - j) / 4u][(k - j) % 4u]);
        }
        if k < DIGITS {
            m[k] = (u32(acc) * n0inv) & MASK;
            acc += u64(m[k]) * u64(params.modulus[0].x);
        } else {
            t[k - DIGITS] = u32(acc) & MASK;
        }
        acc = acc >> 28u;
    }
    t[DIGITS - 1u] = u32(acc);
    *a = t;
}

// The item of this invocation; the grid is 2D when one dimension has too few workgroups.
fn item_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WORKGROUP;
}

fn load_value(i: u32, x: ptr<function, array<u32, {{DIGITS}}>>) {
    let count = params.count;
{{LOAD_VALUE}}
}

fn load_base(i: u32, x: ptr<function, array<u32, {{DIGITS}}>>) {
    let count = params.count;
{{LOAD_BASE}}
}

fn store_value(i: u32, x: ptr<function, array<u32, {{DIGITS}}>>) {
    let count = params.count;
{{STORE_VALUE}}
}

// values[i] ← values[i]·factor·R^(−1) mod N (below 2N): into or out of Montgomery form on
// the GPU, so the host only regroups bits.
@compute @workgroup_size(64)
fn convert(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(num_workgroups) groups: vec3<u32>) {
    let i = item_index(gid, groups);
    if i >= params.count {
        return;
    }
    var x: array<u32, {{DIGITS}}>;
    var f: array<u32, {{DIGITS}}>;
    load_value(i, &x);
    for (var j = 0u; j < DIGITS; j = j + 1u) {
        f[j] = params.factor[j / 4u][j % 4u];
    }
    mont_mul_compact(&x, &f);
    store_value(i, &x);
}

// values[i] ← values[i]^(2^steps), in Montgomery form.
@compute @workgroup_size(64)
fn square_many(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) groups: vec3<u32>) {
    let i = item_index(gid, groups);
    if i >= params.count {
        return;
    }
    var x: array<u32, {{DIGITS}}>;
    load_value(i, &x);
    for (var s = 0u; s < params.steps; s = s + 1u) {
        mont_sqr(&x);
    }
    store_value(i, &x);
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
    var acc: array<u32, {{DIGITS}}>;
    var base: array<u32, {{DIGITS}}>;
    load_value(i, &acc);
    load_base(i, &base);
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
    store_value(i, &acc);
}

// Counts `steps` loop iterations into values[0]. Some drivers end every loop of a shader once
// the invocation has run a fixed number of loop iterations in total (the llvmpipe of Debian
// 12's Mesa 22.3: 65,535), which silently corrupts long chains. The host runs this once; if
// the count comes back short, it cuts dispatches so that each stays below that number.
@compute @workgroup_size(1)
fn probe_loops() {
    var n = params.n0inv & 0u;
    for (var i = 0u; i < params.steps; i = i + 1u) {
        n = n + 1u;
    }
    values[0] = n;
}
