//! A real `vrs serve` process on a free loopback port, and a small JSON HTTP client.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `vrs serve`; stopped with SIGTERM (then killed) when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    /// A PostgreSQL server's own data dir (its acceptance key), when the test gave none.
    _own_dir: Option<tempfile::TempDir>,
}

/// Fast epochs for tests: the insecure 512-bit modulus and short epochs (T calibrated for
/// them: the timing rule allows no T too small for its epoch).
pub const FAST: &[&str] = &["--modulus", "test512", "--epoch-ms", "300"];

/// [`FAST`] with a small pool, so that instant bets are served (200) and pool batches exist.
pub fn fast_with_small_pool() -> Vec<&'static str> {
    let mut flags = FAST.to_vec();
    flags.extend_from_slice(&[
        "--pool-iterations",
        "64",
        "--pool-batch",
        "8",
        "--pool-depth",
        "16",
        "--pool-low-water",
        "8",
    ]);
    flags
}

impl Server {
    /// Starts `vrs serve` on the embedded store in `data_dir` with `extra` flags and waits for
    /// its URL.
    pub fn start(data_dir: &Path, extra: &[&str]) -> Server {
        Self::start_env(data_dir, extra, &[])
    }

    /// [`Server::start`] with environment variables set.
    pub fn start_env(data_dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
        cmd.args(["serve", "--data-dir"])
            .arg(data_dir)
            .env_remove("DATABASE_URL")
            .envs(env.iter().copied());
        Self::launch(cmd, extra)
    }

    /// Starts `vrs serve` on PostgreSQL at `database_url`.
    pub fn start_pg(database_url: &str, extra: &[&str]) -> Server {
        Self::start_pg_env(database_url, extra, &[])
    }

    /// [`Server::start_pg`] with environment variables set.
    pub fn start_pg_env(database_url: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
        cmd.arg("serve")
            .env("DATABASE_URL", database_url)
            .envs(env.iter().copied());
        // Each replica keeps its acceptance key in its data dir: a fresh one unless given.
        let own = (!extra.contains(&"--data-dir")).then(|| tempfile::tempdir().expect("tempdir"));
        if let Some(d) = &own {
            cmd.arg("--data-dir").arg(d.path());
        }
        let mut server = Self::launch(cmd, extra);
        server._own_dir = own;
        server
    }

    /// [`Server::start`] with its log (stderr) written to `log` at level `rust_log`.
    pub fn start_logged(data_dir: &Path, extra: &[&str], log: &Path, rust_log: &str) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
        cmd.args(["serve", "--data-dir"])
            .arg(data_dir)
            .env_remove("DATABASE_URL");
        let file = std::fs::File::create(log).expect("log file");
        Self::launch_to(cmd, extra, Stdio::from(file), rust_log)
    }

    fn launch(cmd: Command, extra: &[&str]) -> Server {
        Self::launch_to(cmd, extra, Stdio::inherit(), "warn")
    }

    fn launch_to(mut cmd: Command, extra: &[&str], stderr: Stdio, rust_log: &str) -> Server {
        // Tests post from one address as fast as they can: the per-client write limit is off
        // unless a test sets it (limits.rs does).
        if !extra.contains(&"--rate-limit") {
            cmd.args(["--rate-limit", "0"]);
        }
        // A test that needs its port before the server starts gives its own --addr.
        if !extra.contains(&"--addr") {
            cmd.args(["--addr", "127.0.0.1:0"]);
        }
        let mut child = cmd
            .args(extra)
            .env("RUST_LOG", rust_log)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("vrs serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("vrs serve printed its URL before exiting")
                .expect("stdout is UTF-8");
            if let Some(url) = line.strip_prefix("vrs listening on ") {
                break url.trim().to_owned();
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            url,
            _own_dir: None,
        }
    }

    /// Sends SIGTERM and waits for a clean exit; returns whether it exited with status 0.
    pub fn stop(mut self) -> bool {
        self.terminate()
    }

    /// SIGSTOP / SIGCONT: a frozen process (its sockets stay open, it answers nothing).
    pub fn freeze(&self, frozen: bool) {
        let signal = if frozen { "-STOP" } else { "-CONT" };
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success());
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `limit` for the process to exit by itself; its exit code (None: it was
    /// still running, and is killed, or a signal ended it).
    pub fn wait_exit(mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }

    /// SIGKILL: a crash, with no chance to clean up.
    pub fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn terminate(&mut self) -> bool {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        response(ureq::get(&format!("{}{path}", self.url)).call())
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        response(ureq::post(&format!("{}{path}", self.url)).send_json(body))
    }

    /// Polls `GET path` until it answers 200 or `timeout` passes.
    pub fn poll_ok(&self, path: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let (status, body) = self.get(path);
            if status == 200 {
                return body;
            }
            assert_eq!(
                status, 202,
                "unexpected answer while polling {path}: {body}"
            );
            assert!(
                Instant::now() < deadline,
                "{path} still pending after {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.terminate();
        }
    }
}

fn response(r: Result<ureq::Response, ureq::Error>) -> (u16, Value) {
    let resp = match r {
        Ok(resp) => resp,
        Err(ureq::Error::Status(_, resp)) => resp,
        Err(e) => panic!("HTTP request failed: {e}"),
    };
    let status = resp.status();
    let ct = resp.header("content-type").unwrap_or("").to_owned();
    assert!(
        ct.starts_with("application/json"),
        "status {status} with content type {ct:?}"
    );
    (status, resp.into_json().expect("JSON body"))
}
