//! The notary's schemas: what a payload hash is a hash of, its exact format, and the limits on
//! metadata (docs/PROTOCOL.md §17). Validation answers which field is wrong and why.

use serde_json::Value;
use std::collections::BTreeMap;

/// Largest metadata, measured in its RFC 8785 canonical form.
pub const METADATA_MAX_BYTES: usize = 4096;
/// Deepest nesting of objects and arrays inside metadata (the metadata object is level 1).
pub const METADATA_MAX_DEPTH: usize = 8;

/// A supported schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    Sha256,
    Keccak256,
    JcsSha256,
    GameResult,
}

/// Every schema, in the order `GET /v1/notarize/schemas` lists them.
pub const ALL: [Schema; 4] = [
    Schema::Sha256,
    Schema::Keccak256,
    Schema::JcsSha256,
    Schema::GameResult,
];

/// A request field that failed validation, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

impl Schema {
    pub fn id(self) -> &'static str {
        match self {
            Self::Sha256 => "sha256",
            Self::Keccak256 => "keccak256",
            Self::JcsSha256 => "jcs-sha256",
            Self::GameResult => "vrs-game-result",
        }
    }

    pub fn parse(id: &str) -> Option<Self> {
        ALL.into_iter().find(|s| s.id() == id)
    }

    fn description(self) -> &'static str {
        match self {
            Self::Sha256 => {
                "SHA-256 digest of any document. Only the digest is sent; the document never \
                 leaves the client."
            }
            Self::Keccak256 => {
                "Keccak-256 digest (the EVM's keccak256, not NIST SHA3-256), as Solidity, \
                 ethers or cast compute it."
            }
            Self::JcsSha256 => {
                "SHA-256 of a JSON document in RFC 8785 (JCS) canonical form, so that any \
                 serialisation of the same JSON value gives the same digest."
            }
            Self::GameResult => {
                "Attests a resolved vrs game: payload_hash is the game's result_hash (GET \
                 /api/v1/games/{gameId}, docs/PROTOCOL.md §17) and metadata.game_id names the \
                 game. The service checks that the game is resolved and that the hash matches \
                 before it issues the receipt."
            }
        }
    }

    /// How the canonical form of payload_hash is spelled (what receipts show).
    fn canonical_format(self) -> &'static str {
        match self {
            Self::Keccak256 => "0x followed by 64 lowercase hex digits",
            _ => "64 lowercase hex digits",
        }
    }

    /// The schema as `GET /v1/notarize/schemas` lists it.
    pub fn describe(self) -> SchemaDescription {
        SchemaDescription {
            id: self.id().to_owned(),
            description: self.description().to_owned(),
            payload_hash: PayloadHashRule {
                kind: "string".into(),
                encoding: "hex".into(),
                length_bytes: 32,
                pattern: "^(0x)?[0-9a-fA-F]{64}$".into(),
                canonical: self.canonical_format().to_owned(),
                example: self.canonical_hash(&[0xab; 32]),
            },
            metadata: MetadataRule {
                kind: "object".into(),
                required: false,
                default: BTreeMap::new(),
                max_bytes: METADATA_MAX_BYTES,
                max_depth: METADATA_MAX_DEPTH,
                measured_as: "RFC 8785 canonical JSON".into(),
                required_members: (self == Self::GameResult).then(|| {
                    BTreeMap::from([(
                        "game_id".to_owned(),
                        "the resolved game's id (32 lowercase hex digits)".to_owned(),
                    )])
                }),
            },
        }
    }

    /// The canonical spelling of a 32-byte digest under this schema.
    pub fn canonical_hash(self, bytes: &[u8; 32]) -> String {
        match self {
            Self::Keccak256 => format!("0x{}", hex::encode(bytes)),
            _ => hex::encode(bytes),
        }
    }
}

/// What a schema's payload hash and metadata must be (`GET /v1/notarize/schemas`).
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct SchemaDescription {
    pub id: String,
    pub description: String,
    pub payload_hash: PayloadHashRule,
    pub metadata: MetadataRule,
}

/// The payload hash's spelling.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct PayloadHashRule {
    /// `string`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `hex`.
    pub encoding: String,
    pub length_bytes: u32,
    pub pattern: String,
    /// How the receipt writes it back.
    pub canonical: String,
    pub example: String,
}

