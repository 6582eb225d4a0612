//! The one wall clock the service reads: Unix time in milliseconds. Records, deadlines and
//! acceptance times all come from here (PostgreSQL's own clock stamps one column instead,
//! `pool_batches.committed_at_ms`; log lines carry the logger's own time).

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
