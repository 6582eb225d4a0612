//! Objects whose members go on the wire in byte order of their names. Most of the API's
//! larger bodies (a verification, a game's result, the anchor object, …) were first written as
//! JSON maps, which keep their members sorted; clients may have come to rely on those exact
//! bytes, so the types that replaced the maps keep the order instead of following their field
//! order. Sorting goes through `serde_json::Value`, whose maps are ordered by name.

use serde::{Serialize, Serializer};

/// Serializes `value` with the members of every object in it sorted by name; for
/// `#[serde(serialize_with = "members_sorted")]` on a field inside a body written in field
/// order.
pub fn members_sorted<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// A body written with the members of every object in it sorted by name.
#[derive(Debug)]
pub struct Sorted<T>(pub T);

impl<T: Serialize> Serialize for Sorted<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        members_sorted(&self.0, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Inner {
        zeta: u8,
        #[serde(rename = "Alpha")]
        alpha: u8,
    }

    #[derive(Serialize)]
    struct Outer {
        inner: Inner,
        a_b: Option<u8>,
        #[serde(rename = "aB")]
        a_upper_b: u8,
    }

    #[test]
    fn every_level_is_sorted_by_the_bytes_of_the_names() {
        let body = Outer {
            inner: Inner { zeta: 1, alpha: 2 },
            a_b: None,
            a_upper_b: 3,
        };
        let text = serde_json::to_string(&Sorted(body)).expect("serializes");
        assert_eq!(text, r#"{"aB":3,"a_b":null,"inner":{"Alpha":2,"zeta":1}}"#);
    }
}
