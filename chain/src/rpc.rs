//! The EVM side of anchoring, through alloy: JSON-RPC over HTTP, a local private-key signer and
//! EIP-1559 transactions. Nothing here decides what to send; the service's anchorer does.

use alloy::consensus::{Transaction as _, TxEnvelope};
use alloy::eips::eip2718::{Decodable2718, Encodable2718};
use alloy::network::{EthereumWallet, NetworkTransactionBuilder, TransactionBuilder};
use alloy::primitives::{Address, Bytes, B256, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::signers::local::PrivateKeySigner;
use anyhow::anyhow;
use std::future::{Future, IntoFuture};
use std::time::Duration;

/// Longest wait for one JSON-RPC call; a hung node must not stall the anchor loop forever.
const RPC_TIMEOUT: Duration = Duration::from_secs(15);

/// A signed transaction, ready to record and broadcast.
#[derive(Debug, Clone)]
pub struct Signed {
    pub hash: [u8; 32],
    pub raw: Vec<u8>,
}

/// EIP-1559 fees in wei.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fees {
    pub max_fee: u128,
    pub priority_fee: u128,
}

impl Fees {
    /// At most `cap` for the max fee (the priority fee never above the max fee).
    pub fn capped(self, cap: Option<u128>) -> Fees {
        let max_fee = cap.map_or(self.max_fee, |c| self.max_fee.min(c));
        Fees {
            max_fee,
            priority_fee: self.priority_fee.min(max_fee),
        }
    }

    /// Fees for a replacement: at least 12.5 % above `old` on both (nodes refuse a
    /// replacement under 10 %), and at least what the chain asks now.
    pub fn bumped(old: Fees, now: Fees) -> Fees {
        let bump = |v: u128| v.saturating_add(v / 8).saturating_add(1);
        let priority_fee = bump(old.priority_fee).max(now.priority_fee);
        let max_fee = bump(old.max_fee).max(now.max_fee).max(priority_fee);
        Fees {
            max_fee,
            priority_fee,
        }
    }
}

/// What a receipt says about a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inclusion {
    pub block: u64,
    pub succeeded: bool,
}

/// One RPC endpoint and the operator's signing key.
#[derive(Clone)]
pub struct Chain {
    provider: DynProvider,
    /// Spellings of the RPC URL to cut out of error messages: hosted RPC URLs often carry an
    /// API key, and errors reach logs and the public stats.
    url_forms: Vec<String>,
    wallet: EthereumWallet,
    from: Address,
    /// Held while this process picks a nonce and sends from the account (anchors and x402
    /// settlements share it), so two of its own transactions never take the same nonce.
    send_lock: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for Chain {
    // Never print the wallet: it holds the private key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").field("from", &self.from).finish()
    }
}

/// A transaction that may have reached the network although sending it failed: its fate is
/// decided by the chain, not by the error.
#[derive(Debug)]
pub struct MaybeSent(pub String);

impl std::fmt::Display for MaybeSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MaybeSent {}

/// The input (calldata) of a signed transaction as [`Signed::raw`] holds it; None when the
/// bytes are not an EIP-2718 transaction.
pub fn input_of(raw: &[u8]) -> Option<Vec<u8>> {
    let envelope = TxEnvelope::decode_2718(&mut &raw[..]).ok()?;
    Some(envelope.input().to_vec())
}

/// Parses a private key given as 64 hex digits (with or without 0x). The error never repeats
/// the input.
pub fn parse_key(text: &str) -> anyhow::Result<PrivateKeySigner> {
    let t = text.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    if t.len() != 64 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        anyhow::bail!("the anchor private key must be 32 bytes as 64 hex digits (0x optional)");
    }
    t.parse::<PrivateKeySigner>()
        .map_err(|_| anyhow!("the anchor private key is not a valid secp256k1 key"))
}