/// The metadata's rules.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct MetadataRule {
    /// `object`.
    #[serde(rename = "type")]
    pub kind: String,
    pub required: bool,
    /// `{}`.
    pub default: BTreeMap<String, String>,
    pub max_bytes: usize,
    pub max_depth: usize,
    pub measured_as: String,
    /// Members the schema requires, with what each must be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_members: Option<BTreeMap<String, String>>,
}

/// Parses a payload hash: 64 hex digits, either case, with or without 0x.
pub fn parse_payload_hash(text: &str) -> Result<[u8; 32], FieldError> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    let mut out = [0u8; 32];
    if digits.len() != 64 || hex::decode_to_slice(digits, &mut out).is_err() {
        return Err(FieldError::new(
            "payload_hash",
            format!(
                "payload_hash must be 64 hex digits (a 32-byte digest, optionally 0x-prefixed); \
                 got {} characters",
                text.chars().count()
            ),
        ));
    }
    Ok(out)
}

/// Checks metadata (absent or null means `{}`) and returns its canonical form.
pub fn canonical_metadata(metadata: Option<&Value>) -> Result<String, FieldError> {
    let value = match metadata {
        None | Some(Value::Null) => return Ok("{}".into()),
        Some(v @ Value::Object(_)) => v,
        Some(other) => {
            return Err(FieldError::new(
                "metadata",
                format!("metadata must be a JSON object, not {}", kind(other)),
            ))
        }
    };
    if depth(value) > METADATA_MAX_DEPTH {
        return Err(FieldError::new(
            "metadata",
            format!("metadata nests deeper than {METADATA_MAX_DEPTH} levels"),
        ));
    }
    let text = super::jcs::canonical(value)
        .ok_or_else(|| FieldError::new("metadata", "metadata holds a number JSON cannot carry"))?;
    if text.len() > METADATA_MAX_BYTES {
        return Err(FieldError::new(
            "metadata",
            format!(
                "metadata is {} bytes in canonical form; the limit is {METADATA_MAX_BYTES}",
                text.len()
            ),
        ));
    }
    Ok(text)
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payload_hashes_accept_case_and_prefix() {
        let h = "Ab".repeat(32);
        assert_eq!(parse_payload_hash(&h).unwrap(), [0xab; 32]);
        assert_eq!(parse_payload_hash(&format!("0x{h}")).unwrap(), [0xab; 32]);
        for bad in ["", "ab", &"g".repeat(64), &"a".repeat(63), &"a".repeat(66)] {
            assert_eq!(parse_payload_hash(bad).unwrap_err().field, "payload_hash");
        }
        assert_eq!(
            Schema::Keccak256.canonical_hash(&[0xab; 32]),
            format!("0x{}", "ab".repeat(32))
        );
        assert_eq!(Schema::Sha256.canonical_hash(&[0xab; 32]), "ab".repeat(32));
    }

    #[test]
    fn metadata_is_an_object_within_limits() {
        assert_eq!(canonical_metadata(None).unwrap(), "{}");
        assert_eq!(
            canonical_metadata(Some(&json!({"b": 1, "a": "x"}))).unwrap(),
            r#"{"a":"x","b":1}"#
        );
        for bad in [json!([1]), json!("x"), json!(3)] {
            assert_eq!(
                canonical_metadata(Some(&bad)).unwrap_err().field,
                "metadata"
            );
        }
        let big = json!({ "x": "a".repeat(METADATA_MAX_BYTES) });
        assert!(canonical_metadata(Some(&big)).is_err());
        let fits = json!({ "x": "a".repeat(METADATA_MAX_BYTES - 8) });
        assert_eq!(
            canonical_metadata(Some(&fits)).unwrap().len(),
            METADATA_MAX_BYTES
        );
        let mut deep = json!(1);
        for _ in 0..METADATA_MAX_DEPTH {
            deep = json!({ "d": deep });
        }
        assert!(canonical_metadata(Some(&deep)).is_ok());
        assert!(canonical_metadata(Some(&json!({ "d": deep }))).is_err());
    }

    #[test]
    fn every_schema_parses_its_own_id() {
        for s in ALL {
            assert_eq!(Schema::parse(s.id()), Some(s));
        }
        assert_eq!(Schema::parse("md5"), None);
    }
}
