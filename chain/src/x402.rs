//! x402 payments for the notary (coinbase/x402, versions 2 and 1, scheme `exact` on EVM):
//! the 402 answer that says what to pay, decoding and checking a presented payment (its
//! EIP-712 `TransferWithAuthorization` signature verified here), and settlement, through a
//! facilitator or on chain with EIP-3009 `transferWithAuthorization`.
//!
//! v2 puts the requirements in the `PAYMENT-REQUIRED` header (base64 JSON) and takes the
//! payment in `PAYMENT-SIGNATURE`, answering with `PAYMENT-RESPONSE`; v1 puts them in the 402
//! body and uses `X-PAYMENT` / `X-PAYMENT-RESPONSE`. One 402 carries both, so clients of
//! either generation can pay.

use crate::rpc::Chain;
use alloy::primitives::{Address, Signature, B256, U256};
use alloy::sol_types::{eip712_domain, Eip712Domain, SolCall, SolStruct};
use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;

/// The EIP-3009 types and calls (generated code, kept apart from the lints).
#[allow(unused_qualifications, missing_debug_implementations)]
mod abi {
    use alloy::sol_types::sol;

    sol! {
        #![sol(alloy_sol_types = alloy::sol_types)]

        /// EIP-3009's authorization, as the asset's EIP-712 domain signs it.
        struct TransferWithAuthorization {
            address from;
            address to;
            uint256 value;
            uint256 validAfter;
            uint256 validBefore;
            bytes32 nonce;
        }

        function transferWithAuthorization(
            address from,
            address to,
            uint256 value,
            uint256 validAfter,
            uint256 validBefore,
            bytes32 nonce,
            uint8 v,
            bytes32 r,
            bytes32 s
        );

        function authorizationState(address authorizer, bytes32 nonce) returns (bool);
    }
}
use abi::{transferWithAuthorizationCall, TransferWithAuthorization};

pub const HEADER_REQUIRED: &str = "payment-required";
pub const HEADER_SIGNATURE: &str = "payment-signature";
pub const HEADER_RESPONSE: &str = "payment-response";
pub const HEADER_V1_PAYMENT: &str = "x-payment";
pub const HEADER_V1_RESPONSE: &str = "x-payment-response";

/// A payment must stay valid at least this long after it arrives (time to settle).
const MIN_VALIDITY_LEFT_S: u64 = 6;
/// Longest wait for an on-chain settlement to be mined.
const SETTLE_WAIT: Duration = Duration::from_secs(60);
/// Longest wait for a facilitator's answer.
const FACILITATOR_TIMEOUT: Duration = Duration::from_secs(30);

/// What a payment must be (all fixed at start-up).
#[derive(Clone, Debug)]
pub struct X402Config {
    /// Price in the asset's smallest units.
    pub amount: U256,
    pub decimals: u32,
    pub asset: Address,
    /// The asset's EIP-712 domain name and version.
    pub asset_name: String,
    pub asset_version: String,
    pub pay_to: Address,
    pub chain_id: u64,
    /// v2's network id (CAIP-2) and v1's name for the same network.
    pub network: String,
    pub network_v1: String,
    pub max_timeout_s: u64,
    pub facilitator_url: Option<String>,
}

