//! Validation of a bet request body into a typed bet, and settlement.
//!
//! Validation is strict because a bet is irrevocable once the epoch's randomness exists: a
//! misspelt field (`player_sed`) must be an error, not a silently dropped seed, and the amount
//! is read from the exact text of the JSON number (through `RawValue`), so `1.005` is rejected
//! rather than rounded by a float on the way in.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::amount::Amount;
use super::dice::{DiceBet, DICE_BET_TYPES, EXACT_TARGETS};
use super::settlement::Settlement;
use super::sicbo::{SicboBet, FACES, SICBO_BET_TYPES, TOTAL_TARGETS};
use super::Game;

/// The player id used when a request gives none.
pub const DEFAULT_PLAYER_ID: &str = "anonymous";
/// The operator key used when a request gives none.
pub const DEFAULT_OPERATOR_KEY: &str = "vrs-house";
/// The stake used when a request gives no amount: 1.00.
pub const DEFAULT_AMOUNT: Amount = Amount::from_cents(100);
/// Longest `player_id`, in Unicode characters.
pub const MAX_PLAYER_ID_CHARS: usize = 128;
/// Longest `player_seed`, in Unicode characters.
pub const MAX_PLAYER_SEED_CHARS: usize = 256;
/// Longest `operator_key`, in Unicode characters.
pub const MAX_OPERATOR_KEY_CHARS: usize = 128;

/// A bet on one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BetSpec {
    /// A bet on two dice.
    Dice(DiceBet),
    /// A Sic Bo bet on three dice.
    Sicbo(SicboBet),
}

impl BetSpec {
    /// The game the bet is on.
    pub fn game(&self) -> Game {
        match self {
            BetSpec::Dice(_) => Game::Dice,
            BetSpec::Sicbo(_) => Game::Sicbo,
        }
    }

    /// The bet type's name in requests.
    pub fn bet_type(&self) -> &'static str {
        match self {
            BetSpec::Dice(b) => b.bet_type(),
            BetSpec::Sicbo(b) => b.bet_type(),
        }
    }

    /// The bet's target, for bet types that take one.
    pub fn target(&self) -> Option<u8> {
        match self {
            BetSpec::Dice(b) => b.target(),
            BetSpec::Sicbo(b) => b.target(),
        }
    }

    /// The two faces of a Sic Bo `combo` bet, ascending.
    pub fn combo(&self) -> Option<[u8; 2]> {
        match self {
            BetSpec::Dice(_) => None,
            BetSpec::Sicbo(b) => b.combo(),
        }
    }

    /// The bet a stored game names (its game, bet type, target and combo, as [`game`],
    /// [`bet_type`], [`target`] and [`combo`] give them), with the same names and ranges a
    /// request is checked against; `None` when they name no valid bet.
    ///
    /// [`game`]: Self::game
    /// [`bet_type`]: Self::bet_type
    /// [`target`]: Self::target
    /// [`combo`]: Self::combo
    pub fn from_stored(
        game: Game,
        bet_type: &str,
        target: Option<u8>,
        combo: Option<[u8; 2]>,
    ) -> Option<BetSpec> {
        let t = |range: std::ops::RangeInclusive<u8>| target.filter(|t| range.contains(t));
        Some(match (game, bet_type) {
            (Game::Dice, "exact") => BetSpec::Dice(DiceBet::Exact(t(EXACT_TARGETS)?)),
            (Game::Dice, "over7") => BetSpec::Dice(DiceBet::Over7),
            (Game::Dice, "under7") => BetSpec::Dice(DiceBet::Under7),
            (Game::Dice, "odd") => BetSpec::Dice(DiceBet::Odd),
            (Game::Dice, "even") => BetSpec::Dice(DiceBet::Even),
            (Game::Sicbo, "big") => BetSpec::Sicbo(SicboBet::Big),
            (Game::Sicbo, "small") => BetSpec::Sicbo(SicboBet::Small),
            (Game::Sicbo, "odd") => BetSpec::Sicbo(SicboBet::Odd),
            (Game::Sicbo, "even") => BetSpec::Sicbo(SicboBet::Even),
            (Game::Sicbo, "anyTriple") => BetSpec::Sicbo(SicboBet::AnyTriple),
            (Game::Sicbo, "total") => BetSpec::Sicbo(SicboBet::Total(t(TOTAL_TARGETS)?)),
            (Game::Sicbo, "single") => BetSpec::Sicbo(SicboBet::Single(t(FACES)?)),
            (Game::Sicbo, "double") => BetSpec::Sicbo(SicboBet::Double(t(FACES)?)),
            (Game::Sicbo, "triple") => BetSpec::Sicbo(SicboBet::Triple(t(FACES)?)),
            (Game::Sicbo, "combo") => match combo? {
                [a, b] if a != b && FACES.contains(&a) && FACES.contains(&b) => {
                    BetSpec::Sicbo(SicboBet::Combo(a.min(b), a.max(b)))
                }
                _ => return None,
            },
            _ => return None,
        })
    }

    /// How many dice the bet is settled on: 2 for dice, 3 for Sic Bo.
    pub fn dice_count(&self) -> usize {
        match self {
            BetSpec::Dice(_) => 2,
            BetSpec::Sicbo(_) => 3,
        }
    }

    /// Settles the bet on these dice (2 for dice, 3 for Sic Bo): whether it won, and the payout
    /// (total returned, stake included; 0.00 on a loss).
    ///
    /// Dice of the wrong count or outside 1..=6 cannot come from [`roll_dice`](super::roll_dice);
    /// rather than panic, they settle as a loss whose rule says why.
    pub fn settle(&self, amount: Amount, dice: &[u8]) -> Settlement {
        if dice.len() != self.dice_count() || dice.iter().any(|d| !FACES.contains(d)) {
            return Settlement {
                won: false,
                payout: Amount::ZERO,
                rule: format!(
                    "invalid dice {dice:?}: {} needs {} dice in 1..=6",
                    self.game().name(),
                    self.dice_count()
                ),
            };
        }
        match (self, dice) {
            (BetSpec::Dice(b), &[d1, d2]) => b.settle(amount, d1, d2),
            (BetSpec::Sicbo(b), &[d1, d2, d3]) => b.settle(amount, [d1, d2, d3]),
            _ => unreachable!("dice count checked above"),
        }
    }
}

