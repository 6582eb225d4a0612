//! The group an epoch chain runs in (`--group`): an RSA modulus (`rsa2048`, test moduli,
//! `hex:`), or a class group (`classgroup-<bits>`) that takes a fresh discriminant from every
//! epoch's seed (docs/PROTOCOL.md §19). Every rule that depends on the family is here: the
//! genesis output, an epoch's input, its VDF check, and the `veo_class` label (how each layer
//! computes in that family, its VDF thread or its batch verifier, is that layer's own).

use anyhow::Context;
use std::collections::VecDeque;
use std::sync::Mutex;
use vrs_engine::classgroup::{self, epoch as cg, Discriminant};
use vrs_engine::epoch::{epoch_input, epoch_seed_bytes, epoch_seed_v2, genesis_output, Timing};
use vrs_engine::group::Modulus;
use vrs_engine::merkle::Hash;
use vrs_engine::vdf;

/// How an epoch's seed is formed (docs/PROTOCOL.md §10): version 1 over y_{e−1}, the bets root
/// and T; version 2 also over p(e), a nonce and the timing commitment.
#[derive(Clone, Copy, Debug)]
pub enum SeedRule<'a> {
    V1 {
        iterations: u64,
    },
    V2 {
        nonce: &'a [u8; 32],
        timing: &'a Timing,
    },
}

/// An epoch chain's group.
#[derive(Clone, Debug)]
pub enum Group {
    Rsa(Modulus),
    /// Class groups of `bits`-bit discriminants, one discriminant per epoch.
    Class {
        bits: u32,
    },
}

impl Group {
    /// The group of an id: `classgroup-<bits>` (`classgroup`: 1024 bits), else a modulus name.
    pub fn by_name(id: &str) -> anyhow::Result<Self> {
        match cg::group_bits(id) {
            Some(bits) => Ok(Self::Class { bits: bits? }),
            None => Ok(Self::Rsa(Modulus::by_name(id).with_context(|| {
                format!("unknown group {id:?}: use rsa2048, classgroup-1024 (classgroup-<bits>), test512, test1024 or hex:<digits>")
            })?)),
        }
    }

    /// The id stored with every epoch (`rsa2048`, `classgroup-1024`, …).
    pub fn id(&self) -> String {
        match self {
            Self::Rsa(m) => m.id().to_owned(),
            Self::Class { bits } => cg::group_id(*bits),
        }
    }

    /// The RSA modulus, if this is an RSA group (the instant-bet pool runs on those only).
    pub fn modulus(&self) -> Option<&Modulus> {
        match self {
            Self::Rsa(m) => Some(m),
            Self::Class { .. } => None,
        }
    }

    /// y_0 as stored: the "previous output" of epoch 1.
    pub fn genesis_output(&self) -> Vec<u8> {
        match self {
            Self::Rsa(m) => m.encode(&genesis_output(m)),
            Self::Class { .. } => cg::generator_bytes(),
        }
    }

    /// seed_e by the epoch's version (`how`): fails when `prev_y` is not an element of the
    /// group as stored.
    pub fn seed_for(
        &self,
        e: u64,
        prev_y: &[u8],
        bets_root: &Hash,
        how: &SeedRule<'_>,
    ) -> anyhow::Result<[u8; 32]> {
        match how {
            SeedRule::V1 { iterations } => self.epoch_seed(e, prev_y, bets_root, *iterations),
            SeedRule::V2 { nonce, timing } => {
                self.check_output(prev_y)?;
                Ok(epoch_seed_v2(e, prev_y, bets_root, nonce, timing))
            }
        }
    }

