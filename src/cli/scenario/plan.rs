//! A step's plan as typed values: each setting the file makes (with the key it came from) is set
//! on the flags' own types (`native::Args` and fill's and capacity's), over the defaults and the
//! phase's free `args` (the one list clap reads, being the user's flags as written). Nothing the
//! program writes is parsed again, and a mistake carries its key as data.

use std::path::PathBuf;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{Arg, CommandFactory, FromArgMatches};

use super::{Step, Tool};
use crate::cli::capacity::{CapacityArgs, Slo};
use crate::cli::fill::{FillArgs, MemoryTarget};
use crate::cli::native::{Args, Arrival};
use crate::config::parse::SizeList;

/// One value a step sets: the key in the file it came from, the value as shown (scaled as the
/// step runs it) and typed.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The key in the file (`pipeline`, `max`, `args`), for messages.
    pub key: &'static str,
    /// What `--dry-run` and the result's `command_line` show after the flag.
    pub text: String,
    pub value: Value,
}

/// The values a scenario file sets, each on the field of the flag it stands for.
#[derive(Debug, Clone)]
pub enum Value {
    Host(String),
    Port(u16),
    Socket(PathBuf),
    Cacert(PathBuf),
    Cert(PathBuf),
    Key(PathBuf),
    Sni(String),
    Db(u32),
    User(String),
    Password(String),
    Tls,
    TlsSkipVerify,
    Cluster,
    Resp3,
    KeyPrefix(String),
    KeyMin(u64),
    KeyMax(u64),
    KeyMedian(f64),
    KeyStddev(f64),
    ZipfExponent(f64),
    KeyPattern(char),
    Ratio(u32, u32),
    Command(String),
    CommandRatio(u32),
    CommandKeyPattern(char),
    DataSize(usize),
    DataSizeRange(u64, u64),
    DataSizeList(SizeList),
    Connections(u64),
    Threads(u64),
    Pipeline(u64),
    Seed(u64),
    /// A count ("100k") or `allkeys`, as `--requests` keeps it.
    Requests(String),
    Duration(Duration),
    Arrival(Arrival),
    Warmup(Duration),
    Runs(u64),
    Rate(u64),
    MemoryTarget(MemoryTarget),
    Memory(u64),
    Slo(Slo),
    StartRate(u64),
    MaxRate(u64),
    Precision(f64),
    /// The phase's free flags, as the user wrote them.
    Args(Vec<String>),
}

