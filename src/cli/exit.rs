//! How a finished run becomes an exit code: a run in which nothing succeeded is a failure
//! whatever the report says, and `--fail-on-errors` / `--max-error-rate` let CI pipelines
//! fail a run with (too many) errors.

use std::process::ExitCode;

use super::options::Output;
use crate::config::Config;
use crate::engine::Outcome;

/// The exit status of a run a stop signal ended: 128 + the signal (SIGINT 130, SIGTERM 143,
/// SIGHUP 129), for every subcommand and front-end alike.
pub fn interrupted() -> ExitCode {
    ExitCode::from(super::signals::interrupted_exit_code())
}

/// Replies that were not errors, over every run.
pub fn successes(outcome: &Outcome) -> u64 {
    outcome.timeline.iter().map(|i| i.successes).sum()
}

/// Why the run must exit 1, in one line; `None` when it may exit 0.
pub fn failure(config: &Config, outcome: &Outcome, output: &Output) -> Option<String> {
    let ok = successes(outcome);
    let failed = outcome.total().errors;
    // A counted run whose connections gave up (a server that stopped answering, reconnects
    // spent) did not do what was asked. (With a sequence a request is a unit of several.)
    if let Some(planned) = config.planned_requests().filter(|_| config.sequence.is_none() && ok > 0) {
        let planned = planned * outcome.runs.len().max(1) as u64;
        if ok + failed < planned {
            return Some(format!(
                "only {} of the {planned} requests asked for were sent: connections gave up ({failed} failed)",
                ok + failed
            ));
        }
    }
    if ok == 0 {
        return Some(if failed == 0 && outcome.errors.total() == 0 {
            "no request got a reply: the server answered nothing".to_string()
        } else {
            format!(
                "no request succeeded: {failed} failed ({} errors by kind: {})",
                outcome.errors.total(),
                kinds(outcome)
            )
        });
    }
    if let Some(why) = outcome.roles.iter().find_map(role_failure) {
        return Some(why);
    }
    let rate = failed as f64 / (ok + failed) as f64;
    if output.fail_on_errors && failed > 0 {
        return Some(format!("{failed} requests failed ({:.3}%) and --fail-on-errors is set", rate * 100.0));
    }
    if let Some(max) = output.max_error_rate
        && rate > max
    {
        return Some(format!(
            "{failed} of {} requests failed ({:.3}%), above --max-error-rate {max} ({:.3}%)",
            ok + failed,
            rate * 100.0,
            max * 100.0
        ));
    }
    None
}

/// `timeout 3, protocol 1`: the error kinds seen, for the one-line verdict.
fn kinds(outcome: &Outcome) -> String {
    let sorted = outcome.errors.sorted();
    if sorted.is_empty() {
        return "none".into();
    }
    sorted.iter().map(|(kind, n)| format!("{kind} {n}")).collect::<Vec<_>>().join(", ")
}

/// Why a role's figures make the run a failure, naming the role: a pub/sub role's publishes
/// succeeded yet no subscriber received one; a tracking role's reader served a value the
/// server had invalidated; a stream or queue role's producers succeeded yet nothing was consumed.
fn role_failure(role: &crate::engine::RoleOutcome) -> Option<String> {
    let name = &role.name;
    if let Some(m) = role.messages.as_ref().filter(|m| m.published > 0 && m.delivered == 0) {
        return Some(format!(
            "role {name}: no message was delivered: {} published, all {} expected deliveries lost",
            m.published, m.expected_deliveries
        ));
    }
    if let Some(t) = role.tracking.as_ref().filter(|t| t.stale_reads > 0) {
        return Some(format!(
            "role {name}: {} stale reads: a reader served a value from its cache after the server had invalidated it",
            t.stale_reads
        ));
    }
    if let Some(s) = role.stream.as_ref().filter(|s| s.produced > 0 && s.consumed == 0) {
        return Some(format!(
            "role {name}: no stream entry was consumed: {} produced, none read by the consumers",
            s.produced
        ));
    }
    if let Some(q) = role.queue.as_ref().filter(|q| q.produced > 0 && q.consumed == 0) {
        return Some(format!(
            "role {name}: no queue item was consumed: {} produced, none popped by the workers",
            q.produced
        ));
    }
    None
}