impl X402Config {
    /// The price in whole units, e.g. "0.02".
    pub fn display_price(&self) -> String {
        let s = self.amount.to_string();
        let d = self.decimals as usize;
        if d == 0 {
            return s;
        }
        let padded = format!("{s:0>width$}", width = d + 1);
        let (int, frac) = padded.split_at(padded.len() - d);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            int.to_owned()
        } else {
            format!("{int}.{frac}")
        }
    }

    fn domain(&self) -> Eip712Domain {
        eip712_domain! {
            name: self.asset_name.clone(),
            version: self.asset_version.clone(),
            chain_id: self.chain_id,
            verifying_contract: self.asset,
        }
    }

    fn extra(&self) -> AssetExtra {
        AssetExtra {
            name: self.asset_name.clone(),
            version: self.asset_version.clone(),
        }
    }

    /// v2's PaymentRequirements for this service.
    pub fn requirements_v2(&self) -> RequirementsV2 {
        RequirementsV2 {
            scheme: "exact".into(),
            network: self.network.clone(),
            amount: self.amount.to_string(),
            asset: self.asset.to_checksum(None),
            pay_to: self.pay_to.to_checksum(None),
            max_timeout_seconds: self.max_timeout_s,
            extra: self.extra(),
        }
    }

    /// v1's PaymentRequirements for this service.
    pub fn requirements_v1(&self, resource: &str) -> RequirementsV1 {
        RequirementsV1 {
            scheme: "exact".into(),
            network: self.network_v1.clone(),
            max_amount_required: self.amount.to_string(),
            resource: resource.to_owned(),
            description: DESCRIPTION.into(),
            mime_type: "application/json".into(),
            pay_to: self.pay_to.to_checksum(None),
            max_timeout_seconds: self.max_timeout_s,
            asset: self.asset.to_checksum(None),
            output_schema: None,
            extra: self.extra(),
        }
    }
}

/// The EIP-712 domain of the asset (`extra` of the requirements).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AssetExtra {
    pub name: String,
    pub version: String,
}

/// x402 version 2's PaymentRequirements (the `exact` scheme).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementsV2 {
    pub scheme: String,
    /// CAIP-2, e.g. `eip155:8453`.
    pub network: String,
    pub amount: String,
    pub asset: String,
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    pub extra: AssetExtra,
}

/// x402 version 1's PaymentRequirements (the `exact` scheme).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequirementsV1 {
    pub scheme: String,
    /// Version 1's network name, e.g. `base`.
    pub network: String,
    pub max_amount_required: String,
    pub resource: String,
    pub description: String,
    pub mime_type: String,
    pub pay_to: String,
    pub max_timeout_seconds: u64,
    pub asset: String,
    /// Always null.
    pub output_schema: Option<String>,
    pub extra: AssetExtra,
}

const DESCRIPTION: &str =
    "Notarize one payload hash (a receipt with a Merkle proof, anchored on chain)";

/// The x402 version-1 part of a 402 body.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PaymentRequiredV1 {
    #[serde(rename = "x402Version")]
    pub x402_version: u32,
    pub error: String,
    /// The payment requirements, as x402 version 1 writes them.
    pub accepts: Vec<RequirementsV1>,
}

/// The 402 answer: the v2 `PAYMENT-REQUIRED` header value and the v1 JSON body.
pub fn payment_required(
    config: &X402Config,
    resource: &str,
    error: &str,
) -> (String, PaymentRequiredV1) {
    let v2 = json!({
        "x402Version": 2,
        "error": error,
        "resource": {
            "url": resource,
            "description": DESCRIPTION,
            "mimeType": "application/json",
        },
        "accepts": [config.requirements_v2()],
    });
    let header = base64::engine::general_purpose::STANDARD.encode(v2.to_string());
    let body = PaymentRequiredV1 {
        x402_version: 1,
        error: error.to_owned(),
        accepts: vec![config.requirements_v1(resource)],
    };
    (header, body)
}

/// An EIP-3009 authorization as presented.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorization {
    pub from: Address,
    pub to: Address,
    pub value: U256,
    pub valid_after: U256,
    pub valid_before: U256,
    pub nonce: B256,
}

/// A decoded payment whose signature is the payer's.
#[derive(Clone, Debug)]
pub struct Presented {
    /// 2 (`PAYMENT-SIGNATURE`) or 1 (`X-PAYMENT`).
    pub version: u8,
    /// The decoded payload as sent (forwarded to a facilitator as is).
    pub payload: Value,
    pub authorization: Authorization,
    pub signature: Signature,
}

impl Presented {
    pub fn payer(&self) -> Address {
        self.authorization.from
    }
}

/// Why a payment was refused (the 402 answer's `error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

