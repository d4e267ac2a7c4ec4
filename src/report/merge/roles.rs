//! The merged roles: each role's figures added up over the shards, its own latencies from the
//! sum of the shards' histograms (never averaged percentiles), its intervals placed by wall
//! clock as the time series' are, their counts added.

use std::collections::BTreeMap;

use super::clock::Clock;
use super::error::MergeError;
use super::input::Input;
use crate::engine::pubsub::Messages;
use crate::engine::queue::QueueFigures;
use crate::engine::streams::StreamFigures;
use crate::engine::tracking::Figures as TrackingFigures;
use crate::report::document::role_figures;
use crate::report::document::roles::{RoleReport, decoded};
use crate::stats::{Latencies, RolePoint};

/// Every role's histograms by role, then by name, as `histograms.roles` keeps them.
pub(super) type RoleHistograms = BTreeMap<String, BTreeMap<String, String>>;

/// The shards' roles as one: `totals` is the merged requests' (a run of one role);
/// `own_totals` sums the merged rows a role names (a run of several).
pub(super) fn merge(
    inputs: &[Input],
    clock: &Clock,
    totals: &crate::report::document::OpSummary,
    own_totals: &dyn Fn(&[String]) -> crate::report::document::OpSummary,
) -> Result<(Vec<RoleReport>, RoleHistograms), MergeError> {
    let first = &inputs[0].doc.roles;
    // Each role is found by its name in every shard: the shards' roles match as sets.
    let names = |roles: &[RoleReport]| {
        let mut named: Vec<(String, String)> = roles.iter().map(|r| (r.name.clone(), r.kind.clone())).collect();
        named.sort();
        named
    };
    for i in &inputs[1..] {
        if names(&i.doc.roles) != names(first) {
            return Err(format!(
                "{} and {} ran different roles ({:?} vs {:?}): only shards of one run merge",
                inputs[0].name,
                i.name,
                names(first),
                names(&i.doc.roles)
            )
            .into());
        }
    }
    let (mut roles, mut histograms) = (Vec::new(), RoleHistograms::new());
    for role in first {
        let shards: Vec<(&Input, &RoleReport)> =
            inputs.iter().filter_map(|i| Some((i, i.doc.roles.iter().find(|r| r.name == role.name)?))).collect();
        let mut merged = role.clone();
        merged.connections = shards.iter().map(|(_, r)| r.connections).sum();
        merged.subscribers = shards.iter().map(|(_, r)| r.subscribers).sum();
        merged.rate_per_sec = shards.iter().map(|(_, r)| r.rate_per_sec).sum();
        merged.totals = if first.len() == 1 { totals.clone() } else { own_totals(&role.commands) };
        let mut kept = Latencies::default();
        for (i, _) in &shards {
            let Some(encoded) = i.doc.histograms.roles.get(&role.name) else { continue };
            let theirs = decoded(encoded).map_err(|e| format!("{}: role {}: {e}", i.name, role.name))?;
            for (what, h) in theirs.iter() {
                kept.add(what, h);
            }
        }
        merged.messages = sum(&shards, |r| r.messages.as_ref(), add_messages)?;
        merged.stream = sum(&shards, |r| r.stream.as_ref(), add_stream)?;
        if let Some(s) = merged.stream.as_mut() {
            s.pending = shards.iter().map(|(_, r)| r.stream.as_ref().and_then(|s| s.pending)).sum();
        }
        merged.queue = sum(&shards, |r| r.queue.as_ref(), add_queue)?;
        merged.tracking = sum(&shards, |r| r.tracking.as_ref(), add_tracking)?;
        merged.keep(kept);
        role_figures::summarise(&mut merged);
        for (what, _, measured) in role_figures::latencies(&merged) {
            let kept_n = merged.kept().and_then(|k| k.get(what)).map_or(0, |h| h.len());
            if kept_n != measured {
                return Err(format!(
                    "role {}: the shards' {what} histograms hold {kept_n} latencies, their counts {measured}: they \
                     cannot be merged exactly",
                    role.name
                )
                .into());
            }
        }
        merged.over_time = over_time(&shards, clock);
        roles.push(merged);
    }
    histograms.extend(crate::report::document::roles::histograms(&roles));
    Ok((roles, histograms))
}

