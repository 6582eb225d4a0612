//! A test-only operator's log: an in-memory [`LogTree`] signed with its own key and served as
//! C2SP tlog-tiles on a loopback port, that tests drive to do what a modified operator would:
//! append entries with any stamps, fork the tree, push any checkpoint to any witness. Never in
//! a release build (testkit is a dev-dependency only).

use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use vrs_protocol::tlog::note::LogSigner;
use vrs_protocol::tlog::{LogEntry, LogTree};

/// The log and its server.
#[derive(Debug)]
pub struct TestLog {
    tree: Arc<Mutex<LogTree>>,
    signer: LogSigner,
    /// The tiles prefix, `http://127.0.0.1:PORT/log/`.
    pub url: String,
    _server: std::thread::JoinHandle<()>,
}

async fn tile(
    State(tree): State<Arc<Mutex<LogTree>>>,
    Path(path): Path<String>,
) -> impl IntoResponse {
    let bytes = tree
        .lock()
        .ok()
        .and_then(|t| t.serve_path(&format!("tile/{path}")));
    match bytes {
        Some(b) => (StatusCode::OK, b).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl TestLog {
    /// A log named `origin`, signed with the key of seed `seed`, with the entries of `tree`.
    pub fn start(origin: &str, seed: [u8; 32], tree: LogTree) -> Self {
        let signer = LogSigner::new(origin, ed25519_dalek::SigningKey::from_bytes(&seed))
            .expect("a valid origin");
        let tree = Arc::new(Mutex::new(tree));
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}/log/", std_listener.local_addr().expect("addr"));
        let shared = tree.clone();
        let server = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).expect("listener");
                let app = Router::new()
                    .route("/log/tile/{*path}", get(tile))
                    .with_state(shared);
                let _ = axum::serve(listener, app).await;
            });
        });
        Self {
            tree,
            signer,
            url,
            _server: server,
        }
    }

    pub fn vkey(&self) -> String {
        self.signer.vkey()
    }

    /// `--log` of a witness of this log: the key and the tiles URL.
    pub fn witness_arg(&self) -> String {
        format!("{} {}", self.vkey(), self.url)
    }

    pub fn append(&self, entry: &LogEntry) -> u64 {
        self.tree
            .lock()
            .expect("tree")
            .append(entry.encode())
            .expect("append")
    }

    pub fn size(&self) -> u64 {
        self.tree.lock().expect("tree").size()
    }

    /// Serves `tree` from now on (a fork, or the honest tree back); returns the tree it
    /// served. The key and URL stay: to a witness it is the same log.
    pub fn swap(&self, tree: LogTree) -> LogTree {
        std::mem::replace(&mut *self.tree.lock().expect("tree"), tree)
    }

    /// A copy of the first `keep` entries: the start of a fork.
    pub fn prefix(&self, keep: u64) -> LogTree {
        let t = self.tree.lock().expect("tree");
        let mut out = LogTree::new();
        for i in 0..keep {
            out.append(t.entry(i).expect("entry").to_vec())
                .expect("append");
        }
        out
    }

    /// The signed checkpoint of the current tree.
    pub fn checkpoint(&self) -> Vec<u8> {
        let t = self.tree.lock().expect("tree");
        self.signer.sign(t.size(), t.root()).expect("sign")
    }

    /// The add-checkpoint body from `old` to the current size (no proof where there is none:
    /// an old size above the tree's).
    pub fn submission(&self, old: u64) -> Vec<u8> {
        let proof = {
            let t = self.tree.lock().expect("tree");
            t.consistency_proof(old, t.size()).unwrap_or_default()
        };
        vrs_protocol::tlog::submission::encode(old, &proof, &self.checkpoint())
    }

    /// Posts the checkpoint to a witness (`http://…`); its status and body.
    pub fn push(&self, witness: &str, old: u64) -> (u16, String) {
        post(witness, &self.submission(old))
    }

    /// Serves `tree` for one push from `old` (a fork, or entries the honest log never takes),
    /// then the tree it served before; the witness's status and body.
    pub fn push_tree(&self, witness: &str, tree: &LogTree, old: u64) -> (u16, String) {
        let saved = self.swap(tree.clone());
        let answer = self.push(witness, old);
        self.swap(saved);
        answer
    }
}

/// Posts an add-checkpoint body; the status and body text.
pub fn post(witness: &str, body: &[u8]) -> (u16, String) {
    let url = format!("{}/add-checkpoint", witness.trim_end_matches('/'));
    match ureq::post(&url).send_bytes(body) {
        Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap_or_default()),
        Err(e) => (0, e.to_string()),
    }
}