impl Chain {
    /// Runs one JSON-RPC call with a time limit; errors name the call, never the URL.
    async fn rpc<T, E>(
        &self,
        what: &str,
        f: impl Future<Output = Result<T, E>>,
    ) -> anyhow::Result<T>
    where
        E: std::fmt::Display,
    {
        match tokio::time::timeout(RPC_TIMEOUT, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let mut msg = e.to_string();
                for form in &self.url_forms {
                    if !form.is_empty() {
                        msg = msg.replace(form.as_str(), "<anchor RPC URL>");
                    }
                }
                Err(anyhow!("{what}: {msg}"))
            }
            Err(_) => Err(anyhow!(
                "{what}: no answer within {}s",
                RPC_TIMEOUT.as_secs()
            )),
        }
    }

    pub fn new(url: &str, key: PrivateKeySigner) -> anyhow::Result<Self> {
        let raw = url.trim().to_owned();
        let url: reqwest::Url = raw
            .parse()
            .map_err(|e| anyhow!("--anchor-rpc-url is not a URL: {e}"))?;
        let url_forms = vec![url.as_str().to_owned(), raw];
        // Idle connections are dropped before common servers close theirs (Node's HTTP server,
        // behind ganache, hardhat and many RPC proxies, closes after 5 s): reusing one that
        // the server is closing at that moment fails the call with "error sending request".
        let http = reqwest::Client::builder()
            .pool_idle_timeout(Duration::from_secs(3))
            .build()
            .map_err(|e| anyhow!("building the RPC HTTP client: {e}"))?;
        let provider = ProviderBuilder::new()
            .disable_recommended_fillers()
            .connect_reqwest(http, url)
            .erased();
        let from = key.address();
        Ok(Self {
            provider,
            url_forms,
            wallet: EthereumWallet::from(key),
            from,
            send_lock: Default::default(),
        })
    }

    /// The operator's address (the key's).
    pub fn address(&self) -> Address {
        self.from
    }

    /// Taken around choosing a nonce and broadcasting (see `send_lock`).
    pub async fn lock_sending(&self) -> tokio::sync::OwnedMutexGuard<()> {
        std::sync::Arc::clone(&self.send_lock).lock_owned().await
    }

    /// The account's next nonce counting its pending transactions.
    pub async fn pending_nonce(&self) -> anyhow::Result<u64> {
        self.rpc(
            "eth_getTransactionCount(pending)",
            self.provider
                .get_transaction_count(self.from)
                .pending()
                .into_future(),
        )
        .await
    }

    /// Reads a contract (`eth_call` at the latest block).
    pub async fn call(&self, to: Address, data: &[u8]) -> anyhow::Result<Vec<u8>> {
        let out = self
            .rpc(
                "eth_call",
                self.provider.call(self.request(to, data)).into_future(),
            )
            .await?;
        Ok(out.to_vec())
    }

    /// Sends one contract call from the account and waits until it is mined (or `wait`
    /// passes). A call the node expects to revert is refused before anything is signed.
    /// Returns the transaction hash and its inclusion. An error from the broadcast on (the
    /// transaction may be mined all the same) carries [`MaybeSent`].
    pub async fn transact(
        &self,
        chain_id: u64,
        to: Address,
        data: &[u8],
        max_fee: Option<u128>,
        wait: Duration,
    ) -> anyhow::Result<([u8; 32], Inclusion)> {
        // Held until mined: the anchor loop picks the *mined* nonce, which must not be this
        // transaction's while it is pending.
        let _sending = self.lock_sending().await;
        let gas = self.estimate_gas(to, data).await?;
        let nonce = self.pending_nonce().await?;
        let fees = self.fees().await?.capped(max_fee);
        // Headroom over the estimate: state may move between estimate and inclusion.
        let gas = gas.saturating_add(gas / 5);
        let signed = self.sign(chain_id, to, data, nonce, gas, fees).await?;
        let tx = format!("0x{}", hex::encode(signed.hash));
        self.broadcast(&signed.raw)
            .await
            .map_err(|e| anyhow::Error::new(MaybeSent(format!("broadcasting {tx}: {e:#}"))))?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Sent: a failed poll is retried until the deadline, never taken as a failure.
            if let Ok(Some(inc)) = self.inclusion(signed.hash).await {
                return Ok((signed.hash, inc));
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(anyhow::Error::new(MaybeSent(format!(
                    "transaction {tx} was not mined within {}s",
                    wait.as_secs()
                ))));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    pub async fn chain_id(&self) -> anyhow::Result<u64> {
        self.rpc("eth_chainId", self.provider.get_chain_id()).await
    }

    pub async fn head(&self) -> anyhow::Result<u64> {
        self.rpc("eth_blockNumber", self.provider.get_block_number())
            .await
    }

    /// Transactions of this account included in the latest block or before.
    pub async fn mined_nonce(&self) -> anyhow::Result<u64> {
        self.rpc(
            "eth_getTransactionCount(latest)",
            self.provider
                .get_transaction_count(self.from)
                .latest()
                .into_future(),
        )
        .await
    }

    pub async fn fees(&self) -> anyhow::Result<Fees> {
        let f = self
            .rpc("fee estimate", self.provider.estimate_eip1559_fees())
            .await?;
        Ok(Fees {
            max_fee: f.max_fee_per_gas,
            priority_fee: f.max_priority_fee_per_gas,
        })
    }

    fn request(&self, to: Address, data: &[u8]) -> TransactionRequest {
        TransactionRequest::default()
            .with_from(self.from)
            .with_to(to)
            .with_value(U256::ZERO)
            .with_input(Bytes::copy_from_slice(data))
    }

    pub async fn estimate_gas(&self, to: Address, data: &[u8]) -> anyhow::Result<u64> {
        self.rpc(
            "eth_estimateGas",
            self.provider
                .estimate_gas(self.request(to, data))
                .into_future(),
        )
        .await
    }

    /// Signs a zero-value EIP-1559 transaction to `to` carrying `data`.
    pub async fn sign(
        &self,
        chain_id: u64,
        to: Address,
        data: &[u8],
        nonce: u64,
        gas: u64,
        fees: Fees,
    ) -> anyhow::Result<Signed> {
        let req = self
            .request(to, data)
            .with_chain_id(chain_id)
            .with_nonce(nonce)
            .with_gas_limit(gas)
            .with_max_fee_per_gas(fees.max_fee)
            .with_max_priority_fee_per_gas(fees.priority_fee);
        let envelope: TxEnvelope = req
            .build(&self.wallet)
            .await
            .map_err(|e| anyhow!("signing the anchor transaction: {e}"))?;
        Ok(Signed {
            hash: envelope.tx_hash().0,
            raw: envelope.encoded_2718(),
        })
    }

    /// Broadcasts a signed transaction (`eth_sendRawTransaction`).
    /// A node that already has it says so ("already known"): that is success.
    pub async fn broadcast(&self, raw: &[u8]) -> anyhow::Result<()> {
        match self
            .rpc(
                "eth_sendRawTransaction",
                self.provider.send_raw_transaction(raw),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let msg = e.to_string().to_lowercase();
                if msg.contains("already known") || msg.contains("known transaction") {
                    Ok(())
                } else {
                    Err(e)
                }
            }
        }
    }

    /// The block that included `hash`, if any.
    pub async fn inclusion(&self, hash: [u8; 32]) -> anyhow::Result<Option<Inclusion>> {
        let receipt = self
            .rpc(
                "eth_getTransactionReceipt",
                self.provider.get_transaction_receipt(B256::from(hash)),
            )
            .await?;
        Ok(receipt.and_then(|r| {
            r.block_number.map(|block| Inclusion {
                block,
                succeeded: r.status(),
            })
        }))
    }

    /// Whether the node knows `hash` at all (mined or in its mempool).
    pub async fn knows(&self, hash: [u8; 32]) -> anyhow::Result<bool> {
        Ok(self
            .rpc(
                "eth_getTransactionByHash",
                self.provider.get_transaction_by_hash(B256::from(hash)),
            )
            .await?
            .is_some())
    }

    /// The input data of a transaction as the chain has it.
    pub async fn calldata(&self, hash: [u8; 32]) -> anyhow::Result<Option<Vec<u8>>> {
        let tx = self
            .rpc(
                "eth_getTransactionByHash",
                self.provider.get_transaction_by_hash(B256::from(hash)),
            )
            .await?;
        Ok(tx.map(|t| t.input().to_vec()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_signed_transactions_input_reads_back() {
        let key = parse_key(&"11".repeat(32)).unwrap();
        let chain = Chain::new("http://127.0.0.1:9", key).unwrap();
        let fees = Fees {
            max_fee: 2,
            priority_fee: 1,
        };
        let data = b"vrs-anchor-v2:0123456789";
        let signed = chain
            .sign(8453, Address::ZERO, data, 7, 30_000, fees)
            .await
            .unwrap();
        assert_eq!(input_of(&signed.raw).as_deref(), Some(&data[..]));
        assert_eq!(input_of(b"not a transaction"), None);
    }

    const OLD: Fees = Fees {
        max_fee: 1_000,
        priority_fee: 80,
    };

    #[test]
    fn a_replacement_outbids_by_an_eighth_and_follows_the_market() {
        let quiet = Fees::bumped(
            OLD,
            Fees {
                max_fee: 10,
                priority_fee: 1,
            },
        );
        assert_eq!(
            quiet,
            Fees {
                max_fee: 1_126,
                priority_fee: 91
            }
        );
        let busy = Fees::bumped(
            OLD,
            Fees {
                max_fee: 5_000,
                priority_fee: 300,
            },
        );
        assert_eq!(
            busy,
            Fees {
                max_fee: 5_000,
                priority_fee: 300
            }
        );
    }

    #[test]
    fn the_cap_bounds_both_fees() {
        assert_eq!(OLD.capped(None), OLD);
        assert_eq!(OLD.capped(Some(5_000)), OLD);
        assert_eq!(
            OLD.capped(Some(50)),
            Fees {
                max_fee: 50,
                priority_fee: 50
            }
        );
    }

    #[test]
    fn keys_are_64_hex_digits_and_errors_never_repeat_them() {
        let key = "4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d";
        let a = parse_key(key).unwrap().address();
        assert_eq!(parse_key(&format!("0x{key}\n")).unwrap().address(), a);
        for bad in [&key[1..], "zz", &"0".repeat(64)] {
            let err = parse_key(bad).unwrap_err().to_string();
            assert!(bad.len() < 8 || !err.contains(bad), "{err}");
        }
    }
}
