//! A real local EVM node for the anchoring tests: ganache, installed by `npm ci --prefix
//! tools/evm` (scripts/test and .ci/run do it) and started by its own binary on loopback.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Ganache's first deterministic account (`--wallet.deterministic`): a well-known test key
/// that holds 1000 test ETH on a fresh chain.
pub const KEY: &str = "0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d";
pub const ADDRESS: &str = "0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1";
/// The calldata tag (docs/PROTOCOL.md §16), hex.
pub const TAG_HEX: &str = "7672732d616e63686f722d76313a";

fn binary() -> PathBuf {
    if let Ok(p) = std::env::var("VRS_GANACHE") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/evm/node_modules/.bin/ganache");
    assert!(
        p.exists(),
        "ganache is not installed at {}: run `npm ci --prefix tools/evm` (scripts/test does)",
        p.display()
    );
    p
}

/// A loopback port free right now (the OS's pick; taken by whoever binds it first).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A ganache process with its chain kept in `db` (so it survives a restart).
pub struct Ganache {
    child: Option<Child>,
    pub port: u16,
    pub url: String,
    db: PathBuf,
    chain_id: u64,
    block_time: bool,
}

impl Ganache {
    /// Starts a chain with id `chain_id`; `block_time`: a block every second (else a block
    /// only when a transaction arrives).
    pub fn start(db: &Path, chain_id: u64, block_time: bool) -> Ganache {
        let port = free_port();
        let mut g = Ganache {
            child: None,
            port,
            url: format!("http://127.0.0.1:{port}"),
            db: db.to_owned(),
            chain_id,
            block_time,
        };
        g.launch();
        g
    }

    fn launch(&mut self) {
        let mut cmd = Command::new(binary());
        cmd.args(["--server.host", "127.0.0.1", "--server.port"])
            .arg(self.port.to_string())
            .args(["--chain.chainId", &self.chain_id.to_string()])
            .args([
                "--wallet.deterministic",
                "--logging.quiet",
                "--database.dbPath",
            ])
            .arg(&self.db)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if self.block_time {
            cmd.args(["--miner.blockTime", "1"]);
        }
        self.child = Some(cmd.spawn().expect("ganache starts"));
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.try_rpc("eth_chainId", json!([])).is_none() {
            assert!(
                Instant::now() < deadline,
                "ganache did not answer within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the node (SIGTERM: it closes its database cleanly).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGSTOP / SIGCONT: a frozen node keeps its socket open and answers nothing.
    pub fn freeze(&self, frozen: bool) {
        if let Some(c) = &self.child {
            let signal = if frozen { "-STOP" } else { "-CONT" };
            assert!(Command::new("kill")
                .args([signal, &c.id().to_string()])
                .status()
                .unwrap()
                .success());
        }
    }

    /// Starts it again on the same port and chain data.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    fn try_rpc(&self, method: &str, params: Value) -> Option<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let res = ureq::post(&self.url)
            .timeout(Duration::from_secs(10))
            .send_json(body)
            .ok()?;
        let v: Value = res.into_json().ok()?;
        Some(v)
    }

    /// Calls `method`; panics on a transport or JSON-RPC error.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        let v = self
            .try_rpc(method, params.clone())
            .unwrap_or_else(|| panic!("{method} {params}: no answer"));
        assert!(v.get("error").is_none(), "{method} {params}: {v}");
        v["result"].clone()
    }

    pub fn head(&self) -> u64 {
        hex_u64(&self.rpc("eth_blockNumber", json!([])))
    }

    /// Sends `data` from `from` (one of the node's unlocked accounts) to itself, and waits
    /// until it is mined; returns its hash.
    pub fn send(&self, from: &str, data: &str) -> String {
        let tx = self.rpc(
            "eth_sendTransaction",
            json!([{"from": from, "to": from, "data": data, "value": "0x0"}]),
        );
        let hash = tx.as_str().expect("a transaction hash").to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self
            .rpc("eth_getTransactionReceipt", json!([hash]))
            .is_null()
        {
            assert!(Instant::now() < deadline, "{hash} not mined in 30 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        hash
    }

    /// An unlocked account of the node other than the operator's ([`ADDRESS`]).
    pub fn stranger(&self) -> String {
        self.rpc("eth_accounts", json!([]))
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_lowercase)
            .find(|a| a != ADDRESS)
            .expect("a second account")
    }

    /// Every transaction on the chain sent by `from` whose calldata is an anchor: (hash,
    /// nonce, root hex), in block order.
    pub fn anchor_txs(&self, from: &str) -> Vec<(String, u64, String)> {
        let mut out = Vec::new();
        for n in 0..=self.head() {
            let block = self.rpc("eth_getBlockByNumber", json!([format!("0x{n:x}"), true]));
            for tx in block["transactions"].as_array().into_iter().flatten() {
                let sender = tx["from"].as_str().unwrap_or_default().to_lowercase();
                let input = tx["input"].as_str().unwrap_or_default();
                if sender == from {
                    if let Some(root) = input.strip_prefix(&format!("0x{TAG_HEX}")) {
                        out.push((
                            tx["hash"].as_str().unwrap().to_owned(),
                            hex_u64(&tx["nonce"]),
                            root.to_owned(),
                        ));
                    }
                }
            }
        }
        out
    }
}

impl Drop for Ganache {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn hex_u64(v: &Value) -> u64 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("not a hex quantity: {v}"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}
