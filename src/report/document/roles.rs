//! The result per role: each role's plan, its own requests' figures and, for a pub/sub role,
//! what its messages did. A run without `--role` has no roles and the result has no `roles`.
//!
//! Every output reads a role from here: its kind's object (`messages`, `stream`, `queue`,
//! `tracking`) for the formats that show it whole (JSON, text), and [`RoleReport::figures`], the
//! role's figures named once (`role_figures`), for the flat ones (CSV, Prometheus, StatsD) and
//! the tables (Markdown, HTML). A kind of role adds its object to [`RoleReport`] and its
//! figures to `role_figures`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::parts::OpSummary;
use crate::config::Config;
use crate::config::role::RoleKind;
use crate::engine::pubsub::Messages;
use crate::engine::tracking::Figures;
use crate::stats::RolePoint;

/// One role of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RoleReport {
    pub name: String,
    /// `pubsub`.
    pub kind: String,
    /// The role's own connections (a pub/sub role's publishers).
    pub connections: usize,
    /// Publishes per second asked for; absent in closed loop.
    pub rate_per_sec: Option<f64>,
    /// How the role's requests were paced, which says where their latency is measured from:
    /// `open_loop` (at its rate: from each request's intended send time) or `closed_loop`
    /// (from its actual send). Each role of a run has its own.
    pub loop_mode: String,
    /// Where the role's request latency is measured from: `intended_send` or `actual_send`.
    pub latency_from: String,
    /// How far into the measured run the role's requests began (its `start=`); absent when
    /// at the run's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_secs: Option<f64>,
    /// A pub/sub role: its channels, subscribers and how they listen.
    pub channels: Option<u64>,
    pub subscribers: Option<usize>,
    pub mode: Option<String>,
    /// The rows of the result's `commands` that are the role's requests: with several roles,
    /// each role's own; the run's totals add up every role's.
    pub commands: Vec<String>,
    /// The role's requests (a pub/sub role's PUBLISH), counted as the totals are.
    pub totals: OpSummary,
    /// A pub/sub role: what its messages did.
    pub messages: Option<Messages>,
    /// A tracking role: its keys, cached readers and each reader's cache size (keys).
    pub keys: Option<u64>,
    pub readers: Option<usize>,
    pub cache: Option<usize>,
    /// A tracking role: what its cached readers did.
    pub tracking: Option<Figures>,
    /// A stream role: what its entries did.
    pub stream: Option<crate::engine::streams::StreamFigures>,
    /// A queue role: what its items did.
    pub queue: Option<crate::engine::queue::QueueFigures>,
    /// What the role's listeners counted in each interval of the timeline (a pub/sub role:
    /// messages delivered and their delivery latency, by when they arrived).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_time: Vec<RolePoint>,
}

impl RoleReport {
    /// The role's own latency histograms over the run (empty when read back from a result).
    pub fn kept(&self) -> Option<&crate::stats::Latencies> {
        let (m, s) = (self.messages.as_ref().map(|m| &m.kept), self.stream.as_ref().map(|s| &s.kept));
        m.or(s).or(self.queue.as_ref().map(|q| &q.kept)).or(self.tracking.as_ref().map(|t| &t.kept))
    }

    /// Hands `kept` (the role's latency histograms: a merge's sum, a journal's) to its kind's
    /// object.
    pub fn keep(&mut self, kept: crate::stats::Latencies) {
        if let Some(m) = self.messages.as_mut() {
            m.kept = kept;
        } else if let Some(s) = self.stream.as_mut() {
            s.kept = kept;
        } else if let Some(q) = self.queue.as_mut() {
            q.kept = kept;
        } else if let Some(t) = self.tracking.as_mut() {
            t.kept = kept;
        }
    }

    /// The role's listeners the server disconnected during the run, each with why.
    pub fn dropped(&self) -> Vec<&str> {
        let m = self.messages.iter().flat_map(|m| &m.dropped_subscribers);
        let s = self.stream.iter().flat_map(|s| &s.dropped_consumers);
        let q = self.queue.iter().flat_map(|q| &q.dropped_workers);
        let t = self.tracking.iter().flat_map(|t| &t.dropped_readers);
        m.chain(s).chain(q).chain(t).map(String::as_str).collect()
    }
}

/// The roles' own latency histograms, encoded, by role, then by the latency's name: the
/// result's `histograms.roles` (and a journal's, for a run that ended).
pub fn histograms(roles: &[RoleReport]) -> BTreeMap<String, BTreeMap<String, String>> {
    let encoded = |r: &RoleReport| {
        let kept = r.kept()?.iter().map(|(what, h)| (what.to_string(), super::histo::encode(h)));
        Some((r.name.clone(), kept.collect::<BTreeMap<_, _>>()))
    };
    roles.iter().filter_map(encoded).filter(|(_, h)| !h.is_empty()).collect()
}

