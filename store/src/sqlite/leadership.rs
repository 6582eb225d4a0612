//! Leadership on the embedded store.

use super::*;
use crate::{LeaderStore, Lease, StoreResult};
use async_trait::async_trait;

/// The embedded store already belongs to one process (the data-dir lock), so it always leads.
#[derive(Debug)]
pub(super) struct DataDirLease;

#[async_trait]
impl Lease for DataDirLease {
    async fn lost(&mut self) {
        std::future::pending::<()>().await
    }
}

#[async_trait]
impl LeaderStore for SqliteStore {
    async fn try_lead(&self) -> StoreResult<Option<Box<dyn Lease>>> {
        Ok(Some(Box::new(DataDirLease)))
    }
}