impl Value {
    /// The flag this value stands for (its clap id is the long name with `_` for `-`).
    pub fn flag(&self) -> &'static str {
        use Value::*;
        match self {
            Host(_) => "--host",
            Port(_) => "--port",
            Socket(_) => "--socket",
            Cacert(_) => "--cacert",
            Cert(_) => "--cert",
            Key(_) => "--key",
            Sni(_) => "--sni",
            Db(_) => "--db",
            User(_) => "--user",
            Password(_) => "-a",
            Tls => "--tls",
            TlsSkipVerify => "--tls-skip-verify",
            Cluster => "--cluster",
            Resp3 => "--resp3",
            KeyPrefix(_) => "--key-prefix",
            KeyMin(_) => "--key-min",
            KeyMax(_) => "--key-max",
            KeyMedian(_) => "--key-median",
            KeyStddev(_) => "--key-stddev",
            ZipfExponent(_) => "--zipf-exponent",
            KeyPattern(_) => "--key-pattern",
            Ratio(..) => "--ratio",
            Command(_) => "--command",
            CommandRatio(_) => "--command-ratio",
            CommandKeyPattern(_) => "--command-key-pattern",
            DataSize(_) => "--data-size",
            DataSizeRange(..) => "--data-size-range",
            DataSizeList(_) => "--data-size-list",
            Connections(_) => "--connections",
            Threads(_) => "--threads",
            Pipeline(_) => "--pipeline",
            Seed(_) => "--seed",
            Requests(_) => "--requests",
            Duration(_) => "--duration",
            Arrival(_) => "--arrival",
            Warmup(_) => "--warmup",
            Runs(_) => "--runs",
            Rate(_) => "--rate",
            MemoryTarget(_) => "--memory-target",
            Memory(_) => "--memory",
            Slo(_) => "--slo",
            StartRate(_) => "--start-rate",
            MaxRate(_) => "--max-rate",
            Precision(_) => "--precision",
            Args(_) => "",
        }
    }

    /// A flag without a value (`--tls`).
    pub fn is_switch(&self) -> bool {
        matches!(self, Value::Tls | Value::TlsSkipVerify | Value::Cluster | Value::Resp3)
    }

    /// clap's id of the flag.
    fn id(&self) -> String {
        match self {
            Value::Password(_) => "password".into(),
            v => v.flag().trim_start_matches('-').replace('-', "_"),
        }
    }

    /// Sets the value on the run's flags (`Ok(false)`: it is not one of them).
    fn apply(&self, a: &mut Args) -> Result<bool, String> {
        use Value::*;
        let one = crate::config::parse::at_least_one;
        match self.clone() {
            Host(h) => a.host = h,
            Port(p) => a.port = p,
            Socket(s) => a.socket = Some(s),
            Cacert(f) => a.cacert = Some(f),
            Cert(f) => a.cert = Some(f),
            Key(f) => a.key = Some(f),
            Sni(s) => a.sni = Some(s),
            Db(n) => a.db = Some(n),
            User(u) => a.user = Some(u),
            Password(p) => a.password = Some(p),
            Tls => a.tls = true,
            TlsSkipVerify => a.tls_skip_verify = true,
            Cluster => a.cluster = true,
            Resp3 => a.resp3 = true,
            KeyPrefix(p) => a.key_prefix = p,
            KeyMin(n) => a.key_min = n,
            KeyMax(n) => a.key_max = n,
            KeyMedian(m) => a.key_median = Some(m),
            KeyStddev(s) => a.key_stddev = Some(s),
            ZipfExponent(z) => a.zipf_exponent = z,
            KeyPattern(c) => a.key_pattern = Some((c, c)),
            Ratio(s, g) => a.ratio = Some((s, g)),
            Command(c) => a.command.push(c),
            CommandRatio(n) => a.command_ratio.push(n),
            CommandKeyPattern(c) => a.command_key_pattern.push((c, c)),
            DataSize(n) => a.data_size = n,
            DataSizeRange(lo, hi) => a.data_size_range = Some((lo, hi)),
            DataSizeList(list) => a.data_size_list = Some(list),
            Connections(n) => a.connections = one(n)?,
            Threads(n) => a.threads = Some(one(n)?),
            Pipeline(n) => a.pipeline = one(n)?,
            Seed(n) => a.seed = Some(n),
            Requests(n) => a.requests = Some(n),
            Duration(d) => a.duration = Some(d),
            Arrival(arrival) => a.arrival = arrival,
            Warmup(d) => a.warmup = Some(d),
            Runs(n) => a.runs = one(n)?,
            Rate(n) => a.rate = Some(one(n)?),
            MemoryTarget(_) | Memory(_) | Slo(_) | StartRate(_) | MaxRate(_) | Precision(_) | Args(_) => {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A step's mistake: the message and the key of the file it came from (`None`: the phase as a
/// whole, such as a check across several keys).
#[derive(Debug)]
pub struct PlanError {
    pub key: Option<&'static str>,
    pub msg: String,
}

impl PlanError {
    fn at(key: &'static str, msg: String) -> PlanError {
        PlanError { key: Some(key), msg }
    }
}

/// What a step runs, typed: the run's flags, or a fill's or a search's.
pub(crate) enum Planned {
    Native(Box<Args>),
    Fill(Box<FillArgs>),
    Capacity(Box<CapacityArgs>),
}

impl Step {
    /// The step's flags as typed values: the defaults, the phase's free `args` over them, then
    /// every setting the file makes. A setting the free `args` give again, or one clap says
    /// cannot go with another, is refused at its key, as the command line would refuse it.
    pub(crate) fn planned(&self) -> Result<Planned, PlanError> {
        let free: Vec<String> = self.settings.iter().flat_map(|s| free_args(&s.value)).cloned().collect();
        let (name, mut cmd) = match self.tool {
            Tool::Native => ("respbench", Args::command()),
            Tool::Fill => ("respbench fill", FillArgs::command()),
            // The objective may come from the file's `slo`: the free flags need not give it.
            Tool::Capacity => ("respbench capacity", CapacityArgs::command().mut_arg("slo", |a| a.required(false))),
        };
        let argv = std::iter::once(name.to_string()).chain(free);
        let matches =
            cmd.try_get_matches_from_mut(argv).map_err(|e| PlanError::at("args", crate::cli::clap_message(&e)))?;
        let given = |id: &str| {
            cmd.get_arguments().any(|a| a.get_id() == id) && matches.value_source(id) == Some(ValueSource::CommandLine)
        };
        self.check_relations(&cmd, &given)?;
        let args_error = |e: clap::Error| PlanError::at("args", crate::cli::clap_message(&e));
        let mut planned = match self.tool {
            Tool::Native => Planned::Native(Box::new(Args::from_arg_matches(&matches).map_err(args_error)?)),
            Tool::Fill => {
                let mut fill =
                    FillArgs { memory_target: None, target_fraction: None, memory: None, run: Args::default() };
                fill.update_from_arg_matches(&matches).map_err(args_error)?;
                Planned::Fill(Box::new(fill))
            }
            Tool::Capacity => {
                // clap's defaults replace these, and the file's `slo` (checked below) this one.
                let slo = Slo { percentile: 99.0, bound: Duration::from_millis(1) };
                let run = Args::default();
                let mut c = CapacityArgs { slo, start_rate: 0, max_rate: 0, precision: 0.0, run };
                c.update_from_arg_matches(&matches).map_err(args_error)?;
                Planned::Capacity(Box::new(c))
            }
        };
        let run = match &mut planned {
            Planned::Native(a) => a.as_mut(),
            Planned::Fill(f) => &mut f.run,
            Planned::Capacity(c) => &mut c.run,
        };
        // The file's commands come first, the free `args`' after them (as the flags were listed).
        let free = (
            std::mem::take(&mut run.command),
            std::mem::take(&mut run.command_ratio),
            std::mem::take(&mut run.command_key_pattern),
        );
        for s in &self.settings {
            s.value.apply(run).map_err(|e| PlanError::at(s.key, format!("{}: {e}", s.key)))?;
        }
        run.command.extend(free.0);
        run.command_ratio.extend(free.1);
        run.command_key_pattern.extend(free.2);
        match &mut planned {
            Planned::Native(_) => {}
            Planned::Fill(fill) => {
                for s in &self.settings {
                    match s.value {
                        Value::MemoryTarget(t) => fill.memory_target = Some(t),
                        Value::Memory(m) => fill.memory = Some(m),
                        _ => {}
                    }
                }
            }
            Planned::Capacity(c) => self.capacity(c, given("slo"))?,
        }
        Ok(planned)
    }

    /// A capacity search's own settings, over clap's defaults and the free `args`.
    fn capacity(&self, c: &mut CapacityArgs, mut slo: bool) -> Result<(), PlanError> {
        let one = crate::config::parse::at_least_one;
        for s in &self.settings {
            let at = |e: String| PlanError::at(s.key, format!("{}: {e}", s.key));
            match s.value {
                Value::Slo(v) => {
                    c.slo = v;
                    slo = true;
                }
                Value::StartRate(n) => c.start_rate = one(n).map_err(at)?,
                Value::MaxRate(n) => c.max_rate = one(n).map_err(at)?,
                Value::Precision(p) => c.precision = p,
                _ => {}
            }
        }
        if !slo {
            return Err(PlanError { key: None, msg: "a capacity phase needs 'slo' (p99=1ms, say)".into() });
        }
        Ok(())
    }

    /// What clap checks between flags, for the file's settings: a flag given twice (by a key
    /// and in `args`), flags that exclude each other, and flags that need another.
    fn check_relations(&self, cmd: &clap::Command, given: &dyn Fn(&str) -> bool) -> Result<(), PlanError> {
        let typed: Vec<(&Setting, String)> =
            self.settings.iter().filter(|s| !matches!(s.value, Value::Args(_))).map(|s| (s, s.value.id())).collect();
        let set = |id: &str| given(id) || typed.iter().any(|(_, t)| t == id);
        let repeats = |id: &str| matches!(id, "command" | "command_ratio" | "command_key_pattern");
        for (s, id) in &typed {
            let flag = s.value.flag();
            if given(id) && !repeats(id) {
                return Err(PlanError::at(s.key, format!("'{}' and args both give {flag}: keep one", s.key)));
            }
            let Some(arg) = cmd.get_arguments().find(|a| a.get_id() == id.as_str()) else { continue };
            // clap states a conflict on either side of it (`--uri` names `--port`, not back).
            let other = cmd.get_arguments().find(|o| {
                set(o.get_id().as_str())
                    && (cmd.get_arg_conflicts_with(arg).iter().any(|c| c.get_id() == o.get_id())
                        || cmd.get_arg_conflicts_with(o).iter().any(|c| c.get_id() == arg.get_id()))
            });
            if let Some(other) = other {
                let msg = format!("{flag} ('{}') cannot be used with {}", s.key, shown_flag(other));
                return Err(PlanError::at(s.key, msg));
            }
        }
        // The needs clap states for the flags a file sets.
        for (id, needs) in [("arrival", "rate"), ("cert", "key"), ("key", "cert")] {
            if let Some((s, _)) = typed.iter().find(|(_, t)| t == id)
                && !set(needs)
            {
                let msg = format!("{} ('{}') needs --{}", s.value.flag(), s.key, needs.replace('_', "-"));
                return Err(PlanError::at(s.key, msg));
            }
        }
        Ok(())
    }
}

fn free_args(v: &Value) -> &[String] {
    match v {
        Value::Args(a) => a,
        _ => &[],
    }
}

fn shown_flag(arg: &Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), _) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => arg.get_id().to_string(),
    }
}
