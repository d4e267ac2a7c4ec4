//! The flags that tie a run to scenario files and dashboards, kept out of `options/` (already
//! long): `--save-scenario` writes the command line as a scenario file, `--metrics-listen`
//! serves live OpenMetrics during the run and `--metrics-push` pushes them to a Pushgateway;
//! and the record of which flags the user gave, which
//! the one parse of a command line keeps for `--save-scenario`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use super::error::ScenarioError;
use crate::cli::run::RunContext;
use crate::config::parse::InvalidValue;
use crate::report::live::metrics::Live;
use crate::report::live::push::{self, PushError, PushLabel, PushTarget, PushUrl};
use crate::report::live::shape::{self, Buckets, MetricsLabel, Names, Shape};

#[derive(Debug, Clone, Default, Args)]
pub struct ScenarioFlags {
    /// Write this command line as a scenario file (respbench run FILE.toml runs it again).
    #[arg(long, value_name = "FILE.toml", help_heading = "Output")]
    pub save_scenario: Option<PathBuf>,
    /// Serve live OpenMetrics/Prometheus text at http://ADDR/metrics during the run (port 0: any
    /// free port, printed on stderr).
    #[arg(long, value_name = "ADDR:PORT", value_parser = socket_addr, help_heading = "Output")]
    pub metrics_listen: Option<SocketAddr>,
    /// After the run, keep serving the final metrics until one scrape has read them, at most
    /// this long (a dashboard's last scrape then sees the end).
    #[arg(long, value_name = "D", value_parser = crate::config::parse::duration, requires = "metrics_listen", help_heading = "Output")]
    pub metrics_linger: Option<std::time::Duration>,
    /// A label on every sample of the live metrics, such as run=baseline (repeatable, at most 16).
    #[arg(long, value_name = "NAME=VALUE", value_parser = shape::label, help_heading = "Output")]
    pub metrics_label: Vec<MetricsLabel>,
    /// The latency histograms' bucket bounds in seconds, ascending, such as 0.0005,0.001,0.01
    /// [default: 10 µs to 10 s, 19 bounds].
    #[arg(long, value_name = "LIST", value_parser = shape::buckets, help_heading = "Output")]
    pub metrics_buckets: Option<Buckets>,
    #[command(flatten)]
    pub push: PushFlags,
    /// Whose names the live metrics carry (not a flag: memtier's command line sets memtier's).
    #[arg(skip)]
    pub metrics_names: Names,
    /// The flags the user gave, as written (not a flag: the parse fills it).
    #[arg(skip)]
    pub given: Vec<Given>,
}

/// `--metrics-push` and its group: the live metrics pushed to a Prometheus Pushgateway, for
/// batch jobs no Prometheus scrapes in time (`respbench run` takes them too).
#[derive(Debug, Clone, Default, Args)]
pub struct PushFlags {
    /// Push the live metrics to the Prometheus Pushgateway at URL (http://HOST:PORT) after every
    /// interval and at the end, replacing the group job/JOB[/NAME/VALUE...]; off the run's threads.
    #[arg(long, value_name = "URL", value_parser = push::url, help_heading = "Output")]
    pub metrics_push: Option<PushUrl>,
    /// The job label the pushes are grouped under [default: respbench].
    #[arg(long, value_name = "JOB", requires = "metrics_push", help_heading = "Output")]
    pub metrics_push_job: Option<String>,
    /// A grouping label of the pushes beside the job, such as instance=$HOSTNAME (repeatable; %t
    /// in VALUE is the shard's index).
    #[arg(long, value_name = "NAME=VALUE", value_parser = push::label, requires = "metrics_push", help_heading = "Output")]
    pub metrics_push_label: Vec<PushLabel>,
}

impl PushFlags {
    /// Where the pushes go, if anywhere.
    pub fn target(&self) -> Option<PushTarget> {
        let url = self.metrics_push.clone()?;
        Some(PushTarget::new(url, self.metrics_push_job.as_deref(), &self.metrics_push_label))
    }

