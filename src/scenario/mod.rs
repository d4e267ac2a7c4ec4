//! Scenario files: a guide's whole procedure (fill, warm up, measure, step, search) in one
//! reviewed TOML file. Each phase compiles to the very argument vector respbench's own command
//! line takes, so the file can do whatever the flags can and the flags stay the one source of
//! truth; `cli::run_file` runs the vectors through the usual code paths, and `Step::plan` gives
//! a step's plan without running it.

pub mod save;
pub mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

pub use schema::{Kind, Phase, Price, Scenario};

/// A scenario file as read: its text (kept in the result, with its hash) and its contents.
pub struct Loaded {
    pub path: PathBuf,
    pub text: String,
    pub scenario: Scenario,
}

/// Which code path runs a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tool {
    /// respbench's own run (its flags).
    Native,
    /// `respbench fill` (a memory target).
    Fill,
    /// `respbench capacity`.
    Capacity,
}

/// One run of the engine (or one fill or search) that a phase compiles to.
#[derive(Debug, Clone)]
pub struct Step {
    /// Index of the phase in the file.
    pub phase: usize,
    /// The phase's name, with the step's rate or connections and the repetition when it has several.
    pub label: String,
    pub kind: Kind,
    pub tool: Tool,
    /// The flags, without the program name; a password from the environment is among them.
    pub args: Vec<String>,
    /// Where the phase starts in the file (byte offsets), for messages.
    pub span: std::ops::Range<usize>,
}

impl Step {
    /// The flags for people: the password masked.
    pub fn shown(&self) -> String {
        let mut out = Vec::new();
        let mut mask = false;
        for a in &self.args {
            out.push(if mask { "***".to_string() } else { shell_word(a) });
            mask = a == "-a";
        }
        out.join(" ")
    }
}

impl Step {
    /// The plan this step runs, as `respbench` with the step's flags would build it. A fill up
    /// to a memory target and a capacity search are several runs, not one plan.
    pub fn plan(&self) -> Result<(crate::config::Config, crate::cli::Output), String> {
        match self.tool {
            Tool::Native => {
                let argv: Vec<&str> =
                    std::iter::once("respbench").chain(self.args.iter().map(String::as_str)).collect();
                crate::cli::plan_flags(&argv)
            }
            Tool::Fill => Err("a fill up to a memory target is several runs, not one plan".into()),
            Tool::Capacity => Err("a capacity search is several runs, not one plan".into()),
        }
    }
}

fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/,=%@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What `respbench run`'s own flags change: the server, and the scale.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub scale: Option<f64>,
}

/// `FILE:LINE:COLUMN: key 'KEY': message` for a byte offset into the file.
pub fn locate(path: &Path, text: &str, offset: usize, msg: &str) -> String {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['))
        .or_else(|| {
            let t = line_text.trim();
            t.starts_with('[').then(|| t.trim_matches(['[', ']']).trim().to_string())
        });
    match key {
        Some(key) if !msg.contains(&format!("`{key}`")) => {
            format!("{}:{line}:{column}: key '{key}': {msg}", path.display())
        }
        _ => format!("{}:{line}:{column}: {msg}", path.display()),
    }
}

/// Reads and checks a scenario file; every error is one line naming the file, line, column and key.
pub fn load(path: &Path) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read scenario {}: {e}", path.display()))?;
    let scenario: Scenario = toml::from_str(&text).map_err(|e| {
        let msg = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => locate(path, &text, span.start, &msg),
            None => format!("{}: {msg}", path.display()),
        }
    })?;
    let loaded = Loaded { path: path.to_path_buf(), text, scenario };
    if loaded.scenario.phases.is_empty() {
        return Err(format!("{}: no [[phase]]: a scenario runs at least one phase", path.display()));
    }
    if let Some(price) = &loaded.scenario.price
        && !(price.get_ref().per_hour > 0.0 && price.get_ref().per_hour.is_finite())
    {
        let msg = format!("price per_hour {} must be a price above 0", price.get_ref().per_hour);
        return Err(loaded.at_key("per_hour", &msg));
    }
    if loaded.scenario.defaults.kind.is_some() {
        return Err(loaded.at_key("[defaults]", "'kind' belongs to a [[phase]], not to [defaults]"));
    }
    Ok(loaded)
}

