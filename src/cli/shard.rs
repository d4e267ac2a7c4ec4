//! Several load machines as one run: `--shard I/N` (or the shard a scheduler's environment
//! gives: Slurm, Kubernetes Indexed Jobs, MPI launchers), `--shard-count`, and `--start-at`,
//! the instant every shard starts its measured phase (`--allow-late-start` for a shard
//! launched after it). Kept out of `native/` so that the
//! common flags stay readable; the splitting itself is `Config::into_shard`.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::parse::InvalidValue;

use clap::Args as ClapArgs;

use crate::config::Config;

/// The flags, flattened into respbench's own.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct ShardFlags {
    /// Run shard I of N (0 to N-1) of a run spread over N load machines: -n allkeys and the
    /// sequential key patterns take a disjoint part of the key range, -n and --rate a share
    /// of the total [default: from Slurm, a Kubernetes Indexed Job or an MPI launcher].
    #[arg(long, value_name = "I/N", value_parser = shard_arg, help_heading = "Shards")]
    pub shard: Option<(u32, u32)>,
    /// The number of shards when the environment gives only the index (a Kubernetes Indexed
    /// Job's JOB_COMPLETION_INDEX) [default: $RESPBENCH_SHARDS].
    #[arg(long, value_name = "N", value_parser = shard_count, help_heading = "Shards")]
    pub shard_count: Option<u32>,
    /// Connect (and warm up), then start the measured phase at this instant: RFC 3339
    /// (2030-01-02T15:04:05Z) or Unix seconds (1893596645.5). Give every shard the same.
    #[arg(long, value_name = "TIME", value_parser = start_time, help_heading = "Shards")]
    pub start_at: Option<SystemTime>,
    /// Accept a --start-at that has already passed and start at once, as a shard its scheduler
    /// launched late must (the result's start.offset_ms says how late); without it a past
    /// time is refused, which catches a mistyped one.
    #[arg(long, requires = "start_at", help_heading = "Shards")]
    pub allow_late_start: bool,
}

/// Where a shard came from, for the one line on stderr and the JSON.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    pub index: u32,
    pub count: u32,
    pub source: String,
}

impl ShardFlags {
    /// Splits `config` for this shard and sets its start instant; prints which shard it is.
    pub fn apply(&self, config: &mut Config) -> Result<(), InvalidValue> {
        if let Some(at) = self.start_at {
            let now = SystemTime::now();
            if let Ok(late) = now.duration_since(at) {
                if !self.allow_late_start {
                    return Err(format!(
                        "--start-at {} is in the past (it is now {}): give a later time, or \
                         --allow-late-start to start at once",
                        unix_text(at),
                        unix_text(now)
                    )
                    .into());
                }
                eprintln!(
                    "respbench: --start-at {} passed {:.3} s ago: starting once connected (--allow-late-start)",
                    unix_text(at),
                    late.as_secs_f64()
                );
            }
            config.extras.start_at = Some(at);
        }
        let found = find(self.shard, self.shard_count, &|name| std::env::var(name).ok())?;
        if let Some(f) = found {
            eprintln!("respbench: shard {}/{} (from {})", f.index, f.count, f.source);
            config.into_shard(f.index, f.count, &f.source)?;
        }
        Ok(())
    }
}

/// The shard to run: `--shard`, else the first scheduler whose variables are set. `None`
/// when there is no shard or only one.
pub fn find(
    flag: Option<(u32, u32)>,
    count_flag: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Found>, InvalidValue> {
    if let Some((index, count)) = flag {
        if count_flag.is_some_and(|c| c != count) {
            return Err(format!("--shard {index}/{count} and --shard-count {} disagree", count_flag.unwrap()).into());
        }
        return Ok((count > 1).then(|| Found { index, count, source: format!("--shard {index}/{count}") }));
    }
    let number = |name: &str| -> Result<Option<u32>, InvalidValue> {
        match env(name) {
            None => Ok(None),
            Some(v) if v.trim().is_empty() => Ok(None),
            Some(v) => Ok(v
                .trim()
                .parse::<u32>()
                .map(Some)
                .map_err(|_| format!("{name}={v} in the environment is not a whole number"))?),
        }
    };
    let pair = |index_var: &str, count_var: &str| -> Result<Option<Found>, InvalidValue> {
        match (number(index_var)?, number(count_var)?) {
            (Some(index), Some(count)) => {
                check(index, count, &format!("{index_var}={index} with {count_var}={count}"))?;
                Ok(Some(Found { index, count, source: format!("{index_var}={index}, {count_var}={count}") }))
            }
            _ => Ok(None),
        }
    };
    // One srun task per shard: SLURM_PROCID of SLURM_NTASKS.
    if let Some(f) = pair("SLURM_PROCID", "SLURM_NTASKS")?.filter(|f| f.count > 1) {
        return Ok(Some(f));
    }
    // A job array: task IDs may start anywhere (--array=1-8), so count from the smallest.
    if let (Some(id), Some(count)) = (number("SLURM_ARRAY_TASK_ID")?, number("SLURM_ARRAY_TASK_COUNT")?) {
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let index = id.checked_sub(min).ok_or_else(|| {
            format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min} in the environment")
        })?;
        check(index, count, &format!("SLURM_ARRAY_TASK_ID={id} with SLURM_ARRAY_TASK_COUNT={count}"))?;
        if count > 1 {
            let source = format!("SLURM_ARRAY_TASK_ID={id}, SLURM_ARRAY_TASK_COUNT={count}");
            return Ok(Some(Found { index, count, source }));
        }
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let (count, from) = match (count_flag, number("RESPBENCH_SHARDS")?) {
            (Some(c), _) => (c, format!("--shard-count {c}")),
            (None, Some(c)) => (c, format!("RESPBENCH_SHARDS={c}")),
            (None, None) => {
                return Err(format!(
                    "JOB_COMPLETION_INDEX={index} is set but not the number of shards: set RESPBENCH_SHARDS \
                     in the Job's env (its completions) or pass --shard-count"
                )
                .into());
            }
        };
        check(index, count, &format!("JOB_COMPLETION_INDEX={index} with {from}"))?;
        return Ok((count > 1).then(|| Found {
            index,
            count,
            source: format!("JOB_COMPLETION_INDEX={index}, {from}"),
        }));
    }
    for (index_var, count_var) in [("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE")] {
        if let Some(f) = pair(index_var, count_var)?.filter(|f| f.count > 1) {
            return Ok(Some(f));
        }
    }
    if let Some(c) = count_flag.filter(|&c| c > 1) {
        return Err(format!(
            "--shard-count {c} needs the shard's index: pass --shard I/{c} or run it as a Kubernetes Indexed \
             Job (JOB_COMPLETION_INDEX)"
        )
        .into());
    }
    Ok(None)
}