    /// `%t` in the grouping labels' values becomes the shard's `index`.
    pub fn name_labels(&mut self, index: &str) {
        for label in &mut self.metrics_push_label {
            label.value = label.value.replace("%t", index);
        }
    }
}

/// A flag the user gave: clap's id, the name to write it by, and its values as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Given {
    pub id: String,
    pub flag: String,
    pub values: Vec<String>,
}

/// Records that a front-end's typed plan sets `flag` (a long name, `--x`, of `cmd`: respbench's
/// own flags) to `values` as they
/// would be written, replacing an earlier record of it: what `--save-scenario` writes of a plan
/// no one typed in respbench's words. clap's table only names the flag's id; nothing is parsed.
pub fn record(given: &mut Vec<Given>, cmd: &clap::Command, flag: &str, values: Vec<String>) {
    let long = flag.trim_start_matches('-');
    let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(long)) else { return };
    let id = arg.get_id().as_str();
    match given.iter_mut().find(|g| g.id == id) {
        Some(g) if arg.get_action().takes_values() && matches!(arg.get_action(), clap::ArgAction::Append) => {
            g.values.extend(values)
        }
        Some(g) => g.values = values,
        None => given.push(Given { id: id.to_string(), flag: flag.to_string(), values }),
    }
}

/// The flags a parse found on the command line, in the order clap declares them.
pub fn given(cmd: &clap::Command, matches: &clap::ArgMatches) -> Vec<Given> {
    let mut out = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let flag = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => continue,
        };
        let values = if arg.get_action().takes_values() {
            matches.get_raw(id).map(|v| v.map(|s| s.to_string_lossy().into_owned()).collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        out.push(Given { id: id.to_string(), flag, values });
    }
    out
}

impl ScenarioFlags {
    /// `respbench fill` and `capacity` take the run's flags but not `--save-scenario`: a
    /// one-line refusal.
    pub fn refuse_in(&self, subcommand: &str) -> Result<(), ScenarioError> {
        if self.save_scenario.is_some() {
            return Err(format!(
                "--save-scenario is not available with respbench {subcommand}: write a {subcommand} phase in a scenario file"
            ).into());
        }
        Ok(())
    }

    /// `respbench fill` and `capacity`: serves `--metrics-listen` (and pushes `--metrics-push`),
    /// which every engine run of the fill or search feeds, unless the context already hands them
    /// an endpoint (a scenario's). The endpoint it started, if any.
    pub fn serve_metrics(&self, cx: &RunContext<'_>) -> Result<Option<Arc<Live>>, PushError> {
        match cx.metrics {
            None => self.open_metrics(1),
            Some(_) => Ok(None),
        }
    }

    /// This command line's own live metrics: `--metrics-listen`, `--metrics-push`, or both, over
    /// `runs` runs.
    pub fn open_metrics(&self, runs: usize) -> Result<Option<Arc<Live>>, PushError> {
        push::open(self.metrics_listen, self.push.target(), self.metrics_shape(runs))
    }

    /// How the live metrics read: `--metrics-label`, `--metrics-buckets`, whose names.
    pub fn metrics_shape(&self, runs: usize) -> Shape {
        let mut shape =
            Shape { names: self.metrics_names, labels: self.metrics_label.clone(), runs, ..Shape::default() };
        if let Some(Buckets(bounds)) = &self.metrics_buckets {
            shape.buckets.clone_from(bounds);
        }
        shape
    }

    /// The end of a fill or a search: the final values of the endpoint it started, served until
    /// read (`--metrics-linger`).
    pub fn finish_metrics(&self, live: Option<Arc<Live>>) {
        if let Some(live) = live {
            live.finish();
            live.linger(self.metrics_linger.unwrap_or_default());
        }
    }
}

pub(crate) fn socket_addr(s: &str) -> Result<SocketAddr, InvalidValue> {
    s.parse().map_err(|_| InvalidValue(format!("expected an address and port such as 127.0.0.1:9100, got '{s}'")))
}
