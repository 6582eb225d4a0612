//! Criterion: squarings per second of the `simd` and `cpu` batch backends on RSA-2048, both
//! on all cores, at batches of 1 to 4096 values (k squarings each, fewer for the big
//! batches, but enough that the conversions in and out of Montgomery form, which both
//! backends do once per value and call, stay small). `cargo bench -p vrs-benches --bench
//! batch_simd`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use num_bigint::BigUint;
use vrs_engine::batch::cpu::Cpu;
use vrs_engine::batch::simd::Simd;
use vrs_engine::batch::BatchBackend;
use vrs_engine::group::Modulus;

fn square_many(c: &mut Criterion) {
    let m = Modulus::rsa2048();
    let simd = Simd::new();
    let simd_name = format!("simd ({})", simd.kernel_name());
    let backends: [(&str, &dyn BatchBackend); 2] = [("cpu", &Cpu::new()), (&simd_name, &simd)];
    let mut g = c.benchmark_group("square_many, 2048-bit");
    g.sample_size(10);
    for (size, k) in [(1usize, 2000u64), (16, 500), (256, 100), (4096, 40)] {
        let xs: Vec<BigUint> = (0..size as u64)
            .map(|i| {
                let mut seed = [7u8; 32];
                seed[..8].copy_from_slice(&i.to_le_bytes());
                m.hash_to_group(&seed).value().clone()
            })
            .collect();
        g.throughput(Throughput::Elements(size as u64 * k));
        for (name, b) in backends {
            g.bench_function(
                BenchmarkId::new(name, format!("{size} values x {k}")),
                |bench| {
                    bench.iter(|| {
                        let mut v = xs.clone();
                        b.square_many(&m, &mut v, k).expect("square_many");
                        v
                    })
                },
            );
        }
    }
    g.finish();
}

criterion_group!(benches, square_many);
criterion_main!(benches);
