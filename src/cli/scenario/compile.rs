//! What a phase compiles to: its steps (a fill, a run, one run per rate of a staircase, a
//! search), each a list of typed settings with the keys they came from. Scaling (`scale`)
//! happens here, on the typed values.

use std::time::Duration;

use clap::ValueEnum;
use toml::Spanned;

use super::keys;
use super::plan::{Setting, Value};
use super::schema::{self, Kind, Phase};
use super::{Loaded, Overrides, Step, Tool, error::ScenarioError, kind_name, locate};
use crate::config::parse;

impl Loaded {
    pub(super) fn at<T>(&self, spanned: &Spanned<T>, msg: &str) -> String {
        locate(&self.path, &self.text, spanned.span().start, msg)
    }

    /// An error at the first line that starts with `header`.
    pub(super) fn at_key(&self, header: &str, msg: &str) -> String {
        let offset = self.text.find(header).unwrap_or(0);
        locate(&self.path, &self.text, offset, msg)
    }

    /// Every step of every phase, in order.
    pub fn compile(&self, overrides: &Overrides) -> Result<Vec<Step>, ScenarioError> {
        let scale = overrides.scale.or(self.scenario.scale).unwrap_or(1.0);
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(self.at_key("scale", &format!("scale {scale} must be a number above 0")).into());
        }
        let target = self.target_settings(overrides)?;
        let mut steps = Vec::new();
        for (index, spanned) in self.scenario.phases.iter().enumerate() {
            let phase = merge(&self.scenario.defaults, spanned.get_ref());
            let Some(kind) = phase.kind else {
                return Err(self.at(spanned, "the phase has no 'kind' (fill, warmup, run, steps or capacity)").into());
            };
            let name = phase.name.clone().unwrap_or_else(|| format!("{}-{}", kind_name(kind), index + 1));
            let compiler = Compiler { loaded: self, phase: &phase, scale };
            let compiled = compiler.phase(kind)?;
            let roles = compiler.roles(kind, &target)?;
            let repeat = phase.repeat.unwrap_or(1);
            if repeat == 0 {
                return Err(self.at(spanned, "repeat 0: a phase runs at least once").into());
            }
            for r in 0..repeat {
                for (suffix, tool, settings) in &compiled {
                    let mut label = format!("{name}{suffix}");
                    if repeat > 1 {
                        label = format!("{label} #{}", r + 1);
                    }
                    let mut all = target.clone();
                    all.extend(settings.iter().cloned());
                    let roles = roles.clone();
                    steps.push(Step {
                        phase: index,
                        label,
                        kind,
                        tool: *tool,
                        settings: all,
                        span: spanned.span(),
                        roles,
                    });
                }
            }
        }
        Ok(steps)
    }

    /// The connection settings, the password read from where the file points.
    fn target_settings(&self, overrides: &Overrides) -> Result<Vec<Setting>, ScenarioError> {
        let t = &self.scenario.target;
        let mut out = Vec::new();
        let mut push = |key: &'static str, text: Option<String>| {
            if let Some(text) = text {
                out.push(Setting::new("target", key, text));
            }
        };
        match (&t.socket, overrides.host.is_some() || overrides.port.is_some()) {
            (Some(socket), false) => push("socket", Some(socket.clone())),
            _ => {
                push("host", overrides.host.clone().or_else(|| t.host.clone()));
                push("port", overrides.port.or(t.port).map(|p| p.to_string()));
            }
        }
        push("cacert", t.cacert.clone());
        push("cert", t.cert.clone());
        push("key", t.key.clone());
        push("sni", t.sni.clone());
        push("db", t.db.map(|n| n.to_string()));
        let password = match (&t.password_env, &t.password_file) {
            (Some(_), Some(file)) => return Err(self.at(file, "password_env and password_file: give one").into()),
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
            return Err(self.at_key("user", "a user needs password_env or password_file").into());
        }
        push("user", t.user.clone());
        if let Some(password) = password {
            out.push(Setting { key: "password_env", text: String::new(), value: Value::Password(password) });
        }
        let switches =
            [(t.tls, "tls"), (t.tls_skip_verify, "tls_skip_verify"), (t.cluster, "cluster"), (t.resp3, "resp3")];
        for (_, key) in switches.into_iter().filter(|(on, _)| *on) {
            out.push(Setting::switch("target", key));
        }
        Ok(out)
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
    merged.roles = if phase.roles.is_empty() { defaults.roles.clone() } else { phase.roles.clone() };
    merged
}

