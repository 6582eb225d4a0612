//! Criterion benchmarks of class-group squaring (the chiavdf-compatible VDF): `FastSquarer`
//! (fixed-width NUDUPL) against the num-bigint reference, on chiavdf's 1024-bit discriminant
//! of seed 0x0405 from a fixed form. Fixed seeds; sizes in names.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use num_bigint::BigInt;
use std::hint::black_box;
use vrs_engine::classgroup::fast::FastSquarer;
use vrs_engine::classgroup::{Discriminant, Form, ReferenceSquarer, Squarer};

/// Squarings per iteration.
const BATCH: u64 = 1000;

fn squaring(c: &mut Criterion) {
    let d = Discriminant::from_seed(&[4, 5], 1024).expect("discriminant");
    let fast = FastSquarer::new(d.value()).expect("fast squarer");
    // A typical element: the generator squared 1000 times (a, b, c all about 512 bits).
    let (a, b) = fast.square_n(&BigInt::from(2), &BigInt::from(1), 1000);
    let x = Form::from_ab(a.clone(), b.clone(), d.value()).expect("a form of d");
    let reference = ReferenceSquarer::new(&d);

    let mut g = c.benchmark_group("classgroup square, 1024-bit");
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function(BenchmarkId::new("fast", BATCH), |bench| {
        bench.iter(|| black_box(fast.square_n(black_box(&a), black_box(&b), BATCH)))
    });
    g.sample_size(10);
    g.bench_function(BenchmarkId::new("reference num-bigint", BATCH), |bench| {
        bench.iter(|| black_box(reference.square_n(black_box(&x), BATCH)))
    });
    g.finish();
}

criterion_group!(benches, squaring);
criterion_main!(benches);
