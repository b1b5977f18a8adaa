//! One result of a JSON document, counted as it is read.

use serde::Deserialize;

/// One test of a document, counted against the reading thread's cap on
/// results as it is read ([`crate::ingest::limits`]): a small document of
/// millions of tests stops at the cap, before it is all in memory.
pub struct Counted<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Counted<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = T::deserialize(d)?;
        match crate::ingest::limits::one_result() {
            Some(why) => Err(serde::de::Error::custom(why)),
            None => Ok(Counted(t)),
        }
    }
}

impl<T> std::ops::Deref for Counted<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