/// The inclusive range of stakes accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Smallest stake accepted.
    pub min_amount: Amount,
    /// Largest stake accepted.
    pub max_amount: Amount,
}

impl Default for Limits {
    /// 0.01 to 10000.00.
    fn default() -> Self {
        Limits {
            min_amount: Amount::from_cents(1),
            max_amount: Amount::from_cents(1_000_000),
        }
    }
}

/// A validated bet request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedBet {
    /// What is bet on.
    pub spec: BetSpec,
    /// The stake.
    pub amount: Amount,
    /// Who bets; [`DEFAULT_PLAYER_ID`] when not given.
    pub player_id: String,
    /// The player's contribution to `rngValue`, if any.
    pub player_seed: Option<String>,
    /// Which operator key the bet is placed under; [`DEFAULT_OPERATOR_KEY`] when not given.
    pub operator_key: String,
    /// `"instant"`: resolve from the pool now (true) or with an epoch (false); `None` leaves it
    /// to the operator's default.
    pub instant: Option<bool>,
}

/// Why a bet request was refused. The message names the offending field and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BetError {
    /// The explanation, for the client.
    pub message: String,
}

impl BetError {
    fn new(message: impl Into<String>) -> Self {
        BetError {
            message: message.into(),
        }
    }
}

/// The bet type names of a game (none for `rng`, which takes no bets).
pub fn valid_bet_types(game: Game) -> &'static [&'static str] {
    match game {
        Game::Dice => DICE_BET_TYPES,
        Game::Sicbo => SICBO_BET_TYPES,
        Game::Rng => &[],
    }
}

/// The fields a request body for `game` may have.
fn valid_fields(game: Game) -> &'static [&'static str] {
    const COMMON: &[&str] = &[
        "bet_type",
        "amount",
        "target",
        "player_id",
        "player_seed",
        "operator_key",
        "instant",
    ];
    const SICBO: &[&str] = &[
        "bet_type",
        "amount",
        "target",
        "combo",
        "player_id",
        "player_seed",
        "operator_key",
        "instant",
    ];
    match game {
        Game::Sicbo => SICBO,
        Game::Dice => COMMON,
        Game::Rng => &["player_seed"],
    }
}

/// A valid example request body for `game`. For `rng`, which takes no bet, the body carries only
/// a player seed.
pub fn example(game: Game) -> serde_json::Value {
    match game {
        Game::Dice => {
            serde_json::json!({"bet_type": "over7", "amount": 1.0, "player_seed": "my-seed"})
        }
        Game::Sicbo => serde_json::json!({"bet_type": "total", "target": 10, "amount": 1.0}),
        Game::Rng => serde_json::json!({"player_seed": "my-seed"}),
    }
}

