//! The merged roles: each role's figures added up over the shards, its own latencies from the
//! sum of the shards' histograms (never averaged percentiles), its intervals placed by wall
//! clock as the time series' are, their counts added.

use std::collections::BTreeMap;

use super::clock::Clock;
use super::error::MergeError;
use super::figures::hist;
use super::input::Input;
use crate::engine::pubsub::Messages;
use crate::report::document::histo::encode;
use crate::report::document::roles::RoleReport;
use crate::stats::{LatencySummary, RolePoint};

/// Every role's histograms by role, then by name, as `histograms.roles` keeps them.
pub(super) type RoleHistograms = BTreeMap<String, BTreeMap<String, String>>;

/// The shards' roles as one: `totals` is the merged requests' (one role per run).
pub(super) fn merge(
    inputs: &[Input],
    clock: &Clock,
    totals: &crate::report::document::OpSummary,
) -> Result<(Vec<RoleReport>, RoleHistograms), MergeError> {
    let first = &inputs[0].doc.roles;
    let names = |roles: &[RoleReport]| roles.iter().map(|r| (r.name.clone(), r.kind.clone())).collect::<Vec<_>>();
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
    for (k, role) in first.iter().enumerate() {
        let shards: Vec<(&Input, &RoleReport)> = inputs.iter().map(|i| (i, &i.doc.roles[k])).collect();
        let mut merged = role.clone();
        merged.connections = shards.iter().map(|(_, r)| r.connections).sum();
        merged.subscribers = shards.iter().map(|(_, r)| r.subscribers).sum();
        merged.rate_per_sec = shards.iter().map(|(_, r)| r.rate_per_sec).sum();
        merged.totals = if first.len() == 1 { totals.clone() } else { role.totals.clone() };
        let mut latencies: BTreeMap<String, hdrhistogram::Histogram<u64>> = BTreeMap::new();
        for (i, _) in &shards {
            let kept = i.doc.histograms.roles.get(&role.name);
            for (what, text) in kept.into_iter().flatten() {
                let h = hist(Some(text)).map_err(|e| format!("{}: role {}: {e}", i.name, role.name))?;
                match latencies.get_mut(what) {
                    Some(sum) => sum.add(&h).expect("same bounds"),
                    None => {
                        latencies.insert(what.clone(), h);
                    }
                }
            }
        }
        if role.messages.is_some() {
            merged.messages = Some(messages(&shards, latencies.get("delivery"))?);
        }
        merged.over_time = over_time(&shards, clock);
        histograms.insert(role.name.clone(), latencies.iter().map(|(w, h)| (w.clone(), encode(h))).collect());
        roles.push(merged);
    }
    Ok((roles, histograms))
}

/// A pub/sub role's messages added up, the delivery latency from the shards' histograms added.
fn messages(
    shards: &[(&Input, &RoleReport)],
    delivery: Option<&hdrhistogram::Histogram<u64>>,
) -> Result<Messages, MergeError> {
    let mut m = Messages::default();
    for (i, r) in shards {
        let Some(s) = &r.messages else {
            return Err(format!("{}: role {} has no messages to merge", i.name, r.name).into());
        };
        m.published += s.published;
        m.expected_deliveries += s.expected_deliveries;
        m.fanout_reported += s.fanout_reported;
        m.delivered += s.delivered;
        m.lost += s.lost;
        m.duplicated += s.duplicated;
        m.out_of_order += s.out_of_order;
        m.dropped_subscribers.extend(s.dropped_subscribers.iter().map(|d| format!("{}: {d}", i.name)));
    }
    let delivered_kept = delivery.map_or(0, |h| h.len());
    if delivered_kept != m.delivered {
        return Err(format!(
            "the roles' delivery histograms hold {delivered_kept} messages, their counts {}: they cannot be merged \
             exactly",
            m.delivered
        )
        .into());
    }
    m.delivery_latency = delivery.map(LatencySummary::of).unwrap_or_default();
    Ok(m)
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