    /// seed_e and x_e as stored, by the epoch's version.
    pub fn input_for(
        &self,
        e: u64,
        prev_y: &[u8],
        bets_root: &Hash,
        how: &SeedRule<'_>,
    ) -> anyhow::Result<([u8; 32], Vec<u8>)> {
        match how {
            SeedRule::V1 { iterations } => self.epoch_input(e, prev_y, bets_root, *iterations),
            SeedRule::V2 { .. } => {
                let seed = self.seed_for(e, prev_y, bets_root, how)?;
                Ok((seed, self.epoch_x(&seed)))
            }
        }
    }

    /// Refuses bytes that are not an output of this group as stored.
    fn check_output(&self, prev_y: &[u8]) -> anyhow::Result<()> {
        match self {
            // Decoding refuses non-canonical bytes, so the seed is over the one encoding.
            Self::Rsa(m) => {
                m.decode("previous output", prev_y)?;
            }
            Self::Class { .. } => {
                if prev_y.len() != classgroup::FORM_SIZE {
                    anyhow::bail!(
                        "previous output has {} bytes, a class-group output {}",
                        prev_y.len(),
                        classgroup::FORM_SIZE
                    );
                }
            }
        }
        Ok(())
    }

    /// seed_e of a version-1 epoch: fails when `prev_y` is not an element of the group as
    /// stored.
    pub fn epoch_seed(
        &self,
        e: u64,
        prev_y: &[u8],
        bets_root: &Hash,
        t: u64,
    ) -> anyhow::Result<[u8; 32]> {
        self.check_output(prev_y)?;
        Ok(epoch_seed_bytes(e, prev_y, bets_root, t))
    }

    /// x_e as stored, from seed_e.
    pub fn epoch_x(&self, seed: &[u8; 32]) -> Vec<u8> {
        match self {
            Self::Rsa(m) => m.encode(&m.hash_to_group(seed)),
            Self::Class { .. } => cg::generator_bytes(),
        }
    }

    /// D_e of a class-group epoch (None for RSA groups).
    pub fn discriminant(&self, seed: &[u8; 32]) -> Option<anyhow::Result<Discriminant>> {
        match self {
            Self::Rsa(_) => None,
            Self::Class { bits } => Some(class_discriminant(seed, *bits)),
        }
    }

    /// x_e of epoch `e` as stored, with seed_e.
    pub fn epoch_input(
        &self,
        e: u64,
        prev_y: &[u8],
        bets_root: &Hash,
        t: u64,
    ) -> anyhow::Result<([u8; 32], Vec<u8>)> {
        if let Self::Rsa(m) = self {
            // The RSA formula, through the engine's function that defines it.
            let prev = m.decode("previous output", prev_y)?;
            let x = epoch_input(m, e, &prev, bets_root, t);
            return Ok((epoch_seed_bytes(e, prev_y, bets_root, t), m.encode(&x)));
        }
        let seed = self.epoch_seed(e, prev_y, bets_root, t)?;
        Ok((seed, self.epoch_x(&seed)))
    }

    /// Checks an epoch's proof as stored: y = x^(2^T) with π and ℓ. `seed` is seed_e (class
    /// groups take their discriminant from it). Returns what was checked, for a report.
    pub fn verify_proof(
        &self,
        seed: &[u8; 32],
        x: &[u8],
        y: &[u8],
        t: u64,
        l: &[u8],
        pi: &[u8],
    ) -> Result<String, String> {
        match self {
            Self::Rsa(m) => vdf::verify_encoded(m, x, y, t, l, pi)
                .map(|()| format!("π^ℓ · x^(2^T mod ℓ) = y for T = {t}"))
                .map_err(|e| e.to_string()),
            Self::Class { bits } => {
                let d = class_discriminant(seed, *bits).map_err(|e| format!("{e:#}"))?;
                cg::verify(&d, x, y, pi, l, t).map_err(|e| e.to_string())?;
                Ok(format!(
                    "π^B · x^(2^T mod B) = y in the class group of D_e ({bits} bits) for T = {t}, \
                     B = GetB(D_e, x, y) (chiavdf's verify_wesolowski accepts it)"
                ))
            }
        }
    }