/// The top-level fields of a body, as raw JSON text, refusing duplicate names (which
/// serde_json's map would otherwise resolve silently, last one wins).
struct Fields(BTreeMap<String, Box<RawValue>>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields = BTreeMap::new();
                while let Some(name) = map.next_key::<String>()? {
                    let value: Box<RawValue> = map.next_value()?;
                    if fields.contains_key(&name) {
                        return Err(A::Error::custom(format!("duplicate field `{name}`")));
                    }
                    fields.insert(name, value);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Fields {
    /// The raw text of a field, `None` when absent or `null`.
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(|raw| raw.get().trim())
            .filter(|text| *text != "null")
    }
}

/// At most 40 characters of `text`, for echoing client input in messages.
fn excerpt(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

/// The JSON type of a raw value, for messages.
fn json_type(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A JSON number whose value is an integer, in any spelling (`7`, `7.0`, `7e0`, `0.7e1`: JSON
/// Schema's `integer`, the type the OpenAPI document gives target and combo): `Ok(Some(v))`,
/// `Ok(None)` for an integer too large for `i64` (out of every range), `Err(())` for a number
/// with a fraction (`7.5`) or anything that is not a number (`"7"`). Read from the text, exactly:
/// no float on the way.
fn integer(text: &str) -> Result<Option<i64>, ()> {
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !digits_only(whole) || !(fraction.is_empty() || digits_only(fraction)) {
        return Err(());
    }
    // Clamped far beyond any digit count a 16 KiB body can hold, so that it cannot overflow.
    const CLAMP: i64 = 1_000_000;
    let exponent = match exponent {
        None => 0,
        Some(e) => {
            let (sign, magnitude) = match e.strip_prefix('-') {
                Some(m) => (-1, m),
                None => (1, e.strip_prefix('+').unwrap_or(e)),
            };
            if !digits_only(magnitude) {
                return Err(());
            }
            sign * magnitude
                .bytes()
                .fold(0i64, |n, b| (n * 10 + i64::from(b - b'0')).min(CLAMP))
        }
    };
    // value = significant × 10^scale, with the significant digits' zeros moved into scale.
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Ok(Some(0));
    }
    let zeros = (significant.len() - trimmed.len()) as i64;
    let scale = exponent - fraction.len() as i64 + zeros;
    if scale < 0 {
        return Err(());
    }
    // i64 holds at most 19 digits.
    if trimmed.len() as i64 + scale > 19 {
        return Ok(None);
    }
    let magnitude = trimmed
        .parse::<i128>()
        .ok()
        .and_then(|m| m.checked_mul(10i128.checked_pow(u32::try_from(scale).ok()?)?));
    Ok(magnitude
        .map(|m| if negative { -m } else { m })
        .and_then(|v| i64::try_from(v).ok()))
}

/// A string field of at most `max` Unicode characters.
fn string_field(fields: &Fields, name: &str, max: usize) -> Result<Option<String>, BetError> {
    let Some(text) = fields.get(name) else {
        return Ok(None);
    };
    let wrong = || {
        BetError::new(format!(
            "{name} must be a string of at most {max} characters"
        ))
    };
    let value: String = serde_json::from_str(text).map_err(|e| {
        // A string whose escapes are not Unicode (a lone surrogate, \ud800) is a string, but
        // not one any store can hold: say so rather than "not a string".
        // (serde_json reports it as a surrogate error or as a hex escape that ends early; the
        // body already parsed as JSON, so no other escape error reaches this point.)
        let message = e.to_string();
        if text.starts_with('"')
            && (message.contains("surrogate") || message.contains("hex escape"))
        {
            BetError::new(format!(
                "{name} must be valid Unicode: it holds an unpaired surrogate escape"
            ))
        } else {
            wrong()
        }
    })?;
    if value.contains('\0') {
        // PostgreSQL text cannot hold NUL; refusing it keeps both stores alike.
        return Err(BetError::new(format!(
            "{name} must not contain U+0000 (NUL)"
        )));
    }
    let chars = value.chars().count();
    if chars > max {
        return Err(BetError::new(format!(
            "{name} must be at most {max} characters, got {chars}"
        )));
    }
    Ok(Some(value))
}

/// The target of a bet type that requires one, within `range`.
fn required_target(
    fields: &Fields,
    bet_type: &str,
    range: std::ops::RangeInclusive<u8>,
) -> Result<u8, BetError> {
    let allowed = format!(
        "target must be an integer between {} and {} for bet_type `{bet_type}`",
        range.start(),
        range.end()
    );
    let Some(text) = fields.get("target") else {
        return Err(BetError::new(format!("missing field `target`: {allowed}")));
    };
    match integer(text) {
        Ok(Some(v)) => u8::try_from(v)
            .ok()
            .filter(|t| range.contains(t))
            .ok_or_else(|| BetError::new(format!("{allowed}, got {}", excerpt(text)))),
        Ok(None) => Err(BetError::new(format!("{allowed}, got {}", excerpt(text)))),
        Err(()) => Err(BetError::new(format!(
            "{allowed}, got {}: {}",
            json_type(text),
            excerpt(text)
        ))),
    }
}

/// A target given to a bet type that takes none: ignored, but it must still be an integer.
fn ignored_target(fields: &Fields, bet_type: &str) -> Result<(), BetError> {
    match fields.get("target") {
        Some(text) if integer(text).is_err() => Err(BetError::new(format!(
            "target must be an integer (bet_type `{bet_type}` takes no target, so it is ignored), got {}: {}",
            json_type(text),
            excerpt(text)
        ))),
        _ => Ok(()),
    }
}

/// The two faces of a `combo` bet, ascending.
fn combo_field(fields: &Fields) -> Result<(u8, u8), BetError> {
    const ALLOWED: &str = "combo must be an array of two distinct integers between 1 and 6";
    let Some(text) = fields.get("combo") else {
        return Err(BetError::new(format!(
            "missing field `combo`: bet_type `combo` requires it; {ALLOWED}, e.g. [2, 5]"
        )));
    };
    let wrong = || BetError::new(format!("{ALLOWED}, got {}", excerpt(text)));
    let items: Vec<Box<RawValue>> = serde_json::from_str(text).map_err(|_| wrong())?;
    let faces: Vec<u8> = items
        .iter()
        .map(|raw| {
            integer(raw.get().trim())
                .ok()
                .flatten()
                .and_then(|v| u8::try_from(v).ok())
                .filter(|f| FACES.contains(f))
                .ok_or_else(wrong)
        })
        .collect::<Result<_, _>>()?;
    match faces[..] {
        [a, b] if a != b => Ok((a.min(b), a.max(b))),
        _ => Err(wrong()),
    }
}

/// The typed bet of `bet_type` with its target or combo.
fn spec(game: Game, bet_type: &str, fields: &Fields) -> Result<BetSpec, BetError> {
    let unknown_type = || {
        BetError::new(format!(
            "bet_type `{}` is not valid for {}; expected one of: {}",
            excerpt(bet_type),
            game.name(),
            valid_bet_types(game).join(", ")
        ))
    };
    if !valid_bet_types(game).contains(&bet_type) {
        return Err(unknown_type());
    }
    if game == Game::Sicbo && bet_type != "combo" && fields.get("combo").is_some() {
        return Err(BetError::new(format!(
            "combo conflicts with bet_type `{bet_type}`: combo is only for bet_type `combo`"
        )));
    }
    let no_target = |bet| ignored_target(fields, bet_type).map(|()| bet);
    match (game, bet_type) {
        (Game::Dice, "exact") => required_target(fields, bet_type, EXACT_TARGETS)
            .map(|t| BetSpec::Dice(DiceBet::Exact(t))),
        (Game::Dice, "over7") => no_target(BetSpec::Dice(DiceBet::Over7)),
        (Game::Dice, "under7") => no_target(BetSpec::Dice(DiceBet::Under7)),
        (Game::Dice, "odd") => no_target(BetSpec::Dice(DiceBet::Odd)),
        (Game::Dice, "even") => no_target(BetSpec::Dice(DiceBet::Even)),
        (Game::Sicbo, "big") => no_target(BetSpec::Sicbo(SicboBet::Big)),
        (Game::Sicbo, "small") => no_target(BetSpec::Sicbo(SicboBet::Small)),
        (Game::Sicbo, "odd") => no_target(BetSpec::Sicbo(SicboBet::Odd)),
        (Game::Sicbo, "even") => no_target(BetSpec::Sicbo(SicboBet::Even)),
        (Game::Sicbo, "anyTriple") => no_target(BetSpec::Sicbo(SicboBet::AnyTriple)),
        (Game::Sicbo, "total") => required_target(fields, bet_type, TOTAL_TARGETS)
            .map(|t| BetSpec::Sicbo(SicboBet::Total(t))),
        (Game::Sicbo, "single") => {
            required_target(fields, bet_type, FACES).map(|t| BetSpec::Sicbo(SicboBet::Single(t)))
        }
        (Game::Sicbo, "double") => {
            required_target(fields, bet_type, FACES).map(|t| BetSpec::Sicbo(SicboBet::Double(t)))
        }
        (Game::Sicbo, "triple") => {
            required_target(fields, bet_type, FACES).map(|t| BetSpec::Sicbo(SicboBet::Triple(t)))
        }
        (Game::Sicbo, "combo") => {
            if fields.get("target").is_some() {
                return Err(BetError::new(
                    "target conflicts with bet_type `combo`: give the two faces as combo, e.g. [2, 5]",
                ));
            }
            combo_field(fields).map(|(a, b)| BetSpec::Sicbo(SicboBet::Combo(a, b)))
        }
        _ => Err(unknown_type()),
    }
}

/// The stake: a JSON number with at most two fraction digits, within `limits`.
fn amount_field(fields: &Fields, limits: &Limits) -> Result<Amount, BetError> {
    let range = format!("between {} and {}", limits.min_amount, limits.max_amount);
    let amount = match fields.get("amount") {
        // The default stake is held to the limits like any other.
        None => DEFAULT_AMOUNT,
        Some(text) if json_type(text) != "a number" => {
            return Err(BetError::new(format!(
                "amount must be a JSON number {range} (e.g. 1.50), got {}: {}",
                json_type(text),
                excerpt(text)
            )));
        }
        Some(text) => Amount::parse_json_number(text).map_err(BetError::new)?,
    };
    if amount < limits.min_amount || amount > limits.max_amount {
        let default = if fields.get("amount").is_none() {
            " (the default when amount is not given)"
        } else {
            ""
        };
        return Err(BetError::new(format!(
            "amount must be {range}, got {amount}{default}"
        )));
    }
    Ok(amount)
}

/// Validates a bet request body (already known to be JSON by content type) for `game`.
///
/// See `docs/GAMES.md` for the rules: fields, defaults, limits, and which fields are ignored
/// or conflict.
pub fn parse_bet(game: Game, body: &[u8], limits: &Limits) -> Result<PlacedBet, BetError> {
    if game == Game::Rng {
        return Err(BetError::new(
            "game `rng` takes no bets; bet on dice or sicbo",
        ));
    }
    let fields: Fields = serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => BetError::new(format!(
            "request body must be a JSON object of bet fields: {e}"
        )),
        _ => BetError::new(format!("request body is not valid JSON: {e}")),
    })?;

    let allowed = valid_fields(game);
    if let Some(unknown) = fields.0.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(BetError::new(format!(
            "unknown field `{}`; expected one of: {}",
            excerpt(unknown),
            allowed.join(", ")
        )));
    }

    let types = valid_bet_types(game).join(", ");
    let Some(bet_type_text) = fields.get("bet_type") else {
        return Err(BetError::new(format!(
            "missing field `bet_type`; expected one of: {types}"
        )));
    };
    let bet_type: String = serde_json::from_str(bet_type_text).map_err(|_| {
        BetError::new(format!(
            "bet_type must be a string, one of: {types}; got {}: {}",
            json_type(bet_type_text),
            excerpt(bet_type_text)
        ))
    })?;
    let spec = spec(game, &bet_type, &fields)?;
    let amount = amount_field(&fields, limits)?;
    let player_id = string_field(&fields, "player_id", MAX_PLAYER_ID_CHARS)?
        .unwrap_or_else(|| DEFAULT_PLAYER_ID.to_string());
    let player_seed = string_field(&fields, "player_seed", MAX_PLAYER_SEED_CHARS)?;
    let operator_key = string_field(&fields, "operator_key", MAX_OPERATOR_KEY_CHARS)?
        .unwrap_or_else(|| DEFAULT_OPERATOR_KEY.to_string());
    let instant = match fields.get("instant").map(|t| t.trim()) {
        None | Some("null") => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(BetError::new(format!(
                "instant must be true or false, got {} {}",
                json_type(other),
                excerpt(other)
            )))
        }
    };
    Ok(PlacedBet {
        spec,
        amount,
        player_id,
        player_seed,
        operator_key,
        instant,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(game: Game, body: &str) -> PlacedBet {
        match parse_bet(game, body.as_bytes(), &Limits::default()) {
            Ok(bet) => bet,
            Err(e) => panic!("{body} should be accepted: {e}"),
        }
    }

    fn err(game: Game, body: &str, needle: &str) {
        match parse_bet(game, body.as_bytes(), &Limits::default()) {
            Ok(bet) => panic!("{body} should be refused, got {bet:?}"),
            Err(e) => assert!(
                e.message.contains(needle),
                "{body}: message {:?} should contain {needle:?}",
                e.message
            ),
        }
    }

    #[test]
    fn defaults() {
        let bet = ok(Game::Dice, r#"{"bet_type":"over7"}"#);
        assert_eq!(
            bet,
            PlacedBet {
                spec: BetSpec::Dice(DiceBet::Over7),
                amount: Amount::from_cents(100),
                player_id: "anonymous".into(),
                player_seed: None,
                operator_key: "vrs-house".into(),
                instant: None,
            }
        );
        assert_eq!(
            ok(Game::Dice, r#"{"bet_type":"odd","instant":true}"#).instant,
            Some(true)
        );
        assert_eq!(
            ok(Game::Sicbo, r#"{"bet_type":"big","instant":false}"#).instant,
            Some(false)
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","instant":"yes"}"#,
            "instant must be true or false",
        );
        // null means absent.
        let nulls = ok(
            Game::Dice,
            r#"{"bet_type":"odd","amount":null,"target":null,"player_id":null,"player_seed":null,"operator_key":null}"#,
        );
        assert_eq!(nulls.spec, BetSpec::Dice(DiceBet::Odd));
        assert_eq!(nulls.amount, DEFAULT_AMOUNT);
        assert_eq!(nulls.player_id, DEFAULT_PLAYER_ID);
        assert_eq!(nulls.player_seed, None);
        assert_eq!(nulls.operator_key, DEFAULT_OPERATOR_KEY);
    }

    #[test]
    fn full_bodies() {
        let bet = ok(
            Game::Dice,
            r#" { "bet_type": "exact", "target": 7, "amount": 2.5E-1,
                 "player_id": "p1", "player_seed": "s", "operator_key": "op" } "#,
        );
        assert_eq!(bet.spec, BetSpec::Dice(DiceBet::Exact(7)));
        assert_eq!(bet.amount, Amount::from_cents(25));
        assert_eq!(bet.player_id, "p1");
        assert_eq!(bet.player_seed.as_deref(), Some("s"));
        assert_eq!(bet.operator_key, "op");

        let bet = ok(Game::Sicbo, r#"{"bet_type":"combo","combo":[5,2]}"#);
        assert_eq!(bet.spec, BetSpec::Sicbo(SicboBet::Combo(2, 5)));
        assert_eq!(bet.spec.combo(), Some([2, 5]));
        assert_eq!(bet.spec.game(), Game::Sicbo);
        assert_eq!(bet.spec.dice_count(), 3);

        for (body, spec) in [
            (r#"{"bet_type":"big"}"#, SicboBet::Big),
            (r#"{"bet_type":"small"}"#, SicboBet::Small),
            (r#"{"bet_type":"odd"}"#, SicboBet::Odd),
            (r#"{"bet_type":"even"}"#, SicboBet::Even),
            (r#"{"bet_type":"anyTriple"}"#, SicboBet::AnyTriple),
            (r#"{"bet_type":"total","target":4}"#, SicboBet::Total(4)),
            (r#"{"bet_type":"total","target":17}"#, SicboBet::Total(17)),
            (r#"{"bet_type":"single","target":1}"#, SicboBet::Single(1)),
            (r#"{"bet_type":"double","target":6}"#, SicboBet::Double(6)),
            (r#"{"bet_type":"triple","target":3}"#, SicboBet::Triple(3)),
        ] {
            assert_eq!(ok(Game::Sicbo, body).spec, BetSpec::Sicbo(spec), "{body}");
        }
        for (body, spec) in [
            (r#"{"bet_type":"exact","target":2}"#, DiceBet::Exact(2)),
            (r#"{"bet_type":"exact","target":12}"#, DiceBet::Exact(12)),
            (r#"{"bet_type":"under7"}"#, DiceBet::Under7),
            (r#"{"bet_type":"even"}"#, DiceBet::Even),
        ] {
            assert_eq!(ok(Game::Dice, body).spec, BetSpec::Dice(spec), "{body}");
        }
    }

    #[test]
    fn body_shape() {
        err(Game::Dice, "", "not valid JSON");
        err(Game::Dice, "{", "not valid JSON");
        err(Game::Dice, r#"{"bet_type":"over7"} x"#, "not valid JSON");
        err(Game::Dice, r#"{"bet_type":"over7",}"#, "not valid JSON");
        err(Game::Dice, "[]", "must be a JSON object");
        err(Game::Dice, "5", "must be a JSON object");
        err(Game::Dice, "null", "must be a JSON object");
        err(Game::Dice, r#""over7""#, "must be a JSON object");
        err(
            Game::Dice,
            r#"{"bet_type":"over7","amount":1,"amount":5000}"#,
            "duplicate field `amount`",
        );
        err(Game::Rng, r#"{"player_seed":"x"}"#, "takes no bets");
    }

    #[test]
    fn unknown_fields() {
        err(
            Game::Dice,
            r#"{"bet_type":"over7","player_sed":"x"}"#,
            "unknown field `player_sed`; expected one of: bet_type, amount, target, player_id, player_seed, operator_key",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"over7","combo":[1,2]}"#,
            "unknown field `combo`",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"over7","combo":null}"#,
            "unknown field `combo`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"big","Amount":1}"#,
            "unknown field `Amount`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"big","extra":1}"#,
            "combo, player_id",
        );
    }

    #[test]
    fn bet_type_rules() {
        err(
            Game::Dice,
            r#"{}"#,
            "missing field `bet_type`; expected one of: exact, over7",
        );
        err(
            Game::Dice,
            r#"{"bet_type":null}"#,
            "missing field `bet_type`",
        );
        err(Game::Dice, r#"{"bet_type":7}"#, "bet_type must be a string");
        err(
            Game::Dice,
            r#"{"bet_type":"Over7"}"#,
            "bet_type `Over7` is not valid for dice",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"big"}"#,
            "expected one of: exact, over7, under7, odd, even",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"over7"}"#,
            "not valid for sicbo",
        );
        err(Game::Sicbo, r#"{"bet_type":"anytriple"}"#, "anyTriple");
        // An unknown bet type is reported as such, not as a conflict with other fields.
        err(
            Game::Sicbo,
            r#"{"bet_type":"pair","combo":[1,2]}"#,
            "bet_type `pair` is not valid for sicbo",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"big","target":"x"}"#,
            "bet_type `big` is not valid for dice",
        );
    }

    #[test]
    fn amount_rules() {
        let amount = |body: &str| ok(Game::Dice, body).amount;
        assert_eq!(amount(r#"{"bet_type":"odd","amount":0.01}"#).cents(), 1);
        assert_eq!(
            amount(r#"{"bet_type":"odd","amount":10000}"#).cents(),
            1_000_000
        );
        assert_eq!(
            amount(r#"{"bet_type":"odd","amount":1e4}"#).cents(),
            1_000_000
        );
        assert_eq!(amount(r#"{"bet_type":"odd","amount":1.500}"#).cents(), 150);
        assert_eq!(amount(r#"{"bet_type":"odd","amount":1e-2}"#).cents(), 1);
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":0}"#,
            "amount must be between 0.01 and 10000.00, got 0.00",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":10000.01}"#,
            "between 0.01 and 10000.00",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":-1}"#,
            "amount must not be negative",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":1.005}"#,
            "amount must have at most 2 fraction digits",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":1e999999999}"#,
            "amount is too large",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":"1.00"}"#,
            "amount must be a JSON number",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","amount":true}"#,
            "a boolean",
        );
        err(Game::Dice, r#"{"bet_type":"odd","amount":[1]}"#, "an array");
        let long = format!(r#"{{"bet_type":"odd","amount":{}}}"#, "9".repeat(400));
        err(Game::Dice, &long, "amount is too large");

        let limits = Limits {
            min_amount: Amount::from_cents(500),
            max_amount: Amount::from_cents(600),
        };
        let parse = |body: &str| parse_bet(Game::Sicbo, body.as_bytes(), &limits);
        assert!(parse(r#"{"bet_type":"big","amount":5}"#).is_ok());
        assert!(parse(r#"{"bet_type":"big","amount":6}"#).is_ok());
        assert!(parse(r#"{"bet_type":"big","amount":6.01}"#)
            .unwrap_err()
            .message
            .contains("between 5.00 and 6.00"));
        // The default stake is still held to the limits.
        assert!(parse(r#"{"bet_type":"big"}"#).is_err());
    }

    #[test]
    fn target_rules() {
        err(
            Game::Dice,
            r#"{"bet_type":"exact"}"#,
            "missing field `target`: target must be an integer between 2 and 12",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":null}"#,
            "missing field `target`",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":1}"#,
            "between 2 and 12 for bet_type `exact`, got 1",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":13}"#,
            "between 2 and 12",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":-7}"#,
            "between 2 and 12",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":99999999999999999999999}"#,
            "between 2 and 12",
        );
        // Any spelling of an integer is one (JSON Schema's `integer`); a fraction is not.
        for seven in ["7.0", "7e0", "0.7e1", "70e-1", "700E-2", "7.000"] {
            assert_eq!(
                ok(
                    Game::Dice,
                    &format!(r#"{{"bet_type":"exact","target":{seven}}}"#)
                )
                .spec,
                BetSpec::Dice(DiceBet::Exact(7)),
                "{seven}"
            );
        }
        for far in ["1e400", "-1e19", "12e999999999999"] {
            err(
                Game::Dice,
                &format!(r#"{{"bet_type":"exact","target":{far}}}"#),
                "between 2 and 12",
            );
        }
        for fraction in ["75e-1", "7.01", "1e-999999999999"] {
            err(
                Game::Dice,
                &format!(r#"{{"bet_type":"exact","target":{fraction}}}"#),
                "got a number",
            );
        }
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":7.5}"#,
            "integer",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"exact","target":"7"}"#,
            "got a string",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"total","target":3}"#,
            "between 4 and 17",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"total","target":18}"#,
            "between 4 and 17",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"total"}"#,
            "missing field `target`",
        );
        for t in ["single", "double", "triple"] {
            err(
                Game::Sicbo,
                &format!(r#"{{"bet_type":"{t}","target":0}}"#),
                "between 1 and 6",
            );
            err(
                Game::Sicbo,
                &format!(r#"{{"bet_type":"{t}","target":7}}"#),
                "between 1 and 6",
            );
            err(
                Game::Sicbo,
                &format!(r#"{{"bet_type":"{t}"}}"#),
                "missing field `target`",
            );
        }
        // A target given to a bet type that takes none is ignored if it is an integer...
        assert_eq!(
            ok(Game::Dice, r#"{"bet_type":"over7","target":3}"#)
                .spec
                .target(),
            None
        );
        assert_eq!(
            ok(Game::Dice, r#"{"bet_type":"odd","target":999}"#).spec,
            BetSpec::Dice(DiceBet::Odd)
        );
        assert_eq!(
            ok(Game::Sicbo, r#"{"bet_type":"big","target":-1}"#).spec,
            BetSpec::Sicbo(SicboBet::Big)
        );
        assert_eq!(
            ok(Game::Sicbo, r#"{"bet_type":"anyTriple","target":5}"#)
                .spec
                .target(),
            None
        );
        // ...and still an error if it is not.
        err(
            Game::Dice,
            r#"{"bet_type":"over7","target":"x"}"#,
            "target must be an integer",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"big","target":1.5}"#,
            "target must be an integer",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"anyTriple","target":[1]}"#,
            "target must be an integer",
        );
    }

    #[test]
    fn combo_rules() {
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo"}"#,
            "missing field `combo`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":null}"#,
            "missing field `combo`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[2,2]}"#,
            "two distinct integers between 1 and 6",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[0,2]}"#,
            "between 1 and 6",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[2,7]}"#,
            "between 1 and 6",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[2]}"#,
            "two distinct",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[1,2,3]}"#,
            "two distinct",
        );
        // A face is any spelling of an integer, as a target is; a fraction is not one.
        assert_eq!(
            ok(Game::Sicbo, r#"{"bet_type":"combo","combo":[1,2.0]}"#).spec,
            BetSpec::Sicbo(SicboBet::Combo(1, 2))
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[1,2.5]}"#,
            "two distinct integers",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":["1","2"]}"#,
            "two distinct integers",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":"1,2"}"#,
            "must be an array",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":{"a":1}}"#,
            "must be an array",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[1,2],"target":3}"#,
            "target conflicts with bet_type `combo`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"combo","combo":[1,2],"target":"x"}"#,
            "target conflicts",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"big","combo":[1,2]}"#,
            "combo conflicts with bet_type `big`",
        );
        err(
            Game::Sicbo,
            r#"{"bet_type":"total","target":10,"combo":[1,2]}"#,
            "combo conflicts",
        );
        assert_eq!(
            ok(
                Game::Sicbo,
                r#"{"bet_type":"combo","combo":[1,6],"target":null}"#
            )
            .spec,
            BetSpec::Sicbo(SicboBet::Combo(1, 6))
        );
        assert_eq!(
            ok(Game::Sicbo, r#"{"bet_type":"big","combo":null}"#).spec,
            BetSpec::Sicbo(SicboBet::Big)
        );
    }

    #[test]
    fn string_fields() {
        let id128 = "é".repeat(128);
        let bet = ok(
            Game::Dice,
            &format!(r#"{{"bet_type":"odd","player_id":"{id128}"}}"#),
        );
        assert_eq!(bet.player_id, id128);
        let id129 = "é".repeat(129);
        err(
            Game::Dice,
            &format!(r#"{{"bet_type":"odd","player_id":"{id129}"}}"#),
            "player_id must be at most 128 characters, got 129",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","player_seed":"a\u0000b"}"#,
            "player_seed must not contain U+0000 (NUL)",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","player_seed":"a\ud800b"}"#,
            "must be valid Unicode: it holds an unpaired surrogate escape",
        );
        let seed256 = "🎲".repeat(256);
        let bet = ok(
            Game::Dice,
            &format!(r#"{{"bet_type":"odd","player_seed":"{seed256}"}}"#),
        );
        assert_eq!(bet.player_seed, Some(seed256));
        let seed257 = "x".repeat(257);
        err(
            Game::Dice,
            &format!(r#"{{"bet_type":"odd","player_seed":"{seed257}"}}"#),
            "player_seed must be at most 256 characters",
        );
        let key129 = "k".repeat(129);
        err(
            Game::Sicbo,
            &format!(r#"{{"bet_type":"big","operator_key":"{key129}"}}"#),
            "operator_key must be at most 128 characters",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","player_id":5}"#,
            "player_id must be a string",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","player_seed":["a"]}"#,
            "player_seed must be a string",
        );
        err(
            Game::Dice,
            r#"{"bet_type":"odd","operator_key":{}}"#,
            "operator_key must be a string",
        );
        // Escapes count as the characters they denote.
        let bet = ok(
            Game::Dice,
            r#"{"bet_type":"odd","player_seed":"a\u00e9\n"}"#,
        );
        assert_eq!(bet.player_seed.as_deref(), Some("aé\n"));
        let bet = ok(Game::Dice, r#"{"bet_type":"odd","player_seed":""}"#);
        assert_eq!(bet.player_seed.as_deref(), Some(""));
    }

    #[test]
    fn examples_are_valid() {
        for game in [Game::Dice, Game::Sicbo] {
            let body = serde_json::to_vec(&example(game)).unwrap();
            let bet = parse_bet(game, &body, &Limits::default()).unwrap();
            assert_eq!(bet.spec.game(), game);
            assert!(valid_bet_types(game).contains(&bet.spec.bet_type()));
        }
        assert_eq!(
            ok(Game::Sicbo, &example(Game::Sicbo).to_string()).spec,
            BetSpec::Sicbo(SicboBet::Total(10))
        );
        assert!(valid_bet_types(Game::Rng).is_empty());
    }

    #[test]
    fn every_bet_reads_back_from_its_stored_fields() {
        let mut specs = vec![];
        for t in 0..=20u8 {
            specs.push(BetSpec::Dice(DiceBet::Exact(t)));
            specs.push(BetSpec::Sicbo(SicboBet::Total(t)));
            specs.push(BetSpec::Sicbo(SicboBet::Single(t)));
            specs.push(BetSpec::Sicbo(SicboBet::Double(t)));
            specs.push(BetSpec::Sicbo(SicboBet::Triple(t)));
            for u in 0..=8u8 {
                specs.push(BetSpec::Sicbo(SicboBet::Combo(t.min(u), t.max(u))));
            }
        }
        let mut valid = 0;
        for spec in specs {
            let mut body = json!({"bet_type": spec.bet_type(), "amount": 1});
            if let Some(t) = spec.target() {
                body["target"] = json!(t);
            }
            if let Some(c) = spec.combo() {
                body["combo"] = json!(c);
            }
            let parsed = parse_bet(spec.game(), body.to_string().as_bytes(), &Limits::default());
            let stored =
                BetSpec::from_stored(spec.game(), spec.bet_type(), spec.target(), spec.combo());
            // A request and a stored game accept exactly the same bets.
            assert_eq!(parsed.as_ref().ok().map(|p| p.spec), stored, "{body}");
            valid += usize::from(stored.is_some());
        }
        assert!(valid > 40);
        for name in ["", "exact ", "Big", "anytriple"] {
            assert_eq!(BetSpec::from_stored(Game::Sicbo, name, Some(4), None), None);
        }
        assert_eq!(BetSpec::from_stored(Game::Rng, "odd", None, None), None);
    }

    #[test]
    fn settle_dispatches() {
        let one = Amount::from_cents(100);
        let dice = BetSpec::Dice(DiceBet::Over7);
        let s = dice.settle(one, &[4, 5]);
        assert!(s.won);
        assert_eq!(s.payout.to_string(), "2.37");
        let sicbo = BetSpec::Sicbo(SicboBet::Total(10));
        let s = sicbo.settle(Amount::from_cents(250), &[3, 3, 4]);
        assert_eq!((s.won, s.payout.to_string()), (true, "17.50".to_string()));
        // Wrong count or faces: a loss that says why, never a panic.
        for (spec, bad) in [
            (dice, &[4u8, 5, 6][..]),
            (dice, &[0, 5][..]),
            (sicbo, &[3, 3][..]),
            (sicbo, &[3, 3, 7][..]),
            (sicbo, &[][..]),
        ] {
            let s = spec.settle(one, bad);
            assert!(!s.won && s.payout == Amount::ZERO, "{bad:?}");
            assert!(s.rule.starts_with("invalid dice"), "{}", s.rule);
        }
    }
}
