//! Pool-served (instant) games, docs/PROTOCOL.md §14 "Verifying a pool-served game": every
//! check recomputed here from the verification response, the game's pool batch and the batch
//! before it as published (`GET /api/v1/pool/batches/{b}`) and the anchor epoch
//! (`GET /api/v1/epochs/{e}`), never from the server's own checks. The proof repeats the
//! batch's row; each step also requires it to agree with the published row, so a server cannot
//! show one batch to this game and another to everyone auditing the pool.

use super::{new_game, outcome_steps, step, vdf_step, Fetch, Fields, Step};
use serde_json::Value;
use vrs_engine::group::Modulus;
use vrs_engine::merkle::{self, Hash};
use vrs_engine::pool::{self, BatchLink, Entry, GENESIS_ROOT};
use vrs_engine::vdf;

/// A pool batch as `GET /api/v1/pool/batches/{b}` publishes it.
#[derive(Debug)]
struct Batch {
    number: u64,
    root: Hash,
    previous_root: Hash,
    first_index: u64,
    size: u64,
    anchor_epoch: u64,
    seed: Hash,
    committed_at_ms: u64,
    leaf_hashes: Vec<Hash>,
    /// (entry index, game id) of every served entry.
    served: Vec<(u64, String)>,
}

impl Batch {
    fn decode(v: &Value) -> Result<Batch, String> {
        let f = Fields(v);
        let served = v
            .get("served")
            .and_then(Value::as_array)
            .ok_or("served is missing")?
            .iter()
            .map(|s| {
                let index = s["index"].as_u64().ok_or("served: an index is missing")?;
                let id = s["game_id"]
                    .as_str()
                    .ok_or("served: a game_id is missing")?;
                Ok((index, id.to_owned()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Batch {
            number: f.u64("number")?,
            root: f.hash("root")?,
            previous_root: f.hash("previous_root")?,
            first_index: f.u64("first_index")?,
            size: f.u64("size")?,
            anchor_epoch: f.u64("anchor_epoch")?,
            seed: f.hash("seed")?,
            committed_at_ms: f.u64("committed_at_ms")?,
            leaf_hashes: f.hashes("leaf_hashes")?,
            served,
        })
    }
}

/// What the server published besides the verification response. Each is `Err` (a message for
/// the steps that need it) when the server does not have it or it does not decode.
struct Published {
    batch: Result<Batch, String>,
    /// Batch b − 1; `Ok(None)` for the first batch.
    previous: Result<Option<Batch>, String>,
    anchor_epoch: Result<Value, String>,
}

/// GETs `url`; the server not having it (404) or a wrong shape is a failed step, not being
/// able to ask the server is an error (exit 2).
fn fetch<T>(
    from: &dyn Fetch,
    url: &str,
    what: &str,
    decode: impl FnOnce(&Value) -> Result<T, String>,
) -> anyhow::Result<Result<T, String>> {
    Ok(match from.get_opt(url)? {
        None => Err(format!("the server does not publish {what} ({url}: 404)")),
        Some(v) => decode(&v).map_err(|e| format!("{what}: {e}")),
    })
}

fn fetch_published(from: &dyn Fetch, server: &str, p: &Fields) -> anyhow::Result<Published> {
    let batch_url = |n: u64| format!("{server}/api/v1/pool/batches/{n}");
    let (batch, previous) = match p.u64("pool_batch") {
        Err(e) => (Err(e.clone()), Err(e)),
        Ok(b) => {
            let batch = fetch(
                from,
                &batch_url(b),
                &format!("pool batch {b}"),
                Batch::decode,
            )?;
            let previous = match b {
                0 => Err("pool batch 0 does not exist".to_owned()),
                1 => Ok(None),
                _ => fetch(
                    from,
                    &batch_url(b - 1),
                    &format!("pool batch {}", b - 1),
                    |v| Batch::decode(v).map(Some),
                )?,
            };
            (batch, previous)
        }
    };
    let anchor_epoch = match p.u64("anchor_epoch") {
        Err(e) => Err(e),
        Ok(e) => fetch(
            from,
            &format!("{server}/api/v1/epochs/{e}"),
            &format!("anchor epoch {e}"),
            |v| Ok(v.clone()),
        )?,
    };
    Ok(Published {
        batch,
        previous,
        anchor_epoch,
    })
}

/// The §14 steps of a pool-served game, in the order of the protocol's table.
pub(super) fn steps(
    from: &dyn Fetch,
    server: &str,
    game_id: &str,
    body: &Value,
) -> anyhow::Result<Vec<Step>> {
    let proof = super::proof_of(body)?;
    let p = Fields(proof);
    let published = fetch_published(from, server, &p)?;
    let modulus = Modulus::by_name(&p.str("modulus"));
    let game = new_game(proof.get("bet").unwrap_or(&Value::Null));
    // Every step recomputes from the proof's own values; this one seed is shared because
    // `pool_entry_input` must use the seed recomputed here, never the one the server shows.
    let seed = batch_seed(&p);

    let mut steps = vec![
        step("pool_batch_chain", batch_chain(&p, &published)),
        step("pool_anchor", anchor(&p, &published, &modulus)),
        step("pool_batch_seed", batch_seed_check(&p, &published, &seed)),
        step("pool_entry_input", entry_input(&p, &modulus, &seed)),
        vdf_step(&p, &modulus),
        step("pool_inclusion", inclusion(&p, &published)),
        step("pool_committed", committed(&p, &published)),
        step("pool_game_id", game_id_check(&p, &published, game_id)),
    ];
    steps.extend(outcome_steps(&p, body, &game));
    Ok(steps)
}

/// `pool_batch_chain`: batch b follows batch b − 1 (its root, and the next entry index), as
/// both are published, and holds entry i.
fn batch_chain(p: &Fields, published: &Published) -> Result<String, String> {
    let b = p.u64("pool_batch")?;
    let i = p.u64("pool_index")?;
    let batch = published.batch.as_ref()?;
    let claimed_prev = p.hash("previous_batch_root")?;
    let (first, size) = (p.u64("batch_first_index")?, p.u64("batch_size")?);
    if batch.number != b {
        return Err(format!("asked for pool batch {b}, got {}", batch.number));
    }
    if (batch.previous_root, batch.first_index, batch.size) != (claimed_prev, first, size) {
        return Err(format!(
            "the proof's previous root, first index or size differ from pool batch {b}'s \
             published row"
        ));
    }
    let (expected_prev, expected_first) = match published.previous.as_ref()? {
        None => (GENESIS_ROOT, 1),
        Some(prev) => (prev.root, prev.first_index.saturating_add(prev.size)),
    };
    if claimed_prev != expected_prev {
        return Err(format!(
            "pool batch {b} does not link to the published root of batch {} ({})",
            b - 1,
            hex::encode(expected_prev)
        ));
    }
    if first != expected_first {
        return Err(format!(
            "pool batch {b} starts at entry {first}, not {expected_first}"
        ));
    }
    if !(first..first.saturating_add(size)).contains(&i) {
        return Err(format!(
            "entry {i} is outside pool batch {b} (entries {first} to {}, {size} entries)",
            first.saturating_add(size).saturating_sub(1)
        ));
    }
    Ok(format!(
        "pool batch {b} follows root {} and holds entries {first} to {} ({size} entries from {first})",
        hex::encode(claimed_prev),
        first.saturating_add(size).saturating_sub(1)
    ))
}

/// `pool_anchor`: the anchor epoch is resolved, its published y is the proof's y_anchor, and
/// that y verifies (its Wesolowski proof: cheap, and a batch seeded from a y that is not the
/// VDF output would not be bounded in time by that epoch).
fn anchor(
    p: &Fields,
    published: &Published,
    modulus: &Result<Modulus, vrs_engine::Error>,
) -> Result<String, String> {
    let e = p.u64("anchor_epoch")?;
    let batch = published.batch.as_ref()?;
    if batch.anchor_epoch != e {
        return Err(format!(
            "the proof names anchor epoch {e}, pool batch {} names {}",
            batch.number, batch.anchor_epoch
        ));
    }
    let epoch = Fields(published.anchor_epoch.as_ref()?);
    if epoch.0["y"].is_null() {
        return Err(format!("anchor epoch {e} is not resolved"));
    }
    let y = epoch.bytes("y")?;
    if p.bytes("anchor_y")? != y {
        return Err(format!("y_anchor is not the published y of epoch {e}"));
    }
    let m = modulus.as_ref().map_err(|err| err.to_string())?;
    vdf::verify_encoded(
        m,
        &epoch.bytes("x")?,
        &y,
        epoch.u64("iterations")?,
        &epoch.bytes("l")?,
        &epoch.bytes("pi")?,
    )
    .map_err(|err| format!("anchor epoch {e}'s proof does not verify: {err}"))?;
    Ok(format!(
        "anchored to resolved epoch {e}: y_anchor is its published y, whose proof verifies"
    ))
}

/// batch_seed_b recomputed from the proof's b, root_{b−1}, anchor epoch and y_anchor.
fn batch_seed(p: &Fields) -> Result<Hash, String> {
    Ok(pool::batch_seed(&BatchLink {
        batch: p.u64("pool_batch")?,
        prev_root: p.hash("previous_batch_root")?,
        anchor_epoch: p.u64("anchor_epoch")?,
        anchor_y: p.bytes("anchor_y")?,
    }))
}

/// `pool_batch_seed`: the recomputed seed is the one the proof and the published batch show.
fn batch_seed_check(
    p: &Fields,
    published: &Published,
    seed: &Result<Hash, String>,
) -> Result<String, String> {
    let seed = seed.as_ref()?;
    let batch = published.batch.as_ref()?;
    if p.hash("batch_seed")? != *seed || batch.seed != *seed {
        return Err(format!(
            "batch seed = H(b ‖ previous root ‖ anchor epoch ‖ y_anchor) is {}, not the seed \
             shown",
            hex::encode(seed)
        ));
    }
    Ok("batch seed = H(b ‖ previous root ‖ anchor epoch ‖ y_anchor)".into())
}

/// `pool_entry_input`: x_i = hash_to_group(H(batch seed ‖ i ‖ r_i)) with the revealed r_i.
fn entry_input(
    p: &Fields,
    modulus: &Result<Modulus, vrs_engine::Error>,
    seed: &Result<Hash, String>,
) -> Result<String, String> {
    let m = modulus.as_ref().map_err(|e| e.to_string())?;
    let seed = seed.as_ref()?;
    let i = p.u64("pool_index")?;
    let secret = p.hash("secret")?;
    let x = m.encode(&m.hash_to_group(&pool::entry_seed(seed, i, &secret)));
    if x == p.bytes("x")? {
        Ok(format!(
            "x = hash_to_group(H(batch seed ‖ {i} ‖ revealed secret))"
        ))
    } else {
        Err("x does not follow from the batch seed, the index and the revealed secret".into())
    }
}

/// The entry as the proof shows it.
fn entry(p: &Fields) -> Result<Entry, String> {
    Ok(Entry {
        index: p.u64("pool_index")?,
        secret: p.hash("secret")?,
        iterations: p.u64("iterations")?,
        x: p.bytes("x")?,
        y: p.bytes("y")?,
        l: p.bytes("l")?,
        pi: p.bytes("pi")?,
    })
}

/// `pool_inclusion`: leaf_i, recomputed from the entry, folds up the audit path to root_b at
/// position i − first_b of size_b; root_b is the published batch's, and its published leaf
/// hashes give that root with this leaf at that position.
fn inclusion(p: &Fields, published: &Published) -> Result<String, String> {
    let e = entry(p)?;
    let (first, size) = (p.u64("batch_first_index")?, p.u64("batch_size")?);
    let root = p.hash("batch_root")?;
    let position = e.index.checked_sub(first).ok_or_else(|| {
        format!(
            "entry {} is before its batch's first entry {first}",
            e.index
        )
    })?;
    if p.u64("leaf_index")? != position {
        return Err(format!("leaf_index is not i − first_b = {position}"));
    }
    let leaf_hash = merkle::leaf_hash(&pool::entry_leaf(&e));
    if !merkle::verify_inclusion(&leaf_hash, position, size, &p.hashes("audit_path")?, &root) {
        return Err(format!(
            "entry {} (leaf {position} of {size}) and the audit path do not lead to batch root {}",
            e.index,
            hex::encode(root)
        ));
    }
    let batch = published.batch.as_ref()?;
    if batch.root != root {
        return Err(format!(
            "the proof's batch root is not pool batch {}'s published root {}",
            batch.number,
            hex::encode(batch.root)
        ));
    }
    let published_leaf = usize::try_from(position)
        .ok()
        .and_then(|at| batch.leaf_hashes.get(at));
    if merkle::root(&batch.leaf_hashes) != batch.root
        || batch.leaf_hashes.len() as u64 != size
        || published_leaf != Some(&leaf_hash)
    {
        return Err(format!(
            "pool batch {}'s published leaf hashes do not give its root with this entry at {position}",
            batch.number
        ));
    }
    Ok(format!(
        "entry {} is leaf {position} of {size} under batch root {}",
        e.index,
        hex::encode(root)
    ))
}

/// `pool_committed`: the batch (as published) was committed no later than the bet arrived.
fn committed(p: &Fields, published: &Published) -> Result<String, String> {
    let batch = published.batch.as_ref()?;
    if p.u64("batch_committed_at_ms")? != batch.committed_at_ms {
        return Err(format!(
            "the proof's commit time differs from pool batch {}'s published one",
            batch.number
        ));
    }
    let created = p.u64("bet_created_at_ms")?;
    match created.checked_sub(batch.committed_at_ms) {
        Some(ms) => Ok(format!("batch committed {ms} ms before the bet arrived")),
        None => Err(format!(
            "pool batch {} was committed {} ms after the bet arrived",
            batch.number,
            batch.committed_at_ms - created
        )),
    }
}

/// `pool_game_id`: the game's id is H(i ‖ y_i) (the one asked about, the bet's, and the one
/// the published batch says consumed entry i).
fn game_id_check(p: &Fields, published: &Published, game_id: &str) -> Result<String, String> {
    let i = p.u64("pool_index")?;
    let expected = pool::game_id(i, &p.bytes("y")?);
    if expected != game_id {
        return Err(format!("entry {i}'s game id is {expected}, not {game_id}"));
    }
    let bet_id = p.0.pointer("/bet/game_id").and_then(Value::as_str);
    if bet_id != Some(game_id) {
        return Err(format!("the proof's bet is game {bet_id:?}, not {game_id}"));
    }
    let batch = published.batch.as_ref()?;
    let consumer = batch.served.iter().find(|(index, _)| *index == i);
    match consumer {
        Some((_, id)) if id == game_id => Ok(format!(
            "game id = H({i} ‖ y), and pool batch {} says entry {i} was served to it",
            batch.number
        )),
        Some((_, id)) => Err(format!(
            "pool batch {} says entry {i} was served to game {id}",
            batch.number
        )),
        None => Err(format!(
            "pool batch {} does not list entry {i} as served",
            batch.number
        )),
    }
}
