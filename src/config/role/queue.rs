//! The stream and queue roles' settings: `NAME:stream:...` (XADD producers, one consumer group
//! of XREADGROUP consumers) and `NAME:queue:...` (producers pushing, workers blocked on a pop).
//! Their producers are the run's connections, as a pub/sub role's publishers are; their
//! consumers and workers are listeners (`engine::streams`, `engine::queue`).

use super::error::RoleError;

/// XADD producers and one consumer group reading with XREADGROUP.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRole {
    pub producers: usize,
    pub consumers: usize,
    /// XADDs per second over all producers; `None`: closed loop.
    pub rate: Option<f64>,
    /// XREADGROUP's COUNT: the most entries one read takes.
    pub count: u64,
    /// XREADGROUP's BLOCK, in milliseconds (0: until an entry comes).
    pub block_ms: u64,
    /// XACK each entry read; `false`: read with NOACK.
    pub ack: bool,
    /// The consumer group, created before the run and destroyed after it.
    pub group: String,
    /// Bytes of filler after the stamp each entry carries.
    pub size: usize,
}

/// The blocking pop a queue role's workers wait on, and the push that feeds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pop {
    /// ZADD, BZPOPMIN.
    Bzpopmin,
    /// RPUSH, BLPOP (first in, first out).
    Blpop,
    /// LPUSH, BRPOP.
    Brpop,
    /// LPUSH, BLMOVE to a list of taken items, then LREM from it (a reliable queue).
    Blmove,
}

impl Pop {
    pub fn name(self) -> &'static str {
        match self {
            Pop::Bzpopmin => "bzpopmin",
            Pop::Blpop => "blpop",
            Pop::Brpop => "brpop",
            Pop::Blmove => "blmove",
        }
    }
}

/// Producers pushing items, workers blocked on a pop until one comes.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRole {
    pub producers: usize,
    pub workers: usize,
    /// Pushes per second over all producers; `None`: closed loop.
    pub rate: Option<f64>,
    pub pop: Pop,
    /// Bytes of filler after the stamp each item carries.
    pub size: usize,
}

/// One `KEY=VALUE` setting of role `name`, its value read as a count or a rate.
struct Setting<'a> {
    name: &'a str,
    key: &'a str,
    value: &'a str,
}

impl Setting<'_> {
    fn count(&self) -> Result<u64, RoleError> {
        let (name, key, value) = (self.name, self.key, self.value);
        value.parse::<u64>().map_err(|_| format!("--role {name}: {key}={value} is not a whole number").into())
    }

    fn rate(&self, per: &str) -> Result<Option<f64>, RoleError> {
        let (name, value) = (self.name, self.value);
        let rate =
            super::super::parse::positive(value).map_err(|e| format!("--role {name}: rate={value}: {e} ({per})"))?;
        Ok(Some(rate as f64))
    }
}

/// Each `KEY=VALUE` of `settings`, or the line saying which is not one.
fn settings<'a>(name: &'a str, settings: &'a str) -> impl Iterator<Item = Result<Setting<'a>, RoleError>> {
    settings.split(',').filter(|s| !s.is_empty()).map(move |setting| {
        let (key, value) = setting.split_once('=').ok_or_else(|| {
            RoleError::from(format!("--role {name}: '{setting}' is not KEY=VALUE (as in producers=2)"))
        })?;
        Ok(Setting { name, key, value })
    })
}