/// The kind object `get` finds in every shard's role, added up by `add` (`None` when the role's
/// kind has none); a shard without it cannot be merged.
fn sum<T: Default>(
    shards: &[(&Input, &RoleReport)],
    get: fn(&RoleReport) -> Option<&T>,
    add: fn(&mut T, &T, &str),
) -> Result<Option<T>, MergeError> {
    if shards.first().is_none_or(|(_, r)| get(r).is_none()) {
        return Ok(None);
    }
    let mut total = T::default();
    for (i, r) in shards {
        let theirs = get(r).ok_or_else(|| format!("{}: role {} has no {} figures to merge", i.name, r.name, r.kind))?;
        add(&mut total, theirs, &i.name);
    }
    Ok(Some(total))
}

/// Lists of dropped listeners, each named by its shard.
fn dropped(mine: &mut Vec<String>, theirs: &[String], shard: &str) {
    mine.extend(theirs.iter().map(|d| format!("{shard}: {d}")));
}

fn add_messages(m: &mut Messages, s: &Messages, shard: &str) {
    m.published += s.published;
    m.expected_deliveries += s.expected_deliveries;
    m.fanout_reported += s.fanout_reported;
    m.unconfirmed_publishes += s.unconfirmed_publishes;
    m.delivered += s.delivered;
    m.lost += s.lost;
    m.duplicated += s.duplicated;
    m.out_of_order += s.out_of_order;
    dropped(&mut m.dropped_subscribers, &s.dropped_subscribers, shard);
}

/// The shards' highest pending and lag were sampled at different times: they are left out
/// (unknown) rather than guessed; their pending entries after the run add up ([`merge`]).
fn add_stream(m: &mut StreamFigures, s: &StreamFigures, shard: &str) {
    m.produced += s.produced;
    m.consumed += s.consumed;
    m.acked += s.acked;
    m.unconsumed += s.unconsumed;
    dropped(&mut m.dropped_consumers, &s.dropped_consumers, shard);
}

fn add_queue(m: &mut QueueFigures, s: &QueueFigures, shard: &str) {
    m.produced += s.produced;
    m.consumed += s.consumed;
    m.unconsumed += s.unconsumed;
    m.empty_pops += s.empty_pops;
    m.waited += s.waited;
    dropped(&mut m.dropped_workers, &s.dropped_workers, shard);
}

/// The shards listened side by side: the merged run listened as long as the longest.
fn add_tracking(m: &mut TrackingFigures, s: &TrackingFigures, shard: &str) {
    m.reads += s.reads;
    m.local_hits += s.local_hits;
    m.server_reads += s.server_reads;
    m.invalidations += s.invalidations;
    m.flushes += s.flushes;
    m.invalidations_timed += s.invalidations_timed;
    m.invalidations_untimed += s.invalidations_untimed;
    m.stale_reads += s.stale_reads;
    m.listened_secs = m.listened_secs.max(s.listened_secs);
    m.hit_ratio = if m.reads > 0 { m.local_hits as f64 / m.reads as f64 } else { 0.0 };
    m.invalidations_per_sec = if m.listened_secs > 0.0 { m.invalidations as f64 / m.listened_secs } else { 0.0 };
    dropped(&mut m.dropped_readers, &s.dropped_readers, shard);
}

/// The shards' intervals placed by wall clock, their counts added; a merged interval keeps no
/// latency (the shards' intervals keep no histogram to add).
fn over_time(shards: &[(&Input, &RoleReport)], clock: &Clock) -> Vec<RolePoint> {
    let mut slots: BTreeMap<(usize, u64), RolePoint> = BTreeMap::new();
    for (i, r) in shards {
        let offset = clock.offset(&i.doc);
        for p in &r.over_time {
            let slot = ((offset + p.start_secs) / clock.interval).round() as u64;
            let at = slots.entry((p.run, slot)).or_insert_with(|| RolePoint {
                run: p.run,
                index: slot,
                start_secs: slot as f64 * clock.interval,
                ..RolePoint::default()
            });
            at.duration_secs = at.duration_secs.max(p.duration_secs);
            for (name, n) in &p.counts {
                *at.counts.entry(name.clone()).or_default() += n;
            }
        }
    }
    slots.into_values().collect()
}
