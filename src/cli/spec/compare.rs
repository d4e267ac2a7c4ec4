//! `respbench spec compare BASELINE CANDIDATE`: two summaries of `respbench spec --output-dir`
//! (a baseline server and a candidate), each specification that ran in both judged as
//! `respbench compare` judges two results, from their runs (`respbench spec --runs N`): a
//! verdict per specification, or why there is none.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use super::error::SpecError;
use super::summary::{Summary, Verdict};
use crate::cli::ab::compare::{VerdictFlags, of_runs};
use crate::cli::results::load_run;
use crate::cli::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::report::ab::text::{headline, headline_subject};

/// Judges each specification of two `respbench spec` summaries, the candidate against the baseline.
#[derive(Debug, Parser)]
#[command(name = "respbench spec compare", version, max_term_width = 100)]
struct CompareArgs {
    /// The baseline's output directory (or its summary.json).
    baseline: PathBuf,
    /// The candidate's output directory (or its summary.json).
    candidate: PathBuf,
    #[command(flatten)]
    verdict: VerdictFlags,
}

pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: CompareArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if args.verdict.writes_files() {
        return usage_error("--json and --markdown write one verdict: spec compare prints one per specification");
    }
    let (baseline, candidate) = match (load(&args.baseline), load(&args.candidate)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return usage_error(&e),
    };
    let mut rows = Vec::new();
    let mut regressed = false;
    for a in &baseline.1.specs {
        let Some(b) = candidate.1.specs.iter().find(|b| b.name == a.name) else {
            rows.push([a.name.clone(), "-".into(), "-".into(), "only in the baseline".into()]);
            continue;
        };
        let ops = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"));
        let verdict = if a.verdict != Verdict::Ran || b.verdict != Verdict::Ran {
            format!("not judged: {} in the baseline, {} in the candidate", a.verdict.word(), b.verdict.word())
        } else {
            match judge(&baseline.0, &a.files, &candidate.0, &b.files, &args.verdict) {
                Ok((line, worse)) => {
                    regressed |= worse;
                    line
                }
                Err(e) => format!("not judged: {e}"),
            }
        };
        rows.push([a.name.clone(), ops(a.ops_per_sec), ops(b.ops_per_sec), verdict]);
    }
    for b in candidate.1.specs.iter().filter(|b| !baseline.1.specs.iter().any(|a| a.name == b.name)) {
        rows.push([b.name.clone(), "-".into(), "-".into(), "only in the candidate".into()]);
    }
    print!("{}", table(&rows));
    if regressed { ExitCode::from(EXIT_FAILURE) } else { ExitCode::SUCCESS }
}

/// A summary and the directory its files are in.
fn load(path: &Path) -> Result<(PathBuf, Summary), SpecError> {
    let file = if path.is_dir() { path.join("summary.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let summary: Summary =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a respbench spec summary ({e})", file.display()))?;
    let dir = file.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    Ok((dir, summary))
}

/// One specification's two results judged: the verdict line, and whether it is a regression
/// past `--fail-on-regression`.
fn judge(
    a_dir: &Path,
    a_files: &[String],
    b_dir: &Path,
    b_files: &[String],
    flags: &VerdictFlags,
) -> Result<(String, bool), SpecError> {
    let result = |dir: &Path, files: &[String]| {
        let name = files
            .iter()
            .filter_map(|f| Path::new(f).file_name())
            .find(|n| n.to_string_lossy().ends_with(".json") && !n.to_string_lossy().ends_with(".memtier.json"))
            .ok_or("the summary names no result file")?;
        load_run(&dir.join(name))
    };
    let (a, b) = (result(a_dir, a_files)?, result(b_dir, b_files)?);
    let verdicts = of_runs(&[("baseline".into(), a), ("candidate".into(), b)], &[], flags)?;
    let doc = &verdicts.docs[0];
    let line = headline(doc);
    let subject = format!("{}: ", headline_subject(doc));
    let worse = doc.regression.as_ref().is_some_and(|r| r.regressed);
    Ok((line.strip_prefix(&subject).unwrap_or(&line).to_string(), worse))
}

fn table(rows: &[[String; 4]]) -> String {
    let headers = ["spec", "baseline ops/s", "candidate ops/s", "verdict (candidate against baseline)"];
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(&row[..3]) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let all = std::iter::once(headers.map(String::from)).chain(rows.iter().cloned());
    for row in all {
        out.push_str(&format!(
            "{:<w0$}  {:>w1$}  {:>w2$}  {}\n",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        ));
    }
    out
}