impl Loaded {
    fn at<T>(&self, spanned: &Spanned<T>, msg: &str) -> String {
        locate(&self.path, &self.text, spanned.span().start, msg)
    }

    /// An error at the first line that starts with `header`.
    fn at_key(&self, header: &str, msg: &str) -> String {
        let offset = self.text.find(header).unwrap_or(0);
        locate(&self.path, &self.text, offset, msg)
    }

    /// Every step of every phase, in order.
    pub fn compile(&self, overrides: &Overrides) -> Result<Vec<Step>, String> {
        let scale = overrides.scale.or(self.scenario.scale).unwrap_or(1.0);
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(self.at_key("scale", &format!("scale {scale} must be a number above 0")));
        }
        let target = self.target_args(overrides)?;
        let mut steps = Vec::new();
        for (index, spanned) in self.scenario.phases.iter().enumerate() {
            let phase = merge(&self.scenario.defaults, spanned.get_ref());
            let Some(kind) = phase.kind else {
                return Err(self.at(spanned, "the phase has no 'kind' (fill, warmup, run, steps or capacity)"));
            };
            let name = phase.name.clone().unwrap_or_else(|| format!("{}-{}", kind_name(kind), index + 1));
            let compiled = Compiler { loaded: self, phase: &phase, scale }.phase(kind)?;
            let repeat = phase.repeat.unwrap_or(1);
            if repeat == 0 {
                return Err(self.at(spanned, "repeat 0: a phase runs at least once"));
            }
            for r in 0..repeat {
                for (suffix, tool, args) in &compiled {
                    let mut label = format!("{name}{suffix}");
                    if repeat > 1 {
                        label = format!("{label} #{}", r + 1);
                    }
                    let mut all = target.clone();
                    all.extend(args.iter().cloned());
                    steps.push(Step { phase: index, label, kind, tool: *tool, args: all, span: spanned.span() });
                }
            }
        }
        Ok(steps)
    }

    /// The connection flags, the password read from where the file points.
    fn target_args(&self, overrides: &Overrides) -> Result<Vec<String>, String> {
        let t = &self.scenario.target;
        let mut args = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            if let Some(v) = value {
                args.push(flag.to_string());
                args.push(v);
            }
        };
        match (&t.socket, overrides.host.is_some() || overrides.port.is_some()) {
            (Some(socket), false) => push("--socket", Some(socket.clone())),
            _ => {
                push("--host", overrides.host.clone().or_else(|| t.host.clone()));
                push("--port", overrides.port.or(t.port).map(|p| p.to_string()));
            }
        }
        push("--cacert", t.cacert.clone());
        push("--cert", t.cert.clone());
        push("--key", t.key.clone());
        push("--sni", t.sni.clone());
        push("--db", t.db.map(|d| d.to_string()));
        let password = match (&t.password_env, &t.password_file) {
            (Some(_), Some(file)) => return Err(self.at(file, "password_env and password_file: give one")),
            (Some(var), None) => Some(
                std::env::var(var.get_ref())
                    .map_err(|_| self.at(var, &format!("the environment variable '{}' is not set", var.get_ref())))?,
            ),
            (None, Some(file)) => {
                let text = std::fs::read_to_string(file.get_ref())
                    .map_err(|e| self.at(file, &format!("cannot read '{}': {e}", file.get_ref())))?;
                Some(text.lines().next().unwrap_or("").to_string())
            }
            (None, None) => None,
        };
        if t.user.is_some() && password.is_none() {
            return Err(self.at_key("user", "a user needs password_env or password_file"));
        }
        push("--user", t.user.clone());
        push("-a", password);
        for (on, flag) in
            [(t.tls, "--tls"), (t.tls_skip_verify, "--tls-skip-verify"), (t.cluster, "--cluster"), (t.resp3, "--resp3")]
        {
            if on {
                args.push(flag.to_string());
            }
        }
        Ok(args)
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Fill => "fill",
        Kind::Warmup => "warmup",
        Kind::Run => "run",
        Kind::Steps => "steps",
        Kind::Capacity => "capacity",
    }
}

