//! memtier's output options that need more than the report (hidden flags the memtier
//! front-end passes on), flattened into respbench's flags: kept here so that `native/`
//! does not grow.

use clap::Args as ClapArgs;

#[derive(Debug, Clone, Default, ClapArgs)]
pub struct MemtierOutputFlags {
    /// memtier's --client-stats=PREFIX: a CSV file per connection, PREFIX-RUN-THREAD-CLIENT.csv.
    #[arg(long, hide = true, value_name = "PREFIX", requires = "memtier_text")]
    pub memtier_client_stats: Option<String>,
}