impl Refusal {
    fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// Why a settlement did not end in a confirmed transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettleError {
    /// Not settled, and it will not be by this attempt (refused, reverted, never sent).
    Refused(Refusal),
    /// Sent, but not confirmed: the transfer may still happen (a transaction not mined in
    /// time, a broadcast or a facilitator's /settle whose answer was lost, the facilitator's
    /// `settlement_pending`). The payment stays settling for the recovery to decide.
    Unconfirmed(String),
}

impl SettleError {
    pub fn reason(&self) -> &str {
        match self {
            Self::Refused(r) => &r.0,
            Self::Unconfirmed(why) => why,
        }
    }
}

impl From<Refusal> for SettleError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}

fn decode_base64_json(header: &str, value: &str) -> Result<Value, Refusal> {
    let value = value.trim();
    let engines = [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let bytes = engines
        .iter()
        .find_map(|e| e.decode(value).ok())
        .ok_or_else(|| Refusal::new(format!("{header} is not base64")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Refusal::new(format!("{header} is not base64 of a JSON object: {e}")))
}

fn str_field<'a>(v: &'a Value, path: &str, name: &str) -> Result<&'a str, Refusal> {
    v.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::new(format!("{path}.{name} is missing or not a string")))
}

fn address_field(v: &Value, path: &str, name: &str) -> Result<Address, Refusal> {
    str_field(v, path, name)?
        .parse()
        .map_err(|_| Refusal::new(format!("{path}.{name} is not an address")))
}

