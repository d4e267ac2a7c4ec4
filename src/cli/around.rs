//! What every run that writes respbench's or memtier's outputs opens around it and closes after
//! it: the StatsD sender (`--statsd-host`), the metrics endpoint (the context's, a scenario's,
//! else its own `--metrics-listen` and `--metrics-push`) and the journal beside its first output file. One place, so
//! that respbench's own run and memtier's cannot drift apart.

use std::process::ExitCode;
use std::sync::Arc;

use super::options::Output;
use super::run::RunContext;
use super::usage::{EXIT_FAILURE, usage_error};
use crate::report::live::journal::Journal;
use crate::report::live::metrics::Live;
use crate::report::live::sink::Sink;
use crate::report::live::statsd::Statsd;

pub(crate) struct Around {
    statsd: Option<Statsd>,
    metrics: Option<Arc<Live>>,
    /// The endpoint is this run's own (`--metrics-listen`, `--metrics-push`): the run ends it
    /// (the final push) and lingers.
    own_metrics: bool,
    journal: Option<Journal>,
}

impl Around {
    /// Opens what `output` asks for; `Err` carries the exit code after saying why.
    pub(crate) fn open(output: &Output, cx: &RunContext<'_>) -> Result<Around, ExitCode> {
        let statsd = match output.statsd.as_ref().map(|o| Statsd::open(o, &output.percentiles)) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => return Err(usage_error(&e)),
        };
        let (metrics, own_metrics) = match &cx.metrics {
            Some(live) => (Some(Arc::clone(live)), false),
            None => match output.scenario.open_metrics(output.runs) {
                Ok(live) => (live, true),
                Err(e) => {
                    eprintln!("respbench: {e}");
                    return Err(ExitCode::from(EXIT_FAILURE));
                }
            },
        };
        let journal = super::recover::open(output);
        Ok(Around { statsd, metrics, own_metrics, journal })
    }

    /// The context the run is handed: `cx` feeding this run's metrics endpoint.
    pub(crate) fn context<'a>(&self, cx: &RunContext<'a>) -> RunContext<'a> {
        cx.with_metrics(self.metrics.clone())
    }

    /// The interval log's file name, when the run writes one beside its `--json` file (the
    /// journal's interval log: the journal sits beside the first output, which is `--json`
    /// when there is one).
    pub(crate) fn interval_log(&self, output: &Output) -> Option<String> {
        let journal = self.journal.as_ref()?;
        (journal.path() == Journal::path_for(output.json.as_ref()?)).then(|| journal.log_name())
    }

    /// The live outputs among them, as sinks: the journal, then StatsD.
    pub(crate) fn sinks(&mut self) -> Vec<&mut dyn Sink> {
        let mut sinks: Vec<&mut dyn Sink> = Vec::new();
        if let Some(j) = self.journal.as_mut() {
            sinks.push(j);
        }
        if let Some(s) = self.statsd.as_mut() {
            sinks.push(s);
        }
        sinks
    }

    /// After the run: once its files are `written` the journal goes (if they could not be, it
    /// stays, and says so) and its own metrics endpoint ends, lingering as asked.
    pub(crate) fn close(self, output: &Output, written: bool) {
        super::recover::close(self.journal, output, written);
        if let (Some(m), true, true) = (&self.metrics, self.own_metrics, written) {
            m.finish();
            m.linger(output.scenario.metrics_linger.unwrap_or_default());
        }
    }
}

/// Two outputs on one path, or on standard output, are refused before anything connects.
pub(crate) fn check_outputs(output: &Output) -> Result<(), std::process::ExitCode> {
    crate::report::output::check(&output.files()).map_err(|msg| usage_error(&msg))
}
