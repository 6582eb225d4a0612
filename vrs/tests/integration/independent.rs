//! A second implementation of the game rules, written from docs/GAMES.md and the issue text
//! without the server's code: HMAC-SHA256 from its definition, the dice byte stream, both
//! payout tables and the leaf encoding. The end-to-end tests check the server against it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// HMAC-SHA256 (RFC 2104): H((K' ⊕ opad) ‖ H((K' ⊕ ipad) ‖ m)), K' = K padded (hashed if > 64).
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(msg);
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The first `n` dice of the stream rngValue ‖ HMAC(rngValue, u32be(1)) ‖ …, skipping ≥ 252.
pub fn dice(rng: &[u8; 32], n: usize) -> Vec<u8> {
    let mut stream = rng.to_vec();
    let mut counter = 0u32;
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < n {
        if i == stream.len() {
            counter += 1;
            stream.extend_from_slice(&hmac_sha256(rng, &counter.to_be_bytes()));
        }
        let b = stream[i];
        i += 1;
        if b < 252 {
            out.push(1 + b % 6);
        }
    }
    out
}

/// Cents of a "d.dd" amount.
pub fn cents(amount: &str) -> u64 {
    let (whole, frac) = amount.split_once('.').expect("two fraction digits");
    assert_eq!(frac.len(), 2, "amount {amount}");
    whole.parse::<u64>().unwrap() * 100 + frac.parse::<u64>().unwrap()
}

pub fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// (won, payout) of a dice bet: a win pays floor_to_cent(amount × 0.99 × 36 / ways).
pub fn dice_payout(bet_type: &str, target: Option<u64>, amount: &str, d: &[u8]) -> (bool, String) {
    let total = u64::from(d[0]) + u64::from(d[1]);
    let (won, ways) = match bet_type {
        "exact" => {
            let t = target.expect("exact has a target");
            (total == t, 6 - (t as i64 - 7).unsigned_abs())
        }
        "over7" => (total > 7, 15),
        "under7" => (total < 7, 15),
        "odd" => (total % 2 == 1, 18),
        "even" => (total % 2 == 0, 18),
        other => panic!("dice bet type {other}"),
    };
    let payout = if won {
        cents(amount) * 99 * 36 / (100 * ways)
    } else {
        0
    };
    (won, money(payout))
}

/// (won, payout) of a Sic Bo bet: "X:1" returns amount × (X + 1).
pub fn sicbo_payout(
    bet_type: &str,
    target: Option<u64>,
    combo: Option<(u64, u64)>,
    amount: &str,
    d: &[u8],
) -> (bool, String) {
    let d: Vec<u64> = d.iter().map(|&x| u64::from(x)).collect();
    let total: u64 = d.iter().sum();
    let triple = d[0] == d[1] && d[1] == d[2];
    let count = |v: u64| d.iter().filter(|&&x| x == v).count() as u64;
    let odds: Option<u64> = match bet_type {
        "big" => ((11..=17).contains(&total) && !triple).then_some(1),
        "small" => ((4..=10).contains(&total) && !triple).then_some(1),
        "odd" => (total % 2 == 1 && !triple).then_some(1),
        "even" => (total.is_multiple_of(2) && !triple).then_some(1),
        "total" => {
            let t = target.unwrap();
            let x = match t {
                4 | 17 => 60,
                5 | 16 => 30,
                6 | 15 => 17,
                7 | 14 => 12,
                8 | 13 => 8,
                9..=12 => 6,
                _ => panic!("total target {t}"),
            };
            (total == t).then_some(x)
        }
        "single" => match count(target.unwrap()) {
            0 => None,
            n => Some(n),
        },
        "double" => (count(target.unwrap()) >= 2).then_some(10),
        "triple" => (count(target.unwrap()) == 3).then_some(180),
        "anyTriple" => triple.then_some(30),
        "combo" => {
            let (a, b) = combo.unwrap();
            (count(a) >= 1 && count(b) >= 1).then_some(5)
        }
        other => panic!("sicbo bet type {other}"),
    };
    match odds {
        Some(x) => (true, money(cents(amount) * (x + 1))),
        None => (false, "0.00".into()),
    }
}

/// The leaf bytes from the committed fields of a verify response's `proof.bet`.
pub fn leaf(bet: &Value) -> Vec<u8> {
    let s = |k: &str| match &bet[k] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(","),
        other => panic!("field {k}: {other}"),
    };
    let mut out = vec![10u8];
    out.extend_from_slice(b"vrs/v1/bet");
    for k in [
        "game_id",
        "game",
        "bet_type",
        "target",
        "combo",
        "amount",
        "player_id",
        "player_seed",
        "operator_key",
    ] {
        let v = s(k);
        out.extend_from_slice(&(v.len() as u16).to_be_bytes());
        out.extend_from_slice(v.as_bytes());
    }
    out
}

#[test]
fn hmac_matches_rfc_4231_case_2() {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    assert_eq!(
        hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    // Case 6: a 131-byte key (hashed first).
    assert_eq!(
        hex::encode(hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First"
        )),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    );
}
