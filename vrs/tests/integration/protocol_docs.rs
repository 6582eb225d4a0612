//! docs/PROTOCOL.md section 20 names every member a verifier reads, with its JSON type: real
//! responses for every kind of game (dice, Sic Bo, raw RNG, instant, class group) are walked
//! member by member, and a member or a type that is not in the section's tables fails. So a
//! member cannot ship undocumented, and the documented types are the ones sent.

use crate::durability::RESOLVE;
use crate::server::{fast_with_small_pool, Server};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Section 20's tables: subsection ("20.1") → member path → the JSON types it may have.
type Tables = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Members documented once and shared: (subsection, path) stands for (subsection, path) of the
/// table that documents the object, as the tables' rows say ("member for member").
const ALIASES: &[(&str, &str, &str, &str)] = &[
    ("20.1", "proof.acceptance", "20.4", "acceptance"),
    ("20.1", "proof.anchor", "20.5", "anchor"),
    ("20.2", "result.proof", "20.1", "proof"),
    ("20.2", "replay", "20.1", "replay_steps"),
    ("20.3", "anchor", "20.5", "anchor"),
];

const TYPES: &[&str] = &[
    "string", "integer", "number", "boolean", "object", "array", "null",
];

/// Parses section 20 of PROTOCOL.md: every table row under a `### 20.n` heading.
fn tables() -> Tables {
    let doc = include_str!("../../../docs/PROTOCOL.md");
    let start = doc.find("\n## 20. ").expect("PROTOCOL.md has a section 20");
    let section = &doc[start + 1..];
    let end = section[1..].find("\n## ").map_or(section.len(), |i| i + 1);
    let mut out = Tables::new();
    let mut current: Option<String> = None;
    for line in section[..end].lines() {
        if let Some(h) = line.strip_prefix("### ") {
            current = h.split_whitespace().next().map(str::to_owned);
            continue;
        }
        let (Some(sub), Some(row)) = (&current, line.strip_prefix("| `")) else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        assert!(
            cells.len() >= 3,
            "section {sub}: a row without a type: {line}"
        );
        let members: Vec<&str> = cells[0].split(", ").map(|m| m.trim_matches('`')).collect();
        let types: Vec<&str> = cells[1].split(", ").collect();
        assert!(
            types.len() == 1 || types.len() == members.len(),
            "section {sub}: {} types for {} members: {line}",
            types.len(),
            members.len()
        );
        for (k, member) in members.iter().enumerate() {
            let alternatives: BTreeSet<String> = types[if types.len() == 1 { 0 } else { k }]
                .split(" or ")
                .map(|t| t.trim().to_owned())
                .collect();
            for t in &alternatives {
                assert!(
                    TYPES.contains(&t.as_str()),
                    "section {sub}: `{member}` has the type {t:?}, not a JSON type"
                );
            }
            let table = out.entry(sub.clone()).or_default();
            assert!(
                table.insert((*member).to_owned(), alternatives).is_none(),
                "section {sub}: `{member}` is documented twice"
            );
        }
    }
    out
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The documented types of `path` in subsection `sub`, through the aliases.
fn documented<'a>(tables: &'a Tables, sub: &str, path: &str) -> Option<&'a BTreeSet<String>> {
    for (from_sub, from, to_sub, to) in ALIASES {
        if *from_sub != sub {
            continue;
        }
        if let Some(rest) = path.strip_prefix(from) {
            if rest.is_empty() && tables.get(sub).is_some_and(|t| t.contains_key(path)) {
                break;
            }
            if rest.is_empty() || rest.starts_with('.') || rest.starts_with('[') {
                return documented(tables, to_sub, &format!("{to}{rest}"));
            }
        }
    }
    tables.get(sub)?.get(path)
}

/// Collects every member of `v` not documented in `sub`, or sent with another type.
fn walk(tables: &Tables, sub: &str, path: &str, v: &Value, wrong: &mut Vec<String>) {
    if !path.is_empty() {
        let got = json_type(v);
        match documented(tables, sub, path) {
            None => wrong.push(format!("{sub} `{path}` ({got}) is not documented")),
            Some(types) => {
                let fits = types.contains(got) || (got == "integer" && types.contains("number"));
                if !fits {
                    wrong.push(format!("{sub} `{path}` is {got}, documented as {types:?}"));
                }
            }
        }
    }
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                walk(tables, sub, &join(k), x, wrong);
            }
        }
        Value::Array(items) => {
            for x in items {
                let tag = x["action"].as_str().unwrap_or_default();
                walk(tables, sub, &format!("{path}[{tag}]"), x, wrong);
            }
        }
        _ => {}
    }
}

