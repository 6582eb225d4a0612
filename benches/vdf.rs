//! Criterion benchmarks of the engine: one 2048-bit squaring per backend, an evaluation of T
//! squarings, the proof from its checkpoints, and verification. Fixed seeds; sizes in names.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::{Backend, BackendKind};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_engine::with_backend;

/// Squarings per iteration of the squaring benchmark.
const BATCH: u64 = 1000;

fn squaring(c: &mut Criterion) {
    let m = Modulus::rsa2048();
    let x = m.hash_to_group(&[1; 32]);
    let mut g = c.benchmark_group("square, 2048-bit");
    g.throughput(Throughput::Elements(BATCH));
    for kind in BackendKind::all() {
        let prepared = with_backend!(kind, &m, |b| {
            let mut e = b.load(x.value());
            g.bench_function(BenchmarkId::new(kind.name(), BATCH), |bench| {
                bench.iter(|| {
                    b.square_n(&mut e, BATCH);
                    black_box(&e);
                })
            });
        });
        if let Err(e) = prepared {
            eprintln!("skipping {kind}: {e}");
        }
    }
    g.finish();
}

fn evaluate_and_prove(c: &mut Criterion) {
    let m = Modulus::rsa2048();
    let x = m.hash_to_group(&[2; 32]);
    let fast = Fast::prepare(&m).expect("prepare rsa2048");
    let t = 1u64 << 18;
    let mut g = c.benchmark_group("vdf, 2048-bit");
    g.sample_size(10);
    g.bench_function(BenchmarkId::new("evaluate, T", t), |b| {
        b.iter(|| vdf::evaluate(&fast, &m, &x, t, &EvalOptions::default(), &mut |_| {}))
    });
    let trace =
        vdf::evaluate(&fast, &m, &x, t, &EvalOptions::default(), &mut |_| {}).expect("evaluate");
    g.bench_function(BenchmarkId::new("prove from checkpoints, T", t), |b| {
        b.iter(|| trace.prove())
    });
    let out = trace.prove();
    g.bench_function(BenchmarkId::new("verify, T", t), |b| {
        b.iter_batched(
            || out.clone(),
            |o| vdf::verify(&m, &o.x, &o.y, o.t, &o.proof),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, squaring, evaluate_and_prove);
criterion_main!(benches);
