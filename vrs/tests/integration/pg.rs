//! PostgreSQL for the tests: `TEST_DATABASE_URL` names the database (scripts/test provides one
//! when none is given); every test works in a schema of its own, dropped when it ends. Without
//! a database the Postgres tests fail: they never skip.

use crate::proxy::Proxy;
use std::sync::atomic::{AtomicU32, Ordering};

/// The database the Postgres tests use.
pub fn database_url() -> String {
    match std::env::var("TEST_DATABASE_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "TEST_DATABASE_URL is not set: the PostgreSQL tests need a database \
             (scripts/test starts a throwaway one; or set TEST_DATABASE_URL=postgres://…)"
        ),
    }
}

/// Runs SQL on `url` from a thread of its own (callable from sync and async tests alike).
pub fn execute(url: &str, sql: &str) {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to TEST_DATABASE_URL: {e}"));
            tokio::spawn(conn);
            client
                .batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        });
    })
    .join()
    .unwrap();
}

/// A schema of its own for one test, dropped (with everything in it) on drop.
pub struct TestSchema {
    pub name: String,
    base: String,
}

impl TestSchema {
    pub fn create(label: &str) -> TestSchema {
        static N: AtomicU32 = AtomicU32::new(0);
        let base = database_url();
        let name = format!(
            "vrs_test_{label}_{}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        );
        execute(&base, &format!("CREATE SCHEMA {name}"));
        TestSchema { name, base }
    }

    /// The database URL with this schema first on the search path.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{}", self.base, self.name)
    }

    /// A TCP proxy the test can cut between the service and the database, and this schema's
    /// URL through it.
    pub fn through_proxy(&self) -> (Proxy, String) {
        let config: tokio_postgres::Config = self.base.parse().unwrap();
        let host = match &config.get_hosts()[0] {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            #[allow(unreachable_patterns)]
            other => panic!("TEST_DATABASE_URL must use TCP for this test, not {other:?}"),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let target = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .unwrap()
            .next()
            .unwrap();
        let proxy = Proxy::start(target);
        let user = config.get_user().unwrap_or("postgres");
        let password = config
            .get_password()
            .map(|p| format!(":{}", String::from_utf8_lossy(p)))
            .unwrap_or_default();
        let db = config.get_dbname().unwrap_or(user);
        let url = format!(
            "postgres://{user}{password}@{}/{db}?options=-csearch_path%3D{}",
            proxy.addr, self.name
        );
        (proxy, url)
    }

    /// Runs SQL inside this schema.
    pub fn execute(&self, sql: &str) {
        execute(&self.url(), sql);
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        execute(
            &self.base,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}