/// A uint256 sent as a decimal string, a 0x-prefixed hex string (the exact scheme allows
/// both), or leniently a JSON number.
fn uint_field(v: &Value, path: &str, name: &str) -> Result<U256, Refusal> {
    let bad = || Refusal::new(format!("{path}.{name} is not an unsigned integer"));
    match v.get(name) {
        Some(Value::String(s)) if s.starts_with("0x") && s.len() > 2 => {
            U256::from_str_radix(&s[2..], 16).map_err(|_| bad())
        }
        Some(Value::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            U256::from_str_radix(s, 10).map_err(|_| bad())
        }
        Some(Value::Number(n)) => n.as_u64().map(U256::from).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Decodes the payment header of either version, and checks its signature. `Ok(None)`: the
/// request carries no payment.
pub fn decode(
    config: &X402Config,
    v2_header: Option<&str>,
    v1_header: Option<&str>,
) -> Result<Option<Presented>, Refusal> {
    let (version, header, value) = match (v2_header, v1_header) {
        (Some(v), _) => (2u8, "PAYMENT-SIGNATURE", v),
        (None, Some(v)) => (1u8, "X-PAYMENT", v),
        (None, None) => return Ok(None),
    };
    let payload = decode_base64_json(header, value)?;
    from_payload(config, version, payload).map(Some)
}

/// A payment payload of `version` as decoded from its header, with its signature checked.
pub fn from_payload(
    config: &X402Config,
    version: u8,
    payload: Value,
) -> Result<Presented, Refusal> {
    let header = match version {
        2 => "PAYMENT-SIGNATURE",
        _ => "X-PAYMENT",
    };
    let declared = payload.get("x402Version").and_then(Value::as_u64);
    if declared != Some(u64::from(version)) {
        return Err(Refusal::new(format!(
            "{header} must carry x402Version {version}, not {}",
            payload.get("x402Version").unwrap_or(&Value::Null)
        )));
    }
    let authorization = parse_authorization(header, &payload)?;
    let exact = &payload["payload"];
    let sig_text = str_field(exact, "payload", "signature")?;
    let sig_bytes = hex::decode(sig_text.strip_prefix("0x").unwrap_or(sig_text))
        .map_err(|_| Refusal::new("payload.signature is not hex"))?;
    let signature = Signature::try_from(sig_bytes.as_slice()).map_err(|_| {
        Refusal::new(format!(
            "payload.signature must be a 65-byte ECDSA signature (got {} bytes); smart-wallet \
             signatures are not accepted",
            sig_bytes.len()
        ))
    })?;
    let presented = Presented {
        version,
        payload,
        authorization,
        signature,
    };
    let signer = recover(config, &presented)?;
    if signer != presented.authorization.from {
        return Err(Refusal::new(format!(
            "the signature is not from {} (it recovers to {signer}) under {}'s EIP-712 domain \
             ({:?}, version {:?}, chain {})",
            presented.authorization.from,
            config.asset,
            config.asset_name,
            config.asset_version,
            config.chain_id
        )));
    }
    Ok(presented)
}

/// The EIP-3009 authorization of a payment payload (`payload.authorization`), its signature
/// not checked yet. `header` names the header it came in, for the refusal.
pub fn parse_authorization(header: &str, payload: &Value) -> Result<Authorization, Refusal> {
    let exact = payload
        .get("payload")
        .ok_or_else(|| Refusal::new(format!("{header}: payload is missing")))?;
    let auth = exact
        .get("authorization")
        .ok_or_else(|| Refusal::new(format!("{header}: payload.authorization is missing")))?;
    let p = "payload.authorization";
    let nonce_text = str_field(auth, p, "nonce")?;
    Ok(Authorization {
        from: address_field(auth, p, "from")?,
        to: address_field(auth, p, "to")?,
        value: uint_field(auth, p, "value")?,
        valid_after: uint_field(auth, p, "validAfter")?,
        valid_before: uint_field(auth, p, "validBefore")?,
        nonce: nonce_text
            .parse()
            .map_err(|_| Refusal::new(format!("{p}.nonce is not 32 bytes of hex")))?,
    })
}

/// The EIP-712 hash the payer signs: `a` under the asset's domain.
pub fn signing_hash(config: &X402Config, a: &Authorization) -> B256 {
    let message = TransferWithAuthorization {
        from: a.from,
        to: a.to,
        value: a.value,
        validAfter: a.valid_after,
        validBefore: a.valid_before,
        nonce: a.nonce,
    };
    message.eip712_signing_hash(&config.domain())
}

/// The address that signed the authorization under the asset's EIP-712 domain.
fn recover(config: &X402Config, p: &Presented) -> Result<Address, Refusal> {
    p.signature
        .recover_address_from_prehash(&signing_hash(config, &p.authorization))
        .map_err(|_| Refusal::new("the signature does not recover to any address"))
}

/// Checks a payment against this service's requirements at `now_s` (Unix seconds).
pub fn check_requirements(config: &X402Config, p: &Presented, now_s: u64) -> Result<(), Refusal> {
    let scheme_network = |v: &Value, network: &str| -> Result<(), Refusal> {
        let scheme = v.get("scheme").and_then(Value::as_str);
        if scheme != Some("exact") {
            return Err(Refusal::new(format!(
                "scheme {} is not accepted; this service takes \"exact\"",
                v.get("scheme").unwrap_or(&Value::Null)
            )));
        }
        let got = v.get("network").and_then(Value::as_str);
        if got != Some(network) {
            return Err(Refusal::new(format!(
                "network {} is not accepted; pay on {network:?}",
                v.get("network").unwrap_or(&Value::Null)
            )));
        }
        Ok(())
    };
    if p.version == 2 {
        let accepted = p
            .payload
            .get("accepted")
            .ok_or_else(|| Refusal::new("PAYMENT-SIGNATURE: accepted is missing"))?;
        scheme_network(accepted, &config.network)?;
        let asset = address_field(accepted, "accepted", "asset")?;
        if asset != config.asset {
            return Err(Refusal::new(format!(
                "accepted.asset {asset} is not the asset this service takes ({})",
                config.asset
            )));
        }
        let pay_to = address_field(accepted, "accepted", "payTo")?;
        if pay_to != config.pay_to {
            return Err(Refusal::new(format!(
                "accepted.payTo {pay_to} is not this service's address ({})",
                config.pay_to
            )));
        }
        let amount = uint_field(accepted, "accepted", "amount")?;
        if amount != config.amount {
            return Err(Refusal::new(format!(
                "accepted.amount {amount} is not the price ({})",
                config.amount
            )));
        }
    } else {
        scheme_network(&p.payload, &config.network_v1)?;
    }
    let a = &p.authorization;
    if a.to != config.pay_to {
        return Err(Refusal::new(format!(
            "the authorization pays {}, not this service's address {}",
            a.to, config.pay_to
        )));
    }
    if a.value != config.amount {
        return Err(Refusal::new(format!(
            "the authorization's value {} is not the price {}",
            a.value, config.amount
        )));
    }
    let now = U256::from(now_s);
    if a.valid_after > now {
        return Err(Refusal::new(format!(
            "the authorization is not valid before {} (now {now_s})",
            a.valid_after
        )));
    }
    // The v2 client signs validBefore = now + maxTimeoutSeconds (v1: the same from its own
    // clock); a minute of clock skew is allowed, an authorization valid for longer is not.
    if a.valid_before > now + U256::from(config.max_timeout_s + 60) {
        return Err(Refusal::new(format!(
            "the authorization is valid until {}, longer than maxTimeoutSeconds ({}) from now",
            a.valid_before, config.max_timeout_s
        )));
    }
    if a.valid_before < now + U256::from(MIN_VALIDITY_LEFT_S) {
        return Err(Refusal::new(format!(
            "the authorization expired or expires too soon to settle (validBefore {}, now {now_s})",
            a.valid_before
        )));
    }
    Ok(())
}

/// A settled payment.
#[derive(Clone, Debug)]
pub struct Settled {
    pub transaction: String,
    pub payer: Address,
}

/// The settlement response header for `p`'s version, and its value.
/// The settlement response header of a payment of `version` by `payer`.
pub fn settle_response(
    config: &X402Config,
    version: u8,
    payer: Address,
    s: &Settled,
) -> (&'static str, String) {
    settle_header(config, version, payer, true, &s.transaction, None)
}

/// The response header of a failed settlement (`success: false`), for `p`'s version.
pub fn payment_failure(config: &X402Config, p: &Presented, reason: &str) -> (&'static str, String) {
    settle_header(config, p.version, p.payer(), false, "", Some(reason))
}

/// A SettleResponse (base64 JSON) under `p`'s version's header name. `transaction` and
/// `network` are always present: the official client ignores the header without them.
fn settle_header(
    config: &X402Config,
    version: u8,
    payer: Address,
    success: bool,
    transaction: &str,
    reason: Option<&str>,
) -> (&'static str, String) {
    let (name, network) = match version {
        2 => (HEADER_RESPONSE, &config.network),
        _ => (HEADER_V1_RESPONSE, &config.network_v1),
    };
    let mut body = json!({
        "success": success,
        "transaction": transaction,
        "network": network,
        "payer": payer.to_checksum(None),
    });
    if let Some(r) = reason {
        body["errorReason"] = json!(r);
    }
    (
        name,
        base64::engine::general_purpose::STANDARD.encode(body.to_string()),
    )
}

/// A facilitator's reason code for refusing (`reason`: `invalidReason` or `errorReason`), or its
/// HTTP status when it gives none (an error answer such as `{"error": …}`). Its free text
/// (`message`: `invalidMessage` or `errorMessage`, or `error`) is logged here and not passed
/// on to the payer, as the official resource server does: the official facilitator puts the
/// node's raw error there (a revert with its stack, or the RPC's connection error, which it
/// reports under the reason `invalid_exact_evm_failed_to_verify_signature`).
fn facilitator_reason(
    p: &Presented,
    path: &str,
    status: reqwest::StatusCode,
    answer: &Value,
    reason: &str,
    message: &str,
) -> String {
    let code = answer.get(reason).and_then(Value::as_str);
    let text = [message, "error"]
        .iter()
        .find_map(|m| answer.get(*m).filter(|v| !v.is_null()));
    if let Some(text) = text {
        tracing::warn!(payer = %p.payer(), %status, reason = code.unwrap_or_default(),
            detail = %text, "x402: the facilitator's /{path} refused a payment");
    }
    match code {
        Some(code) => code.to_owned(),
        None => format!("no reason given (HTTP {status})"),
    }
}

/// How payments are settled.
#[derive(Clone, Debug)]
pub enum Settler {
    /// `POST {url}/verify` then `POST {url}/settle`.
    Facilitator {
        url: String,
        client: reqwest::Client,
    },
    /// `transferWithAuthorization` sent from the anchor account.
    Chain { chain: Chain, max_fee: Option<u128> },
}

/// x402 as configured: requirements and settlement.
#[derive(Debug)]
pub struct X402 {
    pub config: X402Config,
    pub settler: Settler,
    /// A node of the payment's chain, to ask the asset whether an authorization was used
    /// (crash recovery); with a facilitator, the anchor RPC when it is on the same chain.
    pub rpc: Option<Chain>,
}

impl X402 {
    /// `chain`: the anchor RPC and key, on chain `chain_id`.
    pub fn new(
        config: X402Config,
        chain: Option<Chain>,
        chain_id: u64,
        max_fee: Option<u128>,
    ) -> anyhow::Result<Self> {
        let rpc = chain.clone().filter(|_| chain_id == config.chain_id);
        let settler = match (&config.facilitator_url, chain) {
            (Some(url), _) => Settler::Facilitator {
                url: url.trim_end_matches('/').to_owned(),
                client: reqwest::Client::builder()
                    .timeout(FACILITATOR_TIMEOUT)
                    // Below the servers' keep-alive (5 s in uvicorn and Node), so that a
                    // connection the server is closing is never reused.
                    .pool_idle_timeout(Duration::from_secs(3))
                    .build()
                    .map_err(|e| anyhow::anyhow!("building the facilitator client: {e}"))?,
            },
            (None, Some(chain)) => Settler::Chain { chain, max_fee },
            (None, None) => anyhow::bail!(
                "x402 payments need a way to settle: --x402-facilitator-url, or an anchor RPC \
                 and key (--anchor-rpc-url with VRS_ANCHOR_PRIVATE_KEY) to call \
                 transferWithAuthorization"
            ),
        };
        Ok(Self {
            config,
            settler,
            rpc,
        })
    }

    pub fn settles_via(&self) -> &'static str {
        match self.settler {
            Settler::Facilitator { .. } => "facilitator",
            Settler::Chain { .. } => "chain",
        }
    }

    /// Settles a checked payment. Any failure is a refusal: nothing was charged that the
    /// caller can see as a receipt, and the nonce stays used.
    pub async fn settle(&self, p: &Presented, resource: &str) -> Result<Settled, SettleError> {
        match &self.settler {
            Settler::Facilitator { url, client } => {
                self.settle_facilitator(url, client, p, resource).await
            }
            Settler::Chain { chain, max_fee } => self.settle_on_chain(chain, *max_fee, p).await,
        }
    }

    async fn settle_facilitator(
        &self,
        url: &str,
        client: &reqwest::Client,
        p: &Presented,
        resource: &str,
    ) -> Result<Settled, SettleError> {
        let requirements = match p.version {
            2 => json!(self.config.requirements_v2()),
            _ => json!(self.config.requirements_v1(resource)),
        };
        let body = json!({
            "x402Version": p.version,
            "paymentPayload": p.payload,
            "paymentRequirements": requirements,
        });
        let post = |path: &'static str| {
            let body = body.clone();
            async move {
                let res = client
                    .post(format!("{url}/{path}"))
                    .json(&body)
                    .send()
                    .await
                    .map_err(|e| Refusal::new(format!("the facilitator's /{path} failed: {e}")))?;
                let status = res.status();
                let v: Value = res.json().await.map_err(|e| {
                    Refusal::new(format!("the facilitator's /{path} answered {status}: {e}"))
                })?;
                Ok::<_, Refusal>((status, v))
            }
        };
        let (status, verified) = post("verify").await?;
        if verified.get("isValid").and_then(Value::as_bool) != Some(true) {
            return Err(Refusal::new(format!(
                "the facilitator refused the payment: {}",
                facilitator_reason(
                    p,
                    "verify",
                    status,
                    &verified,
                    "invalidReason",
                    "invalidMessage"
                )
            ))
            .into());
        }
        // From here on the transfer may be sent: a /settle without an answer is unconfirmed.
        let (status, settled) = post("settle")
            .await
            .map_err(|r| SettleError::Unconfirmed(r.0))?;
        if settled.get("success").and_then(Value::as_bool) != Some(true) {
            let mut reason =
                facilitator_reason(p, "settle", status, &settled, "errorReason", "errorMessage");
            // A transaction that was sent (then reverted, or is still pending: the official
            // facilitator's `settlement_pending`) is named, so that it reaches the log and
            // payment_nonces.detail: the transfer may still happen.
            if let Some(tx) = settled.get("transaction").and_then(Value::as_str) {
                if !tx.is_empty() {
                    reason.push_str(&format!(" (transaction {tx})"));
                }
            }
            let reason = format!("the facilitator could not settle the payment: {reason}");
            if settled.get("errorReason").and_then(Value::as_str) == Some("settlement_pending") {
                return Err(SettleError::Unconfirmed(reason));
            }
            return Err(Refusal::new(reason).into());
        }
        Ok(Settled {
            transaction: settled
                .get("transaction")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            payer: p.payer(),
        })
    }

    async fn settle_on_chain(
        &self,
        chain: &Chain,
        max_fee: Option<u128>,
        p: &Presented,
    ) -> Result<Settled, SettleError> {
        let a = &p.authorization;
        let sig = &p.signature;
        let call = transferWithAuthorizationCall {
            from: a.from,
            to: a.to,
            value: a.value,
            validAfter: a.valid_after,
            validBefore: a.valid_before,
            nonce: a.nonce,
            v: 27 + u8::from(sig.v()),
            r: sig.r().into(),
            s: sig.s().into(),
        };
        let sent = chain
            .transact(
                self.config.chain_id,
                self.config.asset,
                &call.abi_encode(),
                max_fee,
                SETTLE_WAIT,
            )
            .await;
        let (hash, inclusion) = match sent {
            Ok(done) => done,
            Err(e) => {
                // The transfer may have happened all the same (an answer lost after the
                // broadcast): the token itself says whether the authorization was used.
                if self.authorization_used(chain, p).await == Some(true) {
                    tracing::warn!(error = %format!("{e:#}"), payer = %p.payer(),
                        "x402: settlement reported an error but the authorization is used; counted as paid");
                    return Ok(Settled {
                        transaction: String::new(),
                        payer: p.payer(),
                    });
                }
                let why = format!("settling on chain failed: {e:#}");
                if e.downcast_ref::<crate::rpc::MaybeSent>().is_some() {
                    return Err(SettleError::Unconfirmed(why));
                }
                return Err(Refusal::new(why).into());
            }
        };
        let tx = format!("0x{}", hex::encode(hash));
        if !inclusion.succeeded {
            return Err(Refusal::new(format!(
                "the settlement transaction {tx} reverted in block {}",
                inclusion.block
            ))
            .into());
        }
        Ok(Settled {
            transaction: tx,
            payer: p.payer(),
        })
    }
}