/// The roles `config` plans, their figures not yet filled in.
pub fn planned(config: &Config) -> Vec<RoleReport> {
    let mut roles: Vec<RoleReport> = config
        .extras
        .roles
        .iter()
        .map(|role| match &role.kind {
            RoleKind::PubSub(p) => RoleReport {
                name: role.name.clone(),
                kind: "pubsub".into(),
                connections: p.publishers,
                rate_per_sec: p.rate,
                channels: Some(p.channels),
                subscribers: Some(p.subscribers),
                mode: Some(p.listen.name().into()),
                ..RoleReport::default()
            },
            RoleKind::Tracking(t) => RoleReport {
                name: role.name.clone(),
                kind: "tracking".into(),
                connections: t.writers,
                rate_per_sec: t.rate,
                mode: Some(t.mode.name().into()),
                keys: Some(t.keys),
                readers: Some(t.readers),
                cache: Some(t.cache),
                ..RoleReport::default()
            },
            // `subscribers` is a stream's consumers or a queue's workers; `mode` how a stream's
            // consumers read (`xack`, `noack`) or the pop a queue's workers block on.
            RoleKind::Stream(s) => RoleReport {
                name: role.name.clone(),
                kind: "stream".into(),
                connections: s.producers,
                rate_per_sec: s.rate,
                subscribers: Some(s.consumers),
                mode: Some(if s.ack { "xack" } else { "noack" }.into()),
                ..RoleReport::default()
            },
            RoleKind::Queue(q) => RoleReport {
                name: role.name.clone(),
                kind: "queue".into(),
                connections: q.producers,
                rate_per_sec: q.rate,
                subscribers: Some(q.workers),
                mode: Some(q.pop.name().into()),
                ..RoleReport::default()
            },
            RoleKind::Mix(m) => RoleReport {
                name: role.name.clone(),
                kind: "mix".into(),
                connections: m.as_ref().map_or(0, |m| m.connections),
                rate_per_sec: m.as_ref().and_then(|m| m.rate).map(|r| r.per_sec),
                ..RoleReport::default()
            },
        })
        .collect();
    let rows = config.command_rows();
    for role in &mut roles {
        role.commands = rows[config.role_commands(&role.name)].to_vec();
        let pacing = config.pacing_of(&role.name);
        role.loop_mode = pacing.name().into();
        role.latency_from =
            if pacing == crate::config::role_plan::Pacing::Open { "intended_send" } else { "actual_send" }.into();
        let start = config.extras.roles.iter().find(|r| r.name == role.name).map(|r| r.start);
        role.start_secs = start.filter(|s| !s.is_zero()).map(|s| s.as_secs_f64());
    }
    roles
}

/// The roles' figures: with one role, the run's totals are the role's; with several, each
/// role's requests are its own rows (`commands`) added up. Each role takes what its own
/// listeners counted over the run and per interval, found by its name.
pub fn measured(roles: &mut [RoleReport], totals: &OpSummary, outcome: &crate::engine::Outcome) {
    let several = roles.len() > 1;
    for role in roles {
        role.totals = if several { own_totals(&role.commands, outcome) } else { totals.clone() };
        let Some(own) = outcome.role(&role.name) else { continue };
        role.messages = own.messages.clone();
        role.over_time = own.series.clone();
        role.tracking = own.tracking.clone();
        role.stream = own.stream.clone();
        role.queue = own.queue.clone();
    }
}

/// The requests of the rows named `commands`, counted as the run's totals are.
fn own_totals(commands: &[String], outcome: &crate::engine::Outcome) -> OpSummary {
    let rows = outcome.command_names.iter().zip(&outcome.ops).filter(|(name, _)| commands.contains(name));
    let own = crate::stats::total(&rows.map(|(_, op)| op.clone()).collect::<Vec<_>>());
    OpSummary::of(&own, outcome.elapsed.as_secs_f64()).with_spectrum(&own)
}

/// One role's latency histograms as [`histograms`] encodes them, decoded (in the layout of
/// the result's histograms, so that they add).
pub fn decoded(encoded: &BTreeMap<String, String>) -> Result<crate::stats::Latencies, super::error::Malformed> {
    let mut kept = crate::stats::Latencies::default();
    for (what, text) in encoded {
        kept.add(what, &crate::stats::widen(&super::histo::decode(text)?));
    }
    Ok(kept)
}

/// The roles of a run that ended: `planned` (as [`planned`] makes them) with `outcome`'s
/// figures, what the live outputs (metrics, StatsD, the journal) say at a run's end.
pub fn ended(planned: &[RoleReport], outcome: &crate::engine::Outcome) -> Vec<RoleReport> {
    let mut roles = planned.to_vec();
    let totals = OpSummary::of(&outcome.total(), outcome.elapsed.as_secs_f64());
    measured(&mut roles, &totals, outcome);
    roles
}