/// The defaults with the phase's own settings over them; `args` add up.
fn merge(defaults: &Phase, phase: &Phase) -> Phase {
    macro_rules! pick {
        ($($f:ident),*) => { Phase { $($f: phase.$f.clone().or_else(|| defaults.$f.clone()),)* ..Phase::default() } };
    }
    let mut merged = pick!(
        kind,
        name,
        repeat,
        mix,
        keyspace,
        values,
        connections,
        threads,
        pipeline,
        requests,
        duration,
        rate,
        arrival,
        warmup,
        seed,
        runs,
        memory_target,
        memory,
        slo,
        start_rate,
        max_rate,
        precision
    );
    merged.rates = if phase.rates.is_empty() { defaults.rates.clone() } else { phase.rates.clone() };
    merged.connection_steps = if phase.connection_steps.is_empty() {
        defaults.connection_steps.clone()
    } else {
        phase.connection_steps.clone()
    };
    merged.args = defaults.args.iter().chain(&phase.args).cloned().collect();
    merged
}

/// One phase's flags (target aside).
struct Compiler<'a> {
    loaded: &'a Loaded,
    phase: &'a Phase,
    scale: f64,
}

type Compiled = Vec<(String, Tool, Vec<String>)>;

impl Compiler<'_> {
    fn phase(&self, kind: Kind) -> Result<Compiled, String> {
        let p = self.phase;
        let mut args = Vec::new();
        let flag = |args: &mut Vec<String>, name: &str, value: Option<String>| {
            if let Some(v) = value {
                args.push(name.to_string());
                args.push(v);
            }
        };
        let mix = self.lookup(&p.mix, &self.loaded.scenario.mixes, "mixes")?;
        if kind == Kind::Fill {
            // A fill writes the keyspace: the phase's, else the one its mix draws from.
            let keyspace = match (&p.keyspace, mix) {
                (Some(_), _) => self.lookup(&p.keyspace, &self.loaded.scenario.keyspaces, "keyspaces")?,
                (None, Some(m)) => {
                    let name = m.keyspace.as_ref().or_else(|| m.commands.iter().find_map(|c| c.keyspace.as_ref()));
                    self.lookup(&name.cloned(), &self.loaded.scenario.keyspaces, "keyspaces")?
                }
                (None, None) => None,
            };
            if let Some(ks) = keyspace {
                self.range_args(&mut args, ks);
            }
        } else if let Some(mix) = mix {
            self.mix_args(&mut args, mix)?;
        } else if let Some(ks) = self.lookup(&p.keyspace, &self.loaded.scenario.keyspaces, "keyspaces")? {
            self.range_args(&mut args, ks);
            flag(&mut args, "--key-pattern", ks.distribution.map(|d| d.letter().to_string()));
        }
        if let Some(v) = self.lookup(&p.values, &self.loaded.scenario.values, "values")? {
            flag(&mut args, "--data-size", v.size.clone());
            flag(&mut args, "--data-size-range", v.range.clone());
            flag(&mut args, "--data-size-list", v.list.clone());
        }
        flag(&mut args, "--connections", p.connections.map(|n| n.to_string()));
        flag(&mut args, "--threads", p.threads.map(|n| n.to_string()));
        flag(&mut args, "--pipeline", p.pipeline.map(|n| n.to_string()));
        flag(&mut args, "--seed", p.seed.map(|n| n.to_string()));
        if kind == Kind::Fill {
            args.extend(p.args.iter().cloned());
            return Ok(match &p.memory_target {
                Some(target) => {
                    flag(&mut args, "--memory-target", Some(self.scaled_size(target)));
                    flag(&mut args, "--memory", p.memory.as_deref().map(|m| self.scaled_size(m)));
                    vec![(String::new(), Tool::Fill, args)]
                }
                None => {
                    args.extend(["--requests".into(), "allkeys".into()]);
                    vec![(String::new(), Tool::Native, args)]
                }
            });
        }
        let requests = match &p.requests {
            Some(n) if n != "allkeys" => Some(self.scaled_count(n)?),
            other => other.clone(),
        };
        flag(&mut args, "--requests", requests);
        flag(&mut args, "--duration", p.duration.as_deref().map(|d| self.scaled_duration(d)).transpose()?);
        flag(&mut args, "--arrival", p.arrival.clone());
        flag(&mut args, "--warmup", p.warmup.as_deref().map(|d| self.scaled_duration(d)).transpose()?);
        flag(&mut args, "--runs", p.runs.map(|n| n.to_string()));
        match kind {
            Kind::Capacity => {
                flag(&mut args, "--slo", p.slo.clone());
                flag(&mut args, "--start-rate", p.start_rate.map(|n| n.to_string()));
                flag(&mut args, "--max-rate", p.max_rate.map(|n| n.to_string()));
                flag(&mut args, "--precision", p.precision.map(|n| n.to_string()));
                args.extend(p.args.iter().cloned());
                Ok(vec![(String::new(), Tool::Capacity, args)])
            }
            Kind::Steps => {
                let mut out = Vec::new();
                for rate in &p.rates {
                    let mut a = args.clone();
                    a.extend(["--rate".into(), rate.to_string()]);
                    a.extend(p.args.iter().cloned());
                    out.push((format!(" rate {rate}"), Tool::Native, a));
                }
                for c in &p.connection_steps {
                    let mut a = args.clone();
                    flag(&mut a, "--rate", p.rate.map(|n| n.to_string()));
                    a.extend(["--connections".into(), c.to_string()]);
                    a.extend(p.args.iter().cloned());
                    out.push((format!(" c {c}"), Tool::Native, a));
                }
                if out.is_empty() {
                    return Err(self.here("a steps phase needs 'rates' or 'connection_steps'"));
                }
                Ok(out)
            }
            _ => {
                flag(&mut args, "--rate", p.rate.map(|n| n.to_string()));
                args.extend(p.args.iter().cloned());
                Ok(vec![(String::new(), Tool::Native, args)])
            }
        }
    }

    /// An error at the phase being compiled.
    fn here(&self, msg: &str) -> String {
        let name = self.phase.name.as_deref().unwrap_or("");
        let offset = self.loaded.text.find(&format!("name = \"{name}\"")).filter(|_| !name.is_empty());
        match offset {
            Some(o) => locate(&self.loaded.path, &self.loaded.text, o, msg),
            None => format!("{}: phase: {msg}", self.loaded.path.display()),
        }
    }

    fn lookup<'t, T>(
        &self,
        name: &Option<Spanned<String>>,
        table: &'t std::collections::BTreeMap<String, T>,
        what: &str,
    ) -> Result<Option<&'t T>, String> {
        let Some(name) = name else { return Ok(None) };
        match table.get(name.get_ref()) {
            Some(t) => Ok(Some(t)),
            None => {
                let known: Vec<&str> = table.keys().map(String::as_str).collect();
                let known = if known.is_empty() {
                    "none is defined".to_string()
                } else {
                    format!("defined: {}", known.join(", "))
                };
                Err(self.loaded.at(name, &format!("'{}' is not defined under [{what}] ({known})", name.get_ref())))
            }
        }
    }

    fn range_args(&self, args: &mut Vec<String>, ks: &schema::Keyspace) {
        let mut push = |f: &str, v: Option<String>| {
            if let Some(v) = v {
                args.extend([f.to_string(), v]);
            }
        };
        let min = ks.min.unwrap_or(0);
        push("--key-prefix", ks.prefix.clone());
        push("--key-min", ks.min.map(|n| self.scaled_key(n).to_string()));
        push("--key-max", ks.max.map(|max| self.scaled_max(min, max).to_string()));
        let scale = self.scale;
        push(
            "--key-median",
            ks.median.map(|m| if scale == 1.0 { m.to_string() } else { (m * scale).round().to_string() }),
        );
        push(
            "--key-stddev",
            ks.stddev.map(|s| if scale == 1.0 { s.to_string() } else { (s * scale).round().max(1.0).to_string() }),
        );
        push("--zipf-exponent", ks.zipf_exponent.map(|z| z.to_string()));
    }

    fn mix_args(&self, args: &mut Vec<String>, mix: &schema::Mix) -> Result<(), String> {
        let keyspaces = &self.loaded.scenario.keyspaces;
        if mix.commands.is_empty() {
            let (set, get) = (mix.set.unwrap_or(0), mix.get.unwrap_or(0));
            if set + get == 0 {
                return Err(self.here("a mix needs 'set' and 'get' weights or 'commands'"));
            }
            args.extend(["--ratio".into(), format!("{set}:{get}")]);
            if let Some(ks) = self.lookup(&mix.keyspace, keyspaces, "keyspaces")? {
                self.range_args(args, ks);
                if let Some(d) = ks.distribution {
                    args.extend(["--key-pattern".into(), d.letter().to_string()]);
                }
            }
            return Ok(());
        }
        if mix.set.is_some() || mix.get.is_some() {
            return Err(self.here("a mix has 'set'/'get' weights or 'commands', not both"));
        }
        // One key range per run: the commands' keyspaces may differ only in distribution.
        let mut range: Option<(&Spanned<String>, &schema::Keyspace)> = None;
        for c in &mix.commands {
            let name = c.keyspace.as_ref().or(mix.keyspace.as_ref());
            args.extend(["--command".into(), c.command.clone()]);
            args.extend(["--command-ratio".into(), c.weight.unwrap_or(1).to_string()]);
            let Some(name) = name else { continue };
            let ks = self.lookup(&Some(name.clone()), keyspaces, "keyspaces")?.expect("looked up");
            let letter = ks.distribution.unwrap_or(schema::Distribution::Random).letter();
            args.extend(["--command-key-pattern".into(), letter.to_string()]);
            match range {
                None => range = Some((name, ks)),
                Some((first, r)) if (&r.prefix, r.min, r.max) != (&ks.prefix, ks.min, ks.max) => {
                    return Err(self.loaded.at(
                        name,
                        &format!(
                            "keyspaces '{}' and '{}' have different ranges: one run draws from one key range",
                            first.get_ref(),
                            name.get_ref()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some((_, ks)) = range {
            self.range_args(args, ks);
        }
        Ok(())
    }

    /// A key number scaled: a range in the middle of a large one (a guide's hot middle) stays
    /// in the middle of the scaled one.
    fn scaled_key(&self, n: u64) -> u64 {
        if self.scale == 1.0 { n } else { (n as f64 * self.scale).round() as u64 }
    }

    /// The last key of a range scaled: from the scaled first key, the range's count scaled.
    fn scaled_max(&self, min: u64, max: u64) -> u64 {
        if self.scale == 1.0 {
            return max;
        }
        let keys = ((max.saturating_sub(min) + 1) as f64 * self.scale).round().max(1.0) as u64;
        self.scaled_key(min) + keys - 1
    }

    fn scaled_count(&self, n: &str) -> Result<String, String> {
        let count = crate::cli::parse::count(n).map_err(|e| self.here(&format!("requests: {e}")))?;
        Ok(if self.scale == 1.0 {
            n.to_string()
        } else {
            ((count as f64 * self.scale).round().max(1.0) as u64).to_string()
        })
    }

    fn scaled_duration(&self, d: &str) -> Result<String, String> {
        let parsed = crate::cli::parse::duration(d).map_err(|e| self.here(&format!("'{d}': {e}")))?;
        if self.scale == 1.0 {
            return Ok(d.to_string());
        }
        let scaled = Duration::from_secs_f64(parsed.as_secs_f64() * self.scale).max(Duration::from_millis(1));
        Ok(format!("{}ms", scaled.as_millis()))
    }

    /// A size ("2gb") scaled; a percentage stays.
    fn scaled_size(&self, s: &str) -> String {
        if self.scale == 1.0 || s.trim().ends_with('%') {
            return s.to_string();
        }
        match crate::cli::memory_size(s) {
            Ok(bytes) => ((bytes as f64 * self.scale).round().max(1.0) as u64).to_string(),
            Err(_) => s.to_string(),
        }
    }
}

#[cfg(test)]
// unsafe: one test sets an environment variable (set_var is unsafe in edition 2024).
#[allow(unsafe_code)]
mod tests;
