//! TEMPORARY until the codec seam lands.
pub mod memcache;