    /// `VEO-` + proof system + group.
    pub fn veo_class(&self) -> String {
        veo_class(&self.id())
    }
}

/// Discriminants derived lately: deriving one (a prime search) costs milliseconds, and every
/// game of an epoch verifies against the same D_e.
const DISCRIMINANT_CACHE: usize = 64;

/// D_e for `seed`, from the cache when it was derived lately.
fn class_discriminant(seed: &[u8; 32], bits: u32) -> anyhow::Result<Discriminant> {
    type Cache = VecDeque<([u8; 32], u32, Discriminant)>;
    static CACHE: Mutex<Cache> = Mutex::new(VecDeque::new());
    let cached = |cache: &Cache| {
        cache
            .iter()
            .find(|(s, b, _)| s == seed && *b == bits)
            .map(|(_, _, d)| d.clone())
    };
    if let Some(d) = CACHE.lock().ok().as_deref().and_then(cached) {
        return Ok(d);
    }
    let d = cg::epoch_discriminant(seed, bits).context("the epoch's discriminant from its seed")?;
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= DISCRIMINANT_CACHE {
            cache.pop_front();
        }
        cache.push_back((*seed, bits, d.clone()));
    }
    Ok(d)
}

/// The `veo_class` of epochs over group `id`: `VEO-` + proof system + group
/// (`VEO-WESOLOWSKI-RSA2048`, `VEO-WESOLOWSKI-CLASSGROUP-1024`).
pub fn veo_class(id: &str) -> String {
    let group = match id {
        "rsa2048" => "RSA2048".to_owned(),
        named if !named.starts_with("hex:") => named.to_uppercase(),
        _ => "RSA-CUSTOM".to_owned(),
    };
    format!("VEO-WESOLOWSKI-{group}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_family() {
        assert!(matches!(Group::by_name("rsa2048").unwrap(), Group::Rsa(_)));
        assert!(matches!(
            Group::by_name("classgroup-512").unwrap(),
            Group::Class { bits: 512 }
        ));
        assert_eq!(
            Group::by_name("classgroup").unwrap().id(),
            "classgroup-1024"
        );
        assert!(Group::by_name("classgroup-1001").is_err());
        assert!(Group::by_name("rsa4096").is_err());
        assert_eq!(
            Group::by_name("classgroup-1024").unwrap().veo_class(),
            "VEO-WESOLOWSKI-CLASSGROUP-1024"
        );
        assert_eq!(veo_class("rsa2048"), "VEO-WESOLOWSKI-RSA2048");
    }

    #[test]
    fn rsa_inputs_are_the_engine_formula() {
        let g = Group::by_name("test512").unwrap();
        let m = g.modulus().unwrap().clone();
        let y0 = g.genesis_output();
        let (seed, x) = g.epoch_input(3, &y0, &[5; 32], 77).unwrap();
        let prev = m.decode("y", &y0).unwrap();
        assert_eq!(
            seed,
            vrs_engine::epoch::epoch_seed(&m, 3, &prev, &[5; 32], 77)
        );
        assert_eq!(x, m.encode(&epoch_input(&m, 3, &prev, &[5; 32], 77)));
    }

    #[test]
    fn class_group_inputs_are_the_generator_and_the_seed_picks_d() {
        let g = Group::by_name("classgroup-256").unwrap();
        let y0 = g.genesis_output();
        let (seed, x) = g.epoch_input(1, &y0, &[0; 32], 10).unwrap();
        assert_eq!(x, cg::generator_bytes());
        let (seed2, _) = g.epoch_input(1, &y0, &[1; 32], 10).unwrap();
        let d1 = g.discriminant(&seed).unwrap().unwrap();
        let d2 = g.discriminant(&seed2).unwrap().unwrap();
        assert_ne!(d1.to_hex(), d2.to_hex());
        assert!(g.epoch_input(2, &y0[..50], &[0; 32], 10).is_err());
    }
}
