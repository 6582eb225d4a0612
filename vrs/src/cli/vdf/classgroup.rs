//! `vrs vdf prove --group classgroup-<bits>` and the verification of class-group documents:
//! chiavdf's construction (discriminant from the seed, x = the generator, Wesolowski proof) in
//! chiavdf's encoding, so that either side can check the other's output.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use std::time::Instant;
use vrs_engine::classgroup::{self, bqfc, Discriminant, Form, Squarer};
use vrs_verifier::progress;

/// The group names this module answers: `classgroup-<bits>` (`classgroup` alone is 1024 bits).
pub fn group_bits(name: &str) -> Option<anyhow::Result<u32>> {
    classgroup::epoch::group_bits(name).map(|bits| bits.map_err(anyhow::Error::from))
}

/// A class-group proof document: what `vrs vdf prove --group classgroup-<bits> --json` prints
/// and `vrs vdf verify` reads. Every value is in chiavdf's encoding: `discriminant` is
/// `create_discriminant(seed, bits)`'s string, `x`, `y` and `proof` are its compressed forms
/// (hex), so `chiavdf.verify_wesolowski(discriminant, x, y, proof, iterations)` takes them
/// as they are.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClassDoc {
    /// `classgroup-<bits>`. Optional on input (chiavdf has no such name): the discriminant's
    /// size then stands for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The challenge bytes the discriminant is created from (hex). Optional on input: when
    /// present, the discriminant must be the one created from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The discriminant, "-0x…".
    pub discriminant: String,
    /// T, the number of sequential squarings.
    pub iterations: u64,
    pub x: String,
    pub y: String,
    pub proof: String,
}

/// Which squaring evaluates: `fast` (fixed-width limbs) or `reference` (num-bigint NUDUPL).
fn squarer(backend: &str, d: &Discriminant) -> anyhow::Result<Box<dyn Squarer>> {
    Ok(match backend {
        "fast" => Box::new(classgroup::FastFormSquarer::new(d)?),
        "reference" => Box::new(classgroup::ReferenceSquarer::new(d)),
        other => bail!("backend {other:?}: the class group has `fast` (default) and `reference`"),
    })
}

pub fn prove(
    name: &str,
    bits: u32,
    seed_hex: &str,
    t: u64,
    backend: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let seed = hex::decode(seed_hex.trim()).context("--seed is not hex")?;
    if seed.is_empty() {
        bail!("--seed must not be empty");
    }
    if t == 0 {
        bail!("--iterations must be at least 1");
    }
    let t0 = Instant::now();
    let d = Discriminant::from_seed(&seed, bits)?;
    let discriminant = t0.elapsed();
    let sq = squarer(backend, &d)?;
    let x = Form::generator(&d).context("this discriminant has no generator (2, 1, c)")?;

    let bar = progress::bar(t, "squaring");
    let t1 = Instant::now();
    // prove reports t done when the squarings end and the proof begins.
    let mut squared = None;
    let (y, pi) = classgroup::prove(sq.as_ref(), &d, &x, t, &mut |done| {
        bar.set_position(done);
        if done == t {
            squared = Some(Instant::now());
        }
    })?;
    let end = Instant::now();
    bar.finish_and_clear();
    let squared = squared.unwrap_or(end);
    let (eval, proof, total) = (squared - t1, end - squared, end - t1);
    let t2 = Instant::now();
    classgroup::verify(&d, &x, &y, &pi, t).context("self-check of the proof")?;
    let verify = t2.elapsed();

    let doc = ClassDoc {
        group: Some(name.to_owned()),
        seed: Some(hex::encode(&seed)),
        discriminant: d.to_hex(),
        iterations: t,
        x: hex::encode(bqfc::encode(&d, &x)?),
        y: hex::encode(bqfc::encode(&d, &y)?),
        proof: hex::encode(bqfc::encode(&d, &pi)?),
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    if json {
        let mut value = serde_json::to_value(&doc)?;
        value["discriminant_bits"] = d.bits().into();
        value["backend"] = backend.into();
        value["timings"] = serde_json::json!({
            "discriminant_ms": ms(discriminant),
            "eval_ms": ms(eval),
            "proof_ms": ms(proof),
            "total_ms": ms(discriminant + total),
            "verify_ms": ms(verify),
            "ns_per_square": eval.as_nanos() as f64 / t as f64,
            "iterations_per_s": t as f64 / eval.as_secs_f64(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("group         {name} (discriminant of {} bits)", d.bits());
        println!("iterations    {t}");
        println!("discriminant  {}", doc.discriminant);
        println!("x             {}", doc.x);
        println!("y             {}", doc.y);
        println!("proof         {}", doc.proof);
        println!("backend       {backend}");
        println!(
            "evaluation    {:.1} ms ({:.0} iterations/s)",
            ms(eval),
            t as f64 / eval.as_secs_f64()
        );
        println!(
            "proof         {:.1} ms ({:.1}% of evaluation)",
            ms(proof),
            100.0 * proof.as_secs_f64() / eval.as_secs_f64()
        );
        println!("verify        {:.3} ms", ms(verify));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every check of a class-group document; the first failure's reason.
pub fn check(doc: &ClassDoc) -> Result<(), String> {
    let d = Discriminant::from_hex(&doc.discriminant).map_err(|e| e.to_string())?;
    let bits = match doc.group.as_deref().map(|g| (g, group_bits(g))) {
        Some((_, Some(b))) => b.map_err(|e| e.to_string())?,
        Some((g, None)) => return Err(format!("group {g:?} is not a class group")),
        // create_discriminant's sizes are multiples of 8.
        None => d.bits().div_ceil(8) * 8,
    };
    if let Some(seed) = &doc.seed {
        let seed = hex::decode(seed.trim()).map_err(|e| format!("seed is not hex: {e}"))?;
        let created = Discriminant::from_seed(&seed, bits).map_err(|e| e.to_string())?;
        if created != d {
            return Err(format!(
                "the discriminant is not create_discriminant(seed, {bits})"
            ));
        }
    } else if d.bits() > bits {
        return Err(format!(
            "the discriminant has {} bits, more than the group's {bits}",
            d.bits()
        ));
    }
    let field = |what: &str, text: &str| {
        hex::decode(text.trim()).map_err(|e| format!("{what} is not hex: {e}"))
    };
    classgroup::verify_encoded(
        &d,
        &field("x", &doc.x)?,
        &field("y", &doc.y)?,
        &field("proof", &doc.proof)?,
        doc.iterations,
    )
    .map_err(|e| e.to_string())
}