/// A stream role's settings (`producers`, `consumers`, `rate`, `count`, `block`, `ack`,
/// `group`, `size`).
pub fn stream(name: &str, text: &str) -> Result<StreamRole, RoleError> {
    let mut s = StreamRole {
        producers: 1,
        consumers: 1,
        rate: None,
        count: 10,
        block_ms: 1000,
        ack: true,
        group: name.to_string(),
        size: 0,
    };
    for setting in settings(name, text) {
        let setting = setting?;
        match setting.key {
            "producers" => s.producers = setting.count()? as usize,
            "consumers" => s.consumers = setting.count()? as usize,
            "rate" => s.rate = setting.rate("entries per second")?,
            "count" => s.count = setting.count()?,
            "block" => s.block_ms = setting.count()?,
            "size" => s.size = setting.count()? as usize,
            "group" if !setting.value.is_empty() && !setting.value.contains(char::is_whitespace) => {
                s.group = setting.value.to_string();
            }
            "group" => return Err(format!("--role {name}: group='{}' (expected a name)", setting.value).into()),
            "ack" => {
                s.ack = match setting.value {
                    "xack" => true,
                    "noack" => false,
                    v => return Err(format!("--role {name}: ack={v} (expected xack or noack)").into()),
                }
            }
            key => {
                return Err(format!(
                    "--role {name}: unknown setting '{key}' (expected producers, consumers, rate, count, block, \
                     ack, group or size)"
                )
                .into());
            }
        }
    }
    if s.producers == 0 {
        return Err(format!("--role {name} has consumers but no producers: give it producers=N (N at least 1)").into());
    }
    if s.consumers == 0 {
        return Err(format!("--role {name} has producers but no consumers: give it consumers=M (M at least 1)").into());
    }
    if s.count == 0 {
        return Err(format!("--role {name}: count=0 reads nothing: give it count=C (C at least 1)").into());
    }
    Ok(s)
}

/// A queue role's settings (`producers`, `workers`, `rate`, `command`, `size`).
pub fn queue(name: &str, text: &str) -> Result<QueueRole, RoleError> {
    let mut q = QueueRole { producers: 1, workers: 1, rate: None, pop: Pop::Blpop, size: 0 };
    for setting in settings(name, text) {
        let setting = setting?;
        match setting.key {
            "producers" => q.producers = setting.count()? as usize,
            "workers" => q.workers = setting.count()? as usize,
            "rate" => q.rate = setting.rate("pushes per second")?,
            "size" => q.size = setting.count()? as usize,
            "command" => {
                q.pop = match setting.value.to_ascii_lowercase().as_str() {
                    "bzpopmin" => Pop::Bzpopmin,
                    "blpop" => Pop::Blpop,
                    "brpop" => Pop::Brpop,
                    "blmove" => Pop::Blmove,
                    _ => {
                        return Err(format!(
                            "--role {name}: command={} (expected bzpopmin, blpop, brpop or blmove)",
                            setting.value
                        )
                        .into());
                    }
                }
            }
            key => {
                return Err(format!(
                    "--role {name}: unknown setting '{key}' (expected producers, workers, rate, command or size)"
                )
                .into());
            }
        }
    }
    if q.producers == 0 {
        return Err(format!("--role {name} has workers but no producers: give it producers=N (N at least 1)").into());
    }
    if q.workers == 0 {
        return Err(format!("--role {name} has producers but no workers: give it workers=M (M at least 1)").into());
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_role_reads_its_settings() {
        let s = stream("orders", "producers=2,consumers=20,rate=500,count=5,block=200,ack=noack,group=g").unwrap();
        assert_eq!((s.producers, s.consumers, s.rate, s.count, s.block_ms), (2, 20, Some(500.0), 5, 200));
        assert_eq!((s.ack, s.group.as_str()), (false, "g"));
        let s = stream("orders", "").unwrap();
        assert_eq!((s.producers, s.consumers, s.ack, s.group.as_str()), (1, 1, true, "orders"));
    }

    #[test]
    fn a_queue_role_reads_its_settings() {
        let q = queue("jobs", "producers=1,workers=4,rate=100,command=bzpopmin").unwrap();
        assert_eq!((q.producers, q.workers, q.rate, q.pop), (1, 4, Some(100.0), Pop::Bzpopmin));
        assert_eq!(queue("jobs", "").unwrap().pop, Pop::Blpop);
    }

    #[test]
    fn settings_that_leave_nothing_to_do_name_the_fix() {
        let e = stream("orders", "consumers=0").unwrap_err().to_string();
        assert_eq!(e, "--role orders has producers but no consumers: give it consumers=M (M at least 1)");
        let e = queue("jobs", "producers=0").unwrap_err().to_string();
        assert!(e.contains("jobs has workers but no producers: give it producers=N"), "{e}");
        let e = queue("jobs", "command=bpop").unwrap_err().to_string();
        assert!(e.contains("command=bpop (expected bzpopmin, blpop, brpop or blmove)"), "{e}");
        let e = stream("orders", "ack=maybe").unwrap_err().to_string();
        assert!(e.contains("ack=maybe (expected xack or noack)"), "{e}");
    }
}