/// Fails unless every member of `v` is in subsection `sub` of PROTOCOL.md section 20 with the
/// JSON type it has.
pub fn assert_documented(sub: &str, what: &str, v: &Value) {
    let tables = tables();
    assert!(tables.contains_key(sub), "no section {sub} in PROTOCOL.md");
    let mut wrong = Vec::new();
    walk(&tables, sub, "", v, &mut wrong);
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "{what}: docs/PROTOCOL.md section 20 lacks:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn section_20_parses_and_names_every_response() {
    let t = tables();
    for sub in [
        "20.1", "20.2", "20.3", "20.4", "20.5", "20.6", "20.7", "20.8", "20.9",
    ] {
        assert!(t.get(sub).is_some_and(|m| !m.is_empty()), "{sub} is empty");
    }
    for (from_sub, from, to_sub, to) in ALIASES {
        assert!(t[*from_sub].contains_key(*from), "{from_sub} `{from}`");
        assert!(t[*to_sub].contains_key(*to), "{to_sub} `{to}`");
    }
    // The walk catches what it must: an undocumented member, a wrong type.
    let mut wrong = Vec::new();
    walk(
        &t,
        "20.6",
        "",
        &json!({"number": 1, "root": 5, "surprise": true}),
        &mut wrong,
    );
    assert_eq!(wrong.len(), 2, "{wrong:?}");
}

#[test]
fn every_member_a_verifier_reads_is_in_protocol_md() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &fast_with_small_pool());
    let (_, entropy) = server.get("/api/v1/entropy");
    assert_documented("20.7", "entropy (maybe pending)", &entropy);
    // The pool fills once an epoch resolved.
    crate::durability::wait_for("the pool filled", RESOLVE, || {
        server.get("/api/v1/stats").1["pool"]["depth"].as_u64() >= Some(8)
    });
    // What the player's check of section 15 reads of the stats (the rest is informative).
    let (_, stats) = server.get("/api/v1/stats");
    assert_documented(
        "20.9",
        "the stats' pool members",
        &json!({"pool": {"depth": stats["pool"]["depth"], "last_batch": stats["pool"]["last_batch"]}}),
    );
    let bets = [
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "exact", "target": 7, "amount": 2.5, "player_seed": "s", "instant": false}),
        ),
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "odd", "target": 5, "instant": false}),
        ),
        (
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "combo", "combo": [5, 2], "player_id": "p", "instant": false}),
        ),
        (
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "total", "target": 10, "instant": false}),
        ),
        ("/api/v1/rng/generate", json!({"client_seed": "c"})),
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "over7", "player_seed": "i", "instant": true}),
        ),
        (
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "triple", "target": 3, "instant": true}),
        ),
    ];
    let mut ids = Vec::new();
    for (path, body) in &bets {
        let (status, r) = server.post(path, body);
        let instant = body["instant"] == true;
        assert_eq!(
            status,
            if instant { 200 } else { 202 },
            "{path} {body}: {r}"
        );
        assert_documented("20.4", path, &r);
        ids.push(r["game_id"].as_str().expect("game_id").to_owned());
        if !instant {
            let (_, pending) = server.get(&format!("/api/v1/games/{}", ids.last().unwrap()));
            assert_documented("20.2", "a pending game", &pending);
        }
    }
    // The open epoch, before anything resolves.
    let (_, root) = server.get("/");
    assert_documented("20.8", "GET /", &root);
    let open = root["vdf_engine"]["epoch"]["current"]
        .as_u64()
        .expect("open");
    assert_documented(
        "20.3",
        "an open epoch",
        &server.get(&format!("/api/v1/epochs/{open}")).1,
    );
    for id in &ids {
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{id}: {v}");
        assert_documented("20.1", "a verification", &v);
        let g = server.poll_ok(&format!("/api/v1/games/{id}"), RESOLVE);
        assert_documented("20.2", "a game result", &g);
        if let Some(e) = g["result"]["epoch"].as_u64() {
            let (_, epoch) = server.get(&format!("/api/v1/epochs/{e}"));
            assert_documented("20.3", "a resolved epoch", &epoch);
        }
        if let Some(b) = v["proof"]["pool_batch"].as_u64() {
            let (_, batch) = server.get(&format!("/api/v1/pool/batches/{b}"));
            assert_documented("20.6", "a pool batch", &batch);
        }
    }
    assert_documented("20.7", "entropy", &server.get("/api/v1/entropy").1);
}