impl X402 {
    /// Whether the asset says `p`'s authorization was used; `None` where no node of the
    /// payment's chain is configured or it does not answer.
    pub async fn authorization_state(&self, p: &Presented) -> Option<bool> {
        self.authorization_used(self.rpc.as_ref()?, p).await
    }

    /// `authorizationState(from, nonce)` on the asset; `None` if the node does not answer.
    async fn authorization_used(&self, chain: &Chain, p: &Presented) -> Option<bool> {
        let call = abi::authorizationStateCall {
            authorizer: p.authorization.from,
            nonce: p.authorization.nonce,
        };
        let out = chain
            .call(self.config.asset, &call.abi_encode())
            .await
            .ok()?;
        Some(out.last().is_some_and(|b| *b == 1))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloy::signers::local::PrivateKeySigner;
    use alloy::signers::SignerSync;

    fn config() -> X402Config {
        X402Config {
            amount: U256::from(20_000u64),
            decimals: 6,
            asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
                .parse()
                .unwrap(),
            asset_name: "USD Coin".into(),
            asset_version: "2".into(),
            pay_to: "0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1"
                .parse()
                .unwrap(),
            chain_id: 8453,
            network: "eip155:8453".into(),
            network_v1: "base".into(),
            max_timeout_s: 300,
            facilitator_url: None,
        }
    }

    fn signed_payload(c: &X402Config, key: &PrivateKeySigner, version: u8, now: u64) -> String {
        let auth = TransferWithAuthorization {
            from: key.address(),
            to: c.pay_to,
            value: c.amount,
            validAfter: U256::from(now - 600),
            validBefore: U256::from(now + 300),
            nonce: B256::repeat_byte(7),
        };
        let sig = key
            .sign_hash_sync(&auth.eip712_signing_hash(&c.domain()))
            .unwrap();
        let exact = json!({
            "signature": format!("0x{}", hex::encode(sig.as_bytes())),
            "authorization": {
                "from": key.address().to_checksum(None),
                "to": c.pay_to.to_checksum(None),
                "value": c.amount.to_string(),
                "validAfter": (now - 600).to_string(),
                "validBefore": (now + 300).to_string(),
                "nonce": format!("0x{}", "07".repeat(32)),
            },
        });
        let payload = match version {
            2 => json!({"x402Version": 2, "accepted": c.requirements_v2(), "payload": exact}),
            _ => json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": exact}),
        };
        base64::engine::general_purpose::STANDARD.encode(payload.to_string())
    }

    #[test]
    fn a_signed_payment_decodes_and_meets_the_requirements() {
        let c = config();
        let key = PrivateKeySigner::random();
        let now = 1_800_000_000;
        for version in [2u8, 1] {
            let header = signed_payload(&c, &key, version, now);
            let (v2, v1) = match version {
                2 => (Some(header.as_str()), None),
                _ => (None, Some(header.as_str())),
            };
            let p = decode(&c, v2, v1).unwrap().unwrap();
            assert_eq!(p.payer(), key.address());
            check_requirements(&c, &p, now).unwrap();
            // Expired, not valid yet, or valid for longer than maxTimeoutSeconds.
            assert!(check_requirements(&c, &p, now + 300).is_err());
            assert!(check_requirements(&c, &p, now - 700).is_err());
            let err = check_requirements(&c, &p, now - 500).unwrap_err();
            assert!(err.0.contains("maxTimeoutSeconds"), "{}", err.0);
        }
    }

    #[test]
    fn a_payment_for_another_domain_or_price_is_refused() {
        let c = config();
        let key = PrivateKeySigner::random();
        let now = 1_800_000_000;
        let mut other = c.clone();
        other.asset_version = "1".into();
        let header = signed_payload(&other, &key, 2, now);
        let err = decode(&c, Some(&header), None).unwrap_err();
        assert!(err.0.contains("signature is not from"), "{}", err.0);

        let mut cheap = c.clone();
        cheap.amount = U256::from(1u64);
        let header = signed_payload(&cheap, &key, 2, now);
        let mut cheap_domain = cheap.clone();
        cheap_domain.amount = c.amount;
        let p = decode(&cheap_domain, Some(&header), None).unwrap().unwrap();
        assert!(check_requirements(&c, &p, now).is_err());
        assert!(decode(&c, Some("not base64!"), None).is_err());
        assert!(decode(&c, None, None).unwrap().is_none());
    }

    #[test]
    fn the_402_answer_carries_both_generations() {
        let c = config();
        let (header, body) = payment_required(&c, "http://x/v1/notarize", "pay");
        let v2: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(header)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(v2["x402Version"], 2);
        assert_eq!(v2["accepts"][0]["amount"], "20000");
        assert_eq!(v2["accepts"][0]["network"], "eip155:8453");
        assert_eq!(v2["accepts"][0]["extra"]["name"], "USD Coin");
        let body = serde_json::to_value(&body).unwrap();
        assert_eq!(body["x402Version"], 1);
        assert_eq!(body["accepts"][0]["network"], "base");
        assert_eq!(body["accepts"][0]["maxAmountRequired"], "20000");
        assert_eq!(body["accepts"][0]["resource"], "http://x/v1/notarize");
        assert_eq!(body["accepts"][0]["outputSchema"], Value::Null);
        assert_eq!(c.display_price(), "0.02");
    }
}
