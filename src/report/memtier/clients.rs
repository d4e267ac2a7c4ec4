//! memtier's `--client-stats=PREFIX` files: one CSV per connection, `PREFIX-RUN-THREAD-CLIENT.csv`,
//! laid out as memtier's `run_stats::save_csv` writes them: the per-second rows (requests,
//! average latency, bytes, and for GET misses and hits), then each command's latency
//! distribution over the whole run.

use std::fmt::Write;
use std::path::PathBuf;

use super::stats::{MemtierView, base_name, distribution_us, groups};
use crate::engine::Outcome;
use crate::stats::{ClientStats, RowSecond};

/// (path, contents) of every connection's file for run `run` (1-based).
pub fn client_files(view: &MemtierView<'_>, prefix: &str, run: usize, o: &Outcome) -> Vec<(PathBuf, Vec<u8>)> {
    o.client_stats
        .iter()
        .map(|c| {
            let path = PathBuf::from(format!("{prefix}-{run}-{}-{}.csv", c.thread, c.client));
            (path, render(view, o, c).into_bytes())
        })
        .collect()
}

/// memtier's `%u.%06u` of a whole-microsecond average (integer division, as its AVERAGE).
fn average(row: &RowSecond) -> String {
    let us = row.latency_us.checked_div(row.count).unwrap_or(0);
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// The counters of several commands (memtier's SET row takes SETRANGE too, GET takes MGET).
fn sum(rows: &[RowSecond], members: &[usize]) -> RowSecond {
    let mut total = RowSecond::default();
    for row in members.iter().filter_map(|&i| rows.get(i)) {
        total.count += row.count;
        total.latency_us += row.latency_us;
        total.bytes_tx += row.bytes_tx;
        total.bytes_rx += row.bytes_rx;
        total.hits += row.hits;
        total.misses += row.misses;
    }
    total
}

fn render(view: &MemtierView<'_>, o: &Outcome, c: &ClientStats) -> String {
    // memtier's columns: (name, the commands counted in them).
    let columns: Vec<(String, Vec<usize>)> = if view.arbitrary {
        // One group per --command (memtier's command list), SCAN's two rows included.
        (0..o.command_names.len())
            .filter(|&i| !o.ops[i].unit)
            .map(|i| (base_name(&o.command_names[i]).to_string(), vec![i]))
            .collect()
    } else {
        groups(view, o)
    };
    // A connection that measured nothing still has memtier's one row, for second 0.
    let empty = [(0, vec![RowSecond::default(); o.command_names.len()])];
    let seconds = if c.seconds.is_empty() { &empty[..] } else { &c.seconds[..] };
    let mut out = String::new();
    if view.arbitrary {
        out.push_str("Per-Second Benchmark Arbitrary Commands Data\nSecond");
        for (name, _) in &columns {
            let _ = write!(
                out,
                ",{name} Requests,{name} Average Latency,{name} Total Bytes,{name} Total Bytes TX,{name} Total Bytes RX"
            );
        }
        out.push('\n');
        for (second, rows) in seconds {
            let _ = write!(out, "{second},");
            for (_, members) in &columns {
                let r = sum(rows, members);
                let _ = write!(
                    out,
                    "{},{},{},{},{},",
                    r.count,
                    average(&r),
                    r.bytes_tx + r.bytes_rx,
                    r.bytes_tx,
                    r.bytes_rx
                );
            }
            out.push('\n');
        }
    } else {
        out.push_str(
            "Per-Second Benchmark Data\nSecond,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
             SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,GET Total Bytes RX,\
             GET Misses,GET Hits,WAIT Requests,WAIT Average Latency\n",
        );
        for (second, rows) in seconds {
            let (set, get, wait) = (sum(rows, &columns[0].1), sum(rows, &columns[1].1), sum(rows, &columns[2].1));
            let _ = writeln!(
                out,
                "{second},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                set.count,
                average(&set),
                set.bytes_tx + set.bytes_rx,
                set.bytes_tx,
                set.bytes_rx,
                get.count,
                average(&get),
                get.bytes_tx + get.bytes_rx,
                get.bytes_tx,
                get.bytes_rx,
                get.misses,
                get.hits,
                wait.count,
                average(&wait),
            );
        }
    }
    // memtier's order: GET, SET, WAIT for its own mix; the command list's otherwise.
    let mut order: Vec<&(String, Vec<usize>)> = columns.iter().collect();
    if !view.arbitrary {
        order = vec![&columns[1], &columns[0], &columns[2]];
    }
    for (name, members) in order {
        let mut us = hdrhistogram::Histogram::<u64>::new(3).expect("valid");
        for &i in members {
            if let Some(h) = c.latency_us.get(i) {
                let _ = us.add(h);
            }
        }
        let _ = write!(out, "\nFull-Test {name} Latency\nLatency (<= msec),Percent\n");
        for (msec, percent) in distribution_us(&us) {
            let _ = writeln!(out, "{msec:8.3},{percent:.3}");
        }
    }
    out
}
