//! A client-side caching role's settings: writers SET over the role's keys, readers keep a
//! bounded local cache kept fresh by RESP3 `CLIENT TRACKING` invalidations (`engine::tracking`).

use super::error::RoleError;

/// The most keys a tracking role spans: the witness keeps a slot per key.
pub const MAX_KEYS: u64 = 1 << 20;

/// Which `CLIENT TRACKING` the readers ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackMode {
    /// `CLIENT TRACKING on`: the server remembers the keys each reader read.
    Default,
    /// `CLIENT TRACKING on BCAST PREFIX p`: every write under the prefix is announced.
    Bcast { prefix: String },
    /// `CLIENT TRACKING on OPTIN`: only reads after `CLIENT CACHING yes` are remembered.
    Optin,
}

impl TrackMode {
    pub fn name(&self) -> &'static str {
        match self {
            TrackMode::Default => "default",
            TrackMode::Bcast { .. } => "bcast",
            TrackMode::Optin => "optin",
        }
    }
}

/// W writers at a rate (or closed loop) over K keys; R readers, each with a local cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracking {
    pub writers: usize,
    pub readers: usize,
    pub keys: u64,
    /// SETs per second over all writers; `None`: closed loop.
    pub rate: Option<f64>,
    /// Reads per second of each reader (local or from the server).
    pub reads_per_sec: u64,
    pub mode: TrackMode,
    /// The most keys a reader's cache holds.
    pub cache: usize,
    /// Bytes of filler after the stamp each value carries.
    pub size: usize,
}

/// The settings of `NAME:tracking:...`.
pub fn parse(name: &str, settings: &str) -> Result<Tracking, RoleError> {
    let mut t = Tracking {
        writers: 1,
        readers: 1,
        keys: 100,
        rate: None,
        reads_per_sec: 1000,
        mode: TrackMode::Default,
        cache: 0,
        size: 0,
    };
    let (mut mode, mut prefix) = ("default", None);
    for setting in settings.split(',').filter(|s| !s.is_empty()) {
        let Some((key, value)) = setting.split_once('=') else {
            return Err(format!("--role {name}: '{setting}' is not KEY=VALUE (as in keys=10)").into());
        };
        let count = |what: &str| -> Result<u64, RoleError> {
            value.parse::<u64>().map_err(|_| format!("--role {name}: {what}={value} is not a whole number").into())
        };
        match key {
            "writers" => t.writers = count("writers")? as usize,
            "readers" => t.readers = count("readers")? as usize,
            "keys" => t.keys = count("keys")?,
            "cache" => t.cache = count("cache")? as usize,
            "size" => t.size = count("size")? as usize,
            "reads" => {
                t.reads_per_sec = super::super::parse::positive(value)
                    .map_err(|e| format!("--role {name}: reads={value}: {e} (reads per second of each reader)"))?;
            }
            "rate" => {
                let rate = super::super::parse::positive(value)
                    .map_err(|e| format!("--role {name}: rate={value}: {e} (SETs per second)"))?;
                t.rate = Some(rate as f64);
            }
            "mode" => mode = value,
            "prefix" => prefix = Some(value.to_string()),
            _ => {
                return Err(format!(
                    "--role {name}: unknown setting '{key}' (expected writers, readers, keys, rate, reads, mode, \
                     prefix, cache or size)"
                )
                .into());
            }
        }
    }
    t.mode = match (mode, prefix) {
        ("default", None) => TrackMode::Default,
        ("optin", None) => TrackMode::Optin,
        ("bcast", prefix) => TrackMode::Bcast { prefix: prefix.unwrap_or_else(|| format!("{name}:")) },
        ("default" | "optin", Some(_)) => {
            return Err(format!("--role {name}: prefix= is for mode=bcast only: drop it, or add mode=bcast").into());
        }
        (other, _) => {
            return Err(format!("--role {name}: mode={other} (expected default, bcast or optin)").into());
        }
    };
    if t.keys == 0 || t.keys > MAX_KEYS {
        return Err(format!("--role {name}: keys={} (expected 1 to {MAX_KEYS})", t.keys).into());
    }
    if t.writers == 0 {
        return Err(format!(
            "--role {name} has readers but no writers: give it writers=N (N at least 1), or nothing is ever \
             invalidated"
        )
        .into());
    }
    if t.readers == 0 {
        return Err(format!("--role {name} has writers but no readers: give it readers=M (M at least 1)").into());
    }
    if t.cache == 0 {
        // Unless told otherwise, every key fits.
        t.cache = t.keys as usize;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_with_their_defaults() {
        let t = parse("c", "writers=2,readers=3,keys=10,rate=100,mode=bcast,cache=5").unwrap();
        assert_eq!((t.writers, t.readers, t.keys, t.rate, t.cache), (2, 3, 10, Some(100.0), 5));
        assert_eq!(t.mode, TrackMode::Bcast { prefix: "c:".into() });
        let t = parse("c", "mode=bcast,prefix=c:1").unwrap();
        assert_eq!(t.mode, TrackMode::Bcast { prefix: "c:1".into() });
        assert_eq!((t.cache, t.reads_per_sec), (100, 1000));
    }

    #[test]
    fn bad_settings_name_the_role_and_the_fix() {
        let e = parse("c", "prefix=x").unwrap_err().to_string();
        assert!(e.contains("prefix= is for mode=bcast only"), "{e}");
        let e = parse("c", "writers=0").unwrap_err().to_string();
        assert!(e.contains("--role c has readers but no writers: give it writers=N"), "{e}");
        let e = parse("c", "mode=always").unwrap_err().to_string();
        assert!(e.contains("mode=always (expected default, bcast or optin)"), "{e}");
    }
}
