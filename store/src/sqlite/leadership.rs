//! Leadership on the embedded store.

use super::*;
use crate::{LeaderStore, Lease, StoreResult};
use async_trait::async_trait;

#[async_trait]
impl LeaderStore for SqliteStore {
    async fn try_lead(&self) -> StoreResult<Option<Box<dyn Lease>>> {
        Ok(Some(Box::new(DataDirLease)))
    }
}