/// The roles as the text report shows them, after the table: nothing without roles.
pub fn text(roles: &[RoleReport]) -> String {
    let mut out = String::new();
    for role in roles {
        let ms = |us: f64| us / 1000.0;
        let l = &role.totals.latency_us;
        let _ = writeln!(
            out,
            "Role {} ({}): {} {}, {} request(s), {:.2}/s; latency ms p50 {:.3} p99 {:.3} p99.9 {:.3}; {}",
            role.name,
            role.kind,
            role.connections,
            match role.kind.as_str() {
                "tracking" => "writer(s)",
                "pubsub" => "publisher(s)",
                "mix" => "connection(s)",
                _ => "producer(s)",
            },
            role.totals.count,
            role.totals.ops_per_sec,
            ms(l.p50_us),
            ms(l.p99_us),
            ms(l.p999_us),
            loop_words(role)
        );
        out.push_str(&tracking_text(role));
        out.push_str(&super::roles_queue::text(
            role.subscribers.unwrap_or(0),
            role.mode.as_deref().unwrap_or(""),
            role.stream.as_ref(),
            role.queue.as_ref(),
        ));
        let Some(m) = &role.messages else { continue };
        let _ = writeln!(
            out,
            "  messages: {} published on {} channel(s) to {} subscriber(s) ({}): {} expected deliveries, {} delivered, \
             {} lost, {} duplicated, {} out of order; the server reported {} receivers",
            m.published,
            role.channels.unwrap_or(0),
            role.subscribers.unwrap_or(0),
            role.mode.as_deref().unwrap_or(""),
            m.expected_deliveries,
            m.delivered,
            m.lost,
            m.duplicated,
            m.out_of_order,
            m.fanout_reported
        );
        if m.unconfirmed_publishes > 0 {
            let _ = writeln!(
                out,
                "  unconfirmed: {} publishes got no reply (the server may have run them: up to {} of the deliveries \
                 may be theirs, and lost is the least that was lost)",
                m.unconfirmed_publishes,
                m.unconfirmed_publishes * role.subscribers.unwrap_or(0) as u64
            );
        }
        let d = &m.delivery_latency;
        if m.delivered == 0 {
            out.push_str("  delivery latency: no message was delivered\n");
        } else {
            let _ = writeln!(
                out,
                "  delivery latency (publish to subscriber), ms: avg {:.3} p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}",
                ms(d.mean_us),
                ms(d.p50_us),
                ms(d.p90_us),
                ms(d.p99_us),
                ms(d.p999_us),
                ms(d.max_us)
            );
        }
        for dropped in &m.dropped_subscribers {
            let _ = writeln!(out, "  DROPPED: {dropped}");
        }
    }
    out
}

/// How a role was paced, in words: `open loop at 1000/s, latency from intended send`.
fn loop_words(role: &RoleReport) -> String {
    match (role.loop_mode.as_str(), role.rate_per_sec) {
        ("open_loop", Some(rate)) => format!("open loop at {rate}/s, latency from intended send"),
        ("closed_loop", _) => "closed loop, latency from actual send".into(),
        (other, _) => other.replace('_', " "),
    }
}

/// A tracking role's lines in the text report (nothing for another role).
fn tracking_text(role: &RoleReport) -> String {
    let Some(t) = &role.tracking else { return String::new() };
    let mut out = format!(
        "  cached reads: {} reader(s) ({} mode, cache {} of {} keys): {} reads, {} local hits ({:.1}%), {} from the \
         server; {} invalidations ({:.1}/s), {} flushes; {} stale reads\n",
        role.readers.unwrap_or(0),
        role.mode.as_deref().unwrap_or(""),
        role.cache.unwrap_or(0),
        role.keys.unwrap_or(0),
        t.reads,
        t.local_hits,
        t.hit_ratio * 100.0,
        t.server_reads,
        t.invalidations,
        t.invalidations_per_sec,
        t.flushes,
        t.stale_reads
    );
    let d = &t.invalidation_delay;
    if t.invalidations_timed == 0 {
        out.push_str("  invalidation delay: no invalidation of a cached key was timed\n");
    } else {
        let ms = |us: f64| us / 1000.0;
        let _ = writeln!(
            out,
            "  invalidation delay (write to invalidation), ms: avg {:.3} p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max \
             {:.3} ({} timed, {} not)",
            ms(d.mean_us),
            ms(d.p50_us),
            ms(d.p90_us),
            ms(d.p99_us),
            ms(d.p999_us),
            ms(d.max_us),
            t.invalidations_timed,
            t.invalidations_untimed
        );
    }
    for dropped in &t.dropped_readers {
        let _ = writeln!(out, "  DROPPED: {dropped}");
    }
    out
}
