//! PostgreSQL for the tests: `TEST_DATABASE_URL` names the database (scripts/test provides one
//! when none is given); every test works in a schema of its own, dropped when it ends. Without
//! a database the Postgres tests fail: they never skip.

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
