//! Messages a role's listeners received in one interval (or a whole run): the seam by which a
//! role's own figures reach the collector, the live outputs and the result beside the run's
//! request windows. A pub/sub role's subscribers fill [`Deliveries`].

use hdrhistogram::Histogram;

use super::latency::{LatencySummary, histogram};

/// Pub/sub messages received: how many, how many again or out of order, and each one's
/// publish-to-delivery latency (nanoseconds, 3 significant digits).
#[derive(Debug, Clone)]
pub struct Deliveries {
    pub delivered: u64,
    pub duplicated: u64,
    pub out_of_order: u64,
    pub latency_ns: Histogram<u64>,
    /// The latencies' exact sum (the histogram's buckets round them).
    pub latency_sum_ns: u64,
}

impl Default for Deliveries {
    fn default() -> Deliveries {
        Deliveries { delivered: 0, duplicated: 0, out_of_order: 0, latency_ns: histogram(), latency_sum_ns: 0 }
    }
}

impl Deliveries {
    /// Adds `other`'s messages to these.
    pub fn add(&mut self, other: &Deliveries) {
        self.delivered += other.delivered;
        self.duplicated += other.duplicated;
        self.out_of_order += other.out_of_order;
        self.latency_ns.add(&other.latency_ns).expect("same bounds");
        self.latency_sum_ns += other.latency_sum_ns;
    }

    /// One message received `latency_ns` after its send.
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        self.delivered += 1;
        self.latency_sum_ns += latency_ns;
        let _ = self.latency_ns.record(latency_ns);
    }
}

/// One role's figures in one interval, as the collector hands them to the live outputs: one
/// variant per kind of role whose listeners count beside the run's requests.
#[derive(Debug, Clone)]
pub enum RoleWindow {
    /// A pub/sub role's subscribers.
    Messages(Deliveries),
}

impl RoleWindow {
    /// The interval's counts by the name every output gives them (`delivered`, ...).
    pub fn counts(&self) -> Vec<(&'static str, u64)> {
        match self {
            RoleWindow::Messages(d) => {
                vec![("delivered", d.delivered), ("duplicated", d.duplicated), ("out_of_order", d.out_of_order)]
            }
        }
    }

    /// The interval's latency histogram and its name (`delivery`), if the kind keeps one.
    pub fn latency(&self) -> Option<(&'static str, &Histogram<u64>)> {
        match self {
            RoleWindow::Messages(d) => Some((super::role_latency::name::DELIVERY, &d.latency_ns)),
        }
    }

    /// The exact sum of the latencies [`latency`](Self::latency) holds, in nanoseconds.
    pub fn latency_sum_ns(&self) -> u64 {
        match self {
            RoleWindow::Messages(d) => d.latency_sum_ns,
        }
    }

    /// The window of kind `kind` with `counts` (by the names [`counts`](Self::counts) gives)
    /// and `latency` (its exact sum `sum_ns`), as a journal keeps it; `None` for a kind this
    /// respbench does not know.
    pub fn of(
        kind: &str,
        counts: &std::collections::BTreeMap<String, u64>,
        latency: Option<Histogram<u64>>,
        sum_ns: u64,
    ) -> Option<RoleWindow> {
        let count = |name: &str| counts.get(name).copied().unwrap_or(0);
        match kind {
            "pubsub" => Some(RoleWindow::Messages(Deliveries {
                delivered: count("delivered"),
                duplicated: count("duplicated"),
                out_of_order: count("out_of_order"),
                latency_ns: latency.unwrap_or_else(histogram),
                latency_sum_ns: sum_ns,
            })),
            _ => None,
        }
    }

    /// The same at the timeline's compact precision (what a journal writes).
    pub fn coarse(&self) -> RoleWindow {
        match self {
            RoleWindow::Messages(d) => {
                RoleWindow::Messages(Deliveries { latency_ns: super::compact::coarse(&d.latency_ns), ..d.clone() })
            }
        }
    }

    /// The kind's name, as the result's `kind` says it.
    pub fn kind(&self) -> &'static str {
        match self {
            RoleWindow::Messages(_) => "pubsub",
        }
    }

    /// Adds `other` (of the same kind) to this.
    pub fn add(&mut self, other: &RoleWindow) {
        match (self, other) {
            (RoleWindow::Messages(a), RoleWindow::Messages(b)) => a.add(b),
        }
    }
}

