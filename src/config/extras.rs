//! Workload variations memtier_benchmark's command line brings beyond a weighted command mix:
//! value sizes that follow the key, commands replayed from a MONITOR capture, SCAN cursors
//! followed from the server's replies. Kept apart so that `Config` stays a plain list.

/// The variations; the default is none of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// `--data-size-pattern S`: a value's size grows with its key number over the key range,
    /// from the smallest size at the first key to the largest at the last (memtier's meaning).
    pub sizes_by_key: bool,
    /// `--command __monitor_line@__`: each request replays one line of a MONITOR capture.
    pub monitor: Option<MonitorPick>,
    /// `--scan-incremental-iteration`: the one `--command` is a SCAN whose cursor is followed.
    pub scan: Option<ScanFollow>,
    /// `--data-import`: SETs write the file's items, in order per connection.
    pub import: Option<Import>,
    /// `--shard I/N` (or the scheduler's variables): this process's part of a spread run.
    pub shard: Option<Shard>,
    /// `--start-at`: the measured phase starts at this wall-clock instant (after connecting
    /// and any warmup).
    pub start_at: Option<std::time::SystemTime>,
    /// The memtier front-end: connections split the key range for P as memtier's clients do
    /// (equal slices of `(max - min) / clients + 1` keys, the last one to the end).
    pub memtier_slices: bool,
    /// memtier's `--client-stats`: each connection keeps its own per-second figures.
    pub client_stats: bool,
    /// `--io` (or `RESPBENCH_IO`): how the workers drive their sockets.
    pub io: IoChoice,
    /// `--timestamps`: kernel receive timestamps, which split each request's latency into the
    /// client's send lag, the wire and server, and the client's receive lag.
    pub timestamps: Timestamps,
    /// `--client-share-warning`: the share of p99 the client may add before the run is warned
    /// about it (a fraction); `None` for [`CLIENT_SHARE_WARNING`].
    pub client_share_warning: Option<f64>,
    /// Quantiles (0 to 1) each completed interval keeps beside its summaries, as the
    /// memtier front-end's `--print-percentiles` asks for its per-second series (an interval
    /// keeps no histogram to read them from later).
    pub interval_quantiles: Vec<f64>,
    /// `--rand-sequential`: the `__rand_int__` and `__rand_1st__` .. `__rand_9th__` numbers
    /// count up through the range (each its own counter; connection `i` of `c` takes `i`,
    /// `i + c`, `i + 2c`, ... so the connections together send each number once per pass)
    /// instead of being drawn.
    pub rand_sequential: bool,
    /// `--transaction`: the commands, in order, each its ratio's times, are one unit (a
    /// rotation) on one connection; every keyed command of a unit uses the unit's one key, and
    /// in cluster mode the whole unit, keyless commands included, goes to that key's shard.
    pub transaction: bool,
    /// `--dataset`: the rows the commands' `__field:NAME__` placeholders take, in order.
    pub dataset: Option<std::sync::Arc<super::dataset::Dataset>>,
    /// Cluster mode as valkey-benchmark's clients: connection `i` is bound to primary
    /// `i % primaries`, connects to it alone, and its `{tag}` names that primary, so its whole
    /// pipeline goes there (respbench's own connections keep a link to every primary).
    pub clients_bound_to_primaries: bool,
    /// `--retry-error-prefixes`: with [`Faults::retry_errors`](super::Faults), only error
    /// replies that start with one of these are sent again (empty: every one not permanent).
    pub retry_on: Vec<String>,
    /// `--role`: the run's client groups (`config::role`); empty: the command line's own mix.
    pub roles: Vec<super::role::Role>,
    /// Several roles: each one's client group, its own plan, connections and commands
    /// (`config::role_plan::groups`); empty for none or one.
    pub groups: Vec<super::role_plan::Group>,
    /// `--setup`: commands sent once before the run, whose replies `__setup:N__` names.
    pub setup: Vec<super::arguments::SetupCommand>,
    /// `--field-*` and `--member-*`: what `__field__` and `__member__` take.
    pub spaces: super::arguments::ArgSpaces,
}

/// This process's shard: `index` of `count`, and what it was given before the split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
    /// Where the shard came from: `--shard`, or the scheduler's variables (`SLURM_PROCID`, ...).
    pub source: String,
    /// The run's `--seed`, before this shard derived its own streams from it.
    pub seed: u64,
    /// `-n` for all shards together.
    pub total_requests: Option<u64>,
    /// `--rate` for all shards together.
    pub total_rate: Option<u64>,
    /// This shard's disjoint part of the key range, `(first, last)`: what `-n allkeys` and the
    /// sequential patterns (S, P) walk. `None` when the range has fewer keys than shards and
    /// this one gets none.
    pub keys: Option<(u64, u64)>,
}

/// The client's share of p99 above which a run is warned that it measured the client too.
pub const CLIENT_SHARE_WARNING: f64 = 0.10;

/// What `--timestamps` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Timestamps {
    /// On in open loop (`--rate`); in closed loop only where they cost little (BENCHMARKS.md).
    #[default]
    Auto,
    On,
    Off,
}

/// What `--io` (or `RESPBENCH_IO`) asks for; what it means is
/// `net::driver`'s to say (`IoChoice::resolve`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoChoice {
    // io_uring when the kernel allows it, else epoll.
    #[default]
    Auto,
    Epoll,
    Uring,
}

/// Connection options: how the socket is opened, what it speaks and what login asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionExtras {
    /// `--mptcp`: open TCP sockets as multipath TCP (the kernel falls back to TCP when the
    /// server does not speak it).
    pub mptcp: bool,
    /// `--enable-tracking`: send `CLIENT TRACKING on` after logging in.
    pub tracking: bool,
    /// The wire protocol (`--protocol`): RESP unless memcached is asked for.
    pub protocol: crate::codec::Protocol,
    /// `--debug` (memtier's `-D`): connection events on stderr.
    pub debug: bool,
}

/// One item of a `--data-import` file: a key, its value (arbitrary bytes) and its expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportItem {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    /// Seconds; 0 for none.
    pub expiry: u64,
}

/// `--data-import`: the items, and what of them is used.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub items: std::sync::Arc<Vec<ImportItem>>,
    /// `--generate-keys`: keys come from the key generator, values from the file.
    pub generate_keys: bool,
    /// `--no-expiry`: the file's expiry times are ignored.
    pub no_expiry: bool,
}

/// The lines `__monitor_line@__` picks from, each counted in the row of its command's name.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorPick {
    /// Each line's arguments.
    pub lines: Vec<Vec<Vec<u8>>>,
    /// The row (an index into `Config::commands`) each line is counted in.
    pub rows: Vec<usize>,
    /// Random picks (`--monitor-pattern R`) instead of walking the lines in order.
    pub random: bool,
    /// The weight of the pick in the mix (its `--command-ratio`).
    pub weight: u32,
}

/// `--scan-incremental-iteration`: `Config::commands[0]` is the first `SCAN 0 ...` of a cycle,
/// `Config::commands[1]` the same with the server's cursor ([`ArgPart::Cursor`](super::ArgPart)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanFollow {
    /// Continuation SCANs per cycle before starting again at 0; 0 follows until the cursor is 0.
    pub max_iterations: u32,
}
