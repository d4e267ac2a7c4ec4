//! The flags that tie a run to scenario files and dashboards, kept out of `native/` (already
//! long): `--save-scenario` writes the command line as a scenario file, `--metrics-listen`
//! serves live OpenMetrics during the run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use super::run::RunContext;
use crate::report::metrics::Live;

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
    #[arg(long, value_name = "D", value_parser = super::parse::duration, requires = "metrics_listen", help_heading = "Output")]
    pub metrics_linger: Option<std::time::Duration>,
}

impl ScenarioFlags {
    /// `respbench fill` and `capacity` take the run's flags but not `--save-scenario`: a
    /// one-line refusal.
    pub fn refuse_in(&self, subcommand: &str) -> Result<(), String> {
        if self.save_scenario.is_some() {
            return Err(format!(
                "--save-scenario is not available with respbench {subcommand}: write a {subcommand} phase in a scenario file"
            ));
        }
        Ok(())
    }

    /// `respbench fill` and `capacity`: serves `--metrics-listen`, which every engine run of the
    /// fill or search feeds, unless the context already hands them an endpoint (a scenario's).
    /// The endpoint it started, if any.
    pub fn serve_metrics(&self, cx: &RunContext<'_>) -> Result<Option<Arc<Live>>, String> {
        match self.metrics_listen {
            Some(addr) if cx.metrics.is_none() => Live::serve(addr).map(Some),
            _ => Ok(None),
        }
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

pub(crate) fn socket_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| format!("expected an address and port such as 127.0.0.1:9100, got '{s}'"))
}