/// One phase's settings (target aside).
pub(super) struct Compiler<'a> {
    pub(super) loaded: &'a Loaded,
    pub(super) phase: &'a Phase,
    pub(super) scale: f64,
}

pub(super) type Compiled = Vec<(String, Tool, Vec<Setting>)>;

impl Setting {
    /// The flag the file's `key` in `table` stands for (see `keys`), set to `text`.
    pub(super) fn new(table: &str, key: &'static str, text: impl ToString) -> Setting {
        Setting { key, text: text.to_string(), value: Value::Flag(keys::flag(table, key)) }
    }

    /// The flag without a value the file's `key` in `table` stands for.
    pub(super) fn switch(table: &str, key: &'static str) -> Setting {
        Setting { key, text: String::new(), value: Value::Switch(keys::flag(table, key)) }
    }
}

impl Compiler<'_> {
    pub(super) fn phase(&self, kind: Kind) -> Result<Compiled, ScenarioError> {
        let p = self.phase;
        let mut out = Vec::new();
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
                self.range(&mut out, ks);
            }
        } else if let Some(mix) = mix {
            self.mix(&mut out, mix)?;
        } else if let Some(ks) = self.lookup(&p.keyspace, &self.loaded.scenario.keyspaces, "keyspaces")? {
            self.range(&mut out, ks);
            if let Some(d) = ks.distribution {
                out.push(Setting::new("keyspaces", "distribution", d.letter()));
            }
        }
        self.values(&mut out)?;
        let counts = [("connections", p.connections), ("threads", p.threads), ("pipeline", p.pipeline)];
        for (key, n) in counts {
            if let Some(n) = n {
                out.push(Setting::new("phase", key, n));
            }
        }
        if let Some(seed) = p.seed {
            out.push(Setting::new("phase", "seed", seed));
        }
        let free = Setting { key: "args", text: String::new(), value: Value::Args(p.args.clone()) };
        if kind == Kind::Fill {
            out.push(free);
            return self.fill(out);
        }
        self.load(&mut out)?;
        match kind {
            Kind::Capacity => {
                self.search(&mut out)?;
                out.push(free);
                Ok(vec![(String::new(), Tool::Capacity, out)])
            }
            Kind::Steps => self.steps(&out, free),
            _ => {
                if let Some(rate) = p.rate {
                    out.push(Setting::new("phase", "rate", rate));
                }
                out.push(free);
                Ok(vec![(String::new(), Tool::Native, out)])
            }
        }
    }

    /// A fill: every key of the range once, or (a memory target) `respbench fill`.
    fn fill(&self, mut out: Vec<Setting>) -> Result<Compiled, ScenarioError> {
        let p = self.phase;
        let Some(target) = &p.memory_target else {
            out.push(Setting::new("phase", "kind", "allkeys"));
            return Ok(vec![(String::new(), Tool::Native, out)]);
        };
        let (text, bytes) = self.scaled_size(target);
        if bytes.is_none() {
            crate::cli::fill::memory_target(&text).map_err(|e| self.here(&format!("memory_target: {e}")))?;
        }
        out.push(Setting::new("phase", "memory_target", text));
        if let Some(memory) = &p.memory {
            let (text, bytes) = self.scaled_size(memory);
            if bytes.is_none() {
                parse::memory_size(&text).map_err(|e| self.here(&format!("memory: {e}")))?;
            }
            out.push(Setting::new("phase", "memory", text));
        }
        Ok(vec![(String::new(), Tool::Fill, out)])
    }

    /// How long or how much a run measures, and how its requests arrive.
    fn load(&self, out: &mut Vec<Setting>) -> Result<(), ScenarioError> {
        let p = self.phase;
        match &p.requests {
            Some(n) if n != "allkeys" => {
                let count = self.scaled_count(n)?;
                out.push(Setting::new("phase", "requests", count));
            }
            Some(n) => out.push(Setting::new("phase", "requests", n)),
            None => {}
        }
        if let Some(d) = &p.duration {
            let text = self.scaled_duration(d)?;
            out.push(Setting::new("phase", "duration", text));
        }
        if let Some(a) = &p.arrival {
            crate::cli::options::Arrival::from_str(a, false).map_err(|e| self.here(&format!("arrival: {e}")))?;
            out.push(Setting::new("phase", "arrival", a));
        }
        if let Some(w) = &p.warmup {
            let text = self.scaled_duration(w)?;
            out.push(Setting::new("phase", "warmup", text));
        }
        if let Some(runs) = p.runs {
            out.push(Setting::new("phase", "runs", runs));
        }
        Ok(())
    }

    /// A capacity search's objective and bounds.
    fn search(&self, out: &mut Vec<Setting>) -> Result<(), ScenarioError> {
        let p = self.phase;
        if let Some(slo) = &p.slo {
            crate::cli::capacity::slo(slo).map_err(|e| self.here(&format!("slo: {e}")))?;
            out.push(Setting::new("phase", "slo", slo));
        }
        if let Some(n) = p.start_rate {
            out.push(Setting::new("phase", "start_rate", n));
        }
        if let Some(n) = p.max_rate {
            out.push(Setting::new("phase", "max_rate", n));
        }
        if let Some(x) = p.precision {
            out.push(Setting::new("phase", "precision", x));
        }
        Ok(())
    }

    /// A staircase: one run per rate, or per connection count.
    fn steps(&self, base: &[Setting], free: Setting) -> Result<Compiled, ScenarioError> {
        let p = self.phase;
        let mut out = Vec::new();
        for rate in &p.rates {
            let mut s = base.to_vec();
            s.push(Setting::new("phase", "rates", rate));
            s.push(free.clone());
            out.push((format!(" rate {rate}"), Tool::Native, s));
        }
        for c in &p.connection_steps {
            let mut s = base.to_vec();
            if let Some(rate) = p.rate {
                s.push(Setting::new("phase", "rate", rate));
            }
            s.push(Setting::new("phase", "connection_steps", c));
            s.push(free.clone());
            out.push((format!(" c {c}"), Tool::Native, s));
        }
        if out.is_empty() {
            return Err(self.here("a steps phase needs 'rates' or 'connection_steps'").into());
        }
        Ok(out)
    }

    /// The phase's value sizes.
    fn values(&self, out: &mut Vec<Setting>) -> Result<(), ScenarioError> {
        let Some(v) = self.lookup(&self.phase.values, &self.loaded.scenario.values, "values")? else { return Ok(()) };
        let name = self.phase.values.as_ref().expect("looked up");
        let bad = |key: &str, e: parse::InvalidValue| self.loaded.at(name, &format!("values {key}: {e}"));
        if let Some(size) = &v.size {
            parse::size(size).map_err(|e| bad("size", e))?;
            out.push(Setting::new("values", "size", size));
        }
        if let Some(range) = &v.range {
            parse::range(range).map_err(|e| bad("range", e))?;
            out.push(Setting::new("values", "range", range));
        }
        if let Some(list) = &v.list {
            parse::size_list(list).map_err(|e| bad("list", e))?;
            out.push(Setting::new("values", "list", list));
        }
        Ok(())
    }

    /// An error at the phase being compiled.
    pub(super) fn here(&self, msg: &str) -> String {
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
    ) -> Result<Option<&'t T>, ScenarioError> {
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
                Err(self
                    .loaded
                    .at(name, &format!("'{}' is not defined under [{what}] ({known})", name.get_ref()))
                    .into())
            }
        }
    }

    /// A keyspace's range, scaled.
    fn range(&self, out: &mut Vec<Setting>, ks: &schema::Keyspace) {
        let scale = self.scale;
        let min = ks.min.unwrap_or(0);
        if let Some(prefix) = &ks.prefix {
            out.push(Setting::new("keyspaces", "prefix", prefix));
        }
        if let Some(n) = ks.min {
            out.push(Setting::new("keyspaces", "min", self.scaled_key(n)));
        }
        if let Some(max) = ks.max {
            out.push(Setting::new("keyspaces", "max", self.scaled_max(min, max)));
        }
        if let Some(m) = ks.median {
            let m = if scale == 1.0 { m } else { (m * scale).round() };
            out.push(Setting::new("keyspaces", "median", m));
        }
        if let Some(s) = ks.stddev {
            let s = if scale == 1.0 { s } else { (s * scale).round().max(1.0) };
            out.push(Setting::new("keyspaces", "stddev", s));
        }
        if let Some(z) = ks.zipf_exponent {
            out.push(Setting::new("keyspaces", "zipf_exponent", z));
        }
    }

    fn mix(&self, out: &mut Vec<Setting>, mix: &schema::Mix) -> Result<(), ScenarioError> {
        let keyspaces = &self.loaded.scenario.keyspaces;
        if mix.commands.is_empty() {
            let (set, get) = (mix.set.unwrap_or(0), mix.get.unwrap_or(0));
            if set + get == 0 {
                return Err(self.here("a mix needs 'set' and 'get' weights or 'commands'").into());
            }
            out.push(Setting::new("mixes", "set", format!("{set}:{get}")));
            if let Some(ks) = self.lookup(&mix.keyspace, keyspaces, "keyspaces")? {
                self.range(out, ks);
                if let Some(d) = ks.distribution {
                    out.push(Setting::new("keyspaces", "distribution", d.letter()));
                }
            }
            return Ok(());
        }
        if mix.set.is_some() || mix.get.is_some() {
            return Err(self.here("a mix has 'set'/'get' weights or 'commands', not both").into());
        }
        // One key range per run: the commands' keyspaces may differ only in distribution.
        let mut range: Option<(&Spanned<String>, &schema::Keyspace)> = None;
        for c in &mix.commands {
            let name = c.keyspace.as_ref().or(mix.keyspace.as_ref());
            out.push(Setting::new("commands", "command", &c.command));
            out.push(Setting::new("commands", "weight", c.weight.unwrap_or(1)));
            let Some(name) = name else { continue };
            let ks = self.lookup(&Some(name.clone()), keyspaces, "keyspaces")?.expect("looked up");
            let letter = ks.distribution.unwrap_or(schema::Distribution::Random).letter();
            out.push(Setting::new("commands", "distribution", letter));
            match range {
                None => range = Some((name, ks)),
                Some((first, r)) if (&r.prefix, r.min, r.max) != (&ks.prefix, ks.min, ks.max) => {
                    return Err(self
                        .loaded
                        .at(
                            name,
                            &format!(
                                "keyspaces '{}' and '{}' have different ranges: one run draws from one key range",
                                first.get_ref(),
                                name.get_ref()
                            ),
                        )
                        .into());
                }
                Some(_) => {}
            }
        }
        if let Some((_, ks)) = range {
            self.range(out, ks);
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

    /// A request count scaled, as shown (the file's text when not scaled).
    fn scaled_count(&self, n: &str) -> Result<String, ScenarioError> {
        let count = parse::count(n).map_err(|e| self.here(&format!("requests: {e}")))?;
        Ok(if self.scale == 1.0 {
            n.to_string()
        } else {
            ((count as f64 * self.scale).round().max(1.0) as u64).to_string()
        })
    }

    /// A duration scaled, as shown (checked, and the file's text when not scaled).
    fn scaled_duration(&self, d: &str) -> Result<String, ScenarioError> {
        let parsed = parse::duration(d).map_err(|e| self.here(&format!("'{d}': {e}")))?;
        if self.scale == 1.0 {
            return Ok(d.to_string());
        }
        let scaled = Duration::from_secs_f64(parsed.as_secs_f64() * self.scale).max(Duration::from_millis(1));
        // Shown and run in whole milliseconds, as a scaled step always was.
        Ok(format!("{}ms", scaled.as_millis()))
    }

    /// A size ("2gb") scaled, as shown, and its bytes when it was scaled; a percentage stays.
    fn scaled_size(&self, s: &str) -> (String, Option<u64>) {
        if self.scale == 1.0 || s.trim().ends_with('%') {
            return (s.to_string(), None);
        }
        match parse::memory_size(s) {
            Ok(bytes) => {
                let scaled = (bytes as f64 * self.scale).round().max(1.0) as u64;
                (scaled.to_string(), Some(scaled))
            }
            Err(_) => (s.to_string(), None),
        }
    }
}
