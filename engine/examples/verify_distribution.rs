//! Verification time over many RSA-2048 proofs: its cost varies with the hash-to-prime counter
//! (geometric, mean ≈ 88 candidates), so one instance says little. Prints mean and tail.
//!
//! cargo run --release -p vrs-engine --example verify_distribution [INSTANCES]

use std::time::Instant;
use vrs_engine::backend::{fast::Fast, Backend};
use vrs_engine::group::Modulus;
use vrs_engine::vdf;

fn main() -> Result<(), vrs_engine::Error> {
    let instances: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let m = Modulus::rsa2048();
    let fast = Fast::prepare(&m)?;
    let mut ms = Vec::with_capacity(instances);
    for i in 0..instances {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&(i as u64).to_be_bytes());
        let x = m.hash_to_group(&seed);
        let out = vdf::evaluate(
            &fast,
            &m,
            &x,
            1000 + i as u64,
            &Default::default(),
            &mut |_| {},
        )?
        .prove();
        let t0 = Instant::now();
        for _ in 0..5 {
            vdf::verify(&m, &out.x, &out.y, out.t, &out.proof)?;
        }
        ms.push(t0.elapsed().as_secs_f64() * 1e3 / 5.0);
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q) as usize];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "verify, rsa2048, {instances} instances: mean {mean:.3} ms, median {:.3}, p90 {:.3}, p99 {:.3}, max {:.3}",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    Ok(())
}