/// One interval of a role's own figures, as the result's timeline keeps them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RolePoint {
    pub run: usize,
    pub index: u64,
    pub start_secs: f64,
    pub duration_secs: f64,
    /// The interval's counts by name (a pub/sub role: `delivered`, `duplicated`,
    /// `out_of_order`, by the time its subscribers read the messages).
    pub counts: std::collections::BTreeMap<String, u64>,
    /// The interval's latency (a pub/sub role: publish to delivery); absent when nothing was
    /// counted, and from a merged result (its shards' intervals keep no histogram).
    pub latency_us: Option<LatencySummary>,
}

impl RoleWindow {
    /// The interval `(run, index)` spanning `(start_secs, duration_secs)`, summarised.
    pub fn point(&self, (run, index): (usize, u64), (start_secs, duration_secs): (f64, f64)) -> RolePoint {
        let counts = self.counts().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let latency_us = self.latency().filter(|(_, h)| !h.is_empty()).map(|(_, h)| LatencySummary::of(h));
        RolePoint { run, index, start_secs, duration_secs, counts, latency_us }
    }
}

/// What a pub/sub role's messages did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Messages {
    /// PUBLISH (SPUBLISH) requests the server answered without an error.
    pub published: u64,
    /// Published times the subscribers, each subscribed to every channel.
    pub expected_deliveries: u64,
    /// The receivers the server's PUBLISH replies reported, added up.
    pub fanout_reported: u64,
    /// PUBLISH (SPUBLISH) requests sent that got no reply: lost with their connection, timed
    /// out, or still on their way when the run stopped. The server may have run them, so their
    /// deliveries may be among `delivered` while `expected_deliveries` counts none of them:
    /// while this is above 0, `delivered` may exceed the expected by up to this times the
    /// subscribers, and `lost` is the least that was lost.
    pub unconfirmed_publishes: u64,
    /// Messages the subscribers received, duplicates included.
    pub delivered: u64,
    /// Expected deliveries that never arrived.
    pub lost: u64,
    /// Messages a subscriber received again (the same publisher's sequence number twice).
    pub duplicated: u64,
    /// Messages received after a later one of the same channel and publisher.
    pub out_of_order: u64,
    /// From the publisher's send (the stamp in the payload) to the subscriber's read.
    pub delivery_latency: LatencySummary,
    /// Subscribers the server disconnected during the run, each with why.
    pub dropped_subscribers: Vec<String>,
    /// The delivery latency's histogram (`histograms.roles` in the result).
    #[serde(skip)]
    pub kept: super::role_latency::Latencies,
}

/// What a pub/sub role's PUBLISH requests came to, from their row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Publishes {
    /// Answered without an error.
    pub answered: u64,
    /// The receivers the replies reported (the row's hits).
    pub fanout: u64,
    /// Sent and never answered: failed without a reply or abandoned at the stop.
    pub unanswered: u64,
}

impl Publishes {
    /// The publishes of the PUBLISH row `op`.
    pub fn of<H>(op: &super::op::OpStats<H>) -> Publishes {
        Publishes { answered: op.succeeded(), fanout: op.hits, unanswered: op.failed + op.abandoned }
    }
}

impl Messages {
    /// The role's messages from what its `subscribers` received over the run (`received`), its
    /// publishes (answered, the receivers reported, unanswered) and the subscribers the server
    /// dropped.
    pub fn of(subscribers: usize, publishes: Publishes, received: &Deliveries, dropped: Vec<String>) -> Messages {
        let (published, expected) = (publishes.answered, publishes.answered * subscribers as u64);
        Messages {
            published,
            expected_deliveries: expected,
            fanout_reported: publishes.fanout,
            unconfirmed_publishes: publishes.unanswered,
            delivered: received.delivered,
            lost: expected.saturating_sub(received.delivered - received.duplicated),
            duplicated: received.duplicated,
            out_of_order: received.out_of_order,
            delivery_latency: LatencySummary::of(&received.latency_ns),
            dropped_subscribers: dropped,
            kept: super::role_latency::Latencies::of([(
                super::role_latency::name::DELIVERY,
                received.latency_ns.clone(),
            )]),
        }
    }
}