fn check(index: u32, count: u32, what: &str) -> Result<(), InvalidValue> {
    if count == 0 {
        return Err(format!("{what}: the number of shards must be at least 1").into());
    }
    if index >= count {
        return Err(format!("{what}: the index must be below the number of shards (0 to {})", count - 1).into());
    }
    Ok(())
}

/// `I/N`, with I below N.
pub(crate) fn shard_arg(v: &str) -> Result<(u32, u32), InvalidValue> {
    let expected = || format!("'{v}' is not I/N such as 0/4 (shard I of N, I from 0 to N-1)");
    let (i, n) = v.split_once('/').ok_or_else(expected)?;
    let (i, n) = (i.trim().parse::<u32>().map_err(|_| expected())?, n.trim().parse::<u32>().map_err(|_| expected())?);
    if n == 0 || i >= n {
        return Err(format!("'{v}': I must be from 0 to N-1 and N at least 1").into());
    }
    Ok((i, n))
}

pub(crate) fn shard_count(v: &str) -> Result<u32, InvalidValue> {
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("'{v}' is not a number of shards (a whole number above 0)").into()),
    }
}

pub use crate::config::parse::start_time;

/// A time as Unix seconds with milliseconds, for messages.
pub fn unix_text(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_flag_wins_and_the_schedulers_follow() {
        let slurm = env_of(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2"), ("PMI_RANK", "0"), ("PMI_SIZE", "2")]);
        assert_eq!(find(Some((0, 2)), None, &slurm).unwrap().unwrap().index, 0);
        let f = find(None, None, &slurm).unwrap().unwrap();
        assert_eq!((f.index, f.count, f.source.as_str()), (1, 2, "SLURM_PROCID=1, SLURM_NTASKS=2"));
        let array = env_of(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(find(None, None, &array).unwrap().unwrap().index, 2);
        let k8s = env_of(&[("JOB_COMPLETION_INDEX", "2"), ("RESPBENCH_SHARDS", "3")]);
        assert_eq!(find(None, None, &k8s).unwrap().unwrap().count, 3);
        assert_eq!(find(None, Some(4), &k8s).unwrap().unwrap().count, 4);
        let bare = env_of(&[("JOB_COMPLETION_INDEX", "2")]);
        assert!(find(None, None, &bare).unwrap_err().contains("RESPBENCH_SHARDS"));
        let mpi = env_of(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]);
        assert_eq!(find(None, None, &mpi).unwrap().unwrap().index, 3);
        assert_eq!(find(None, None, &env_of(&[])).unwrap(), None);
        let bad = env_of(&[("PMI_RANK", "4"), ("PMI_SIZE", "4")]);
        assert!(find(None, None, &bad).unwrap_err().contains("PMI_RANK=4"));
    }

    #[test]
    fn shard_arguments_are_checked() {
        assert_eq!(shard_arg("1/2"), Ok((1, 2)));
        assert!(shard_arg("2/2").is_err());
        assert!(shard_arg("x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn times_parse_as_rfc3339_or_unix_seconds() {
        let at = |s: &str| start_time(s).unwrap().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        assert_eq!(at("1893596645.5"), 1_893_596_645.5);
        assert_eq!(at("2030-01-02T15:04:05Z"), 1_893_596_645.0);
        assert_eq!(at("2030-01-02T16:04:05.25+01:00"), 1_893_596_645.25);
        assert_eq!(at("1970-01-01T00:00:00Z"), 0.0);
        assert_eq!(at("2030-01-02 15:04:05z"), 1_893_596_645.0);
        assert!(start_time("2030-01-02T15:04:05").is_err(), "no offset: which zone?");
        assert!(start_time("tomorrow").unwrap_err().contains("'tomorrow'"));
        assert!(start_time("2030-13-02T15:04:05Z").is_err());
    }
}
