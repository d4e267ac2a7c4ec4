//! The statistics of an A/B comparison, free of I/O: from per-round (or per-run) values of a
//! figure on each side, the relative change of B against A with its confidence interval, and
//! the verdict. Two methods: exact rank tests (Wilcoxon signed-rank for interleaved round
//! pairs, Mann-Whitney for runs taken apart), whose intervals are the Hodges-Lehmann ones read
//! off order statistics; or a seeded percentile bootstrap. Both work on log ratios, so a
//! change is a ratio (B/A - 1) and 10 % up and 9.1 % down are the same distance apart.

use crate::workload::rng::Rng;

/// How the interval is found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Wilcoxon signed-rank (paired) or Mann-Whitney (unpaired), exact distribution.
    Exact,
    /// Percentile bootstrap of the mean log ratio, `resamples` draws seeded by `seed`.
    Bootstrap { resamples: usize, seed: u64 },
}

/// What a verdict is held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Two-sided confidence of the interval, 0.95 for 95 %.
    pub confidence: f64,
    /// A change smaller than this (0.02 for 2 %) is called no change even when it is real.
    pub noise: f64,
    pub method: Method,
}

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
        }
    }
}

/// The change of B against A as ratios minus one (0.05: B is 5 % higher).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The interval's actual coverage (exact tests reach the asked one only in steps).
    pub coverage: f64,
    pub verdict: Verdict,
    /// The interval excludes 0 but the change is under the noise threshold.
    pub within_noise: bool,
}

/// A verdict that cannot be given, and why (the message says it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Impossible {
    /// Each side has fewer runs than the method needs: more runs would give a verdict.
    #[error("{0}")]
    TooFewRuns(String),
    /// Too few round pairs, or a figure with no ratio.
    #[error("{0}")]
    Other(String),
}

/// Interleaved rounds: `a[i]` and `b[i]` were measured side by side.
pub fn paired(a: &[f64], b: &[f64], better: Better, s: &Settings) -> Result<Change, Impossible> {
    let n = a.len().min(b.len());
    let d = log_ratios(&a[..n], &b[..n])?;
    let alpha = 1.0 - s.confidence;
    let (estimate, low, high, coverage) = match s.method {
        Method::Exact => {
            let dist = signed_rank_distribution(n);
            let k = order_statistic(&dist, alpha).ok_or_else(|| {
                let need = (1..=200).find(|&m| order_statistic(&signed_rank_distribution(m), alpha).is_some());
                Impossible::Other(format!(
                    "the exact signed-rank test at {} needs at least {} round pairs; there are {n}",
                    percent(s.confidence),
                    need.map_or("more".into(), |m| m.to_string())
                ))
            })?;
            let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
            for i in 0..n {
                for j in i..n {
                    walsh.push((d[i] + d[j]) / 2.0);
                }
            }
            interval_from_order(walsh, k, &dist)
        }
        Method::Bootstrap { resamples, seed } => {
            if n < 3 {
                return Err(Impossible::Other(format!("the bootstrap needs at least 3 round pairs; there are {n}")));
            }
            let mut rng = Rng::derive(seed, 0xab);
            let means = (0..resamples.max(1))
                .map(|_| (0..n).map(|_| d[rng.below(n as u64) as usize]).sum::<f64>() / n as f64)
                .collect();
            percentile_interval(mean(&d), means, alpha)
        }
    };
    Ok(judge(estimate, low, high, coverage, better, s.noise))
}

/// Runs taken apart (`--runs N` results): no pairing, the two sides as samples.
pub fn unpaired(a: &[f64], b: &[f64], better: Better, s: &Settings) -> Result<Change, Impossible> {
    let la = logs(a, "A")?;
    let lb = logs(b, "B")?;
    let (m, n) = (la.len(), lb.len());
    let alpha = 1.0 - s.confidence;
    let (estimate, low, high, coverage) = match s.method {
        Method::Exact => {
            let dist = rank_sum_distribution(m, n);
            let k = order_statistic(&dist, alpha).ok_or_else(|| {
                let need = (1..=100).find(|&r| order_statistic(&rank_sum_distribution(r, r), alpha).is_some());
                Impossible::TooFewRuns(format!(
                    "the exact rank-sum test at {} needs at least {} runs on each side; A has {m}, B has {n}",
                    percent(s.confidence),
                    need.map_or("more".into(), |r| r.to_string())
                ))
            })?;
            let diffs = lb.iter().flat_map(|y| la.iter().map(move |x| y - x)).collect();
            interval_from_order(diffs, k, &dist)
        }
        Method::Bootstrap { resamples, seed } => {
            if m < 3 || n < 3 {
                return Err(Impossible::TooFewRuns(format!(
                    "the bootstrap needs at least 3 runs on each side; A has {m}, B has {n}"
                )));
            }
            let mut rng = Rng::derive(seed, 0xba);
            let mut draw =
                |v: &[f64]| (0..v.len()).map(|_| v[rng.below(v.len() as u64) as usize]).sum::<f64>() / v.len() as f64;
            let diffs = (0..resamples.max(1)).map(|_| draw(&lb) - draw(&la)).collect();
            percentile_interval(mean(&lb) - mean(&la), diffs, alpha)
        }
    };
    Ok(judge(estimate, low, high, coverage, better, s.noise))
}

/// `95 %`, `98.75 %`: a confidence as people write it, to two decimals at most.
pub fn percent(p: f64) -> String {
    format!("{} %", (p * 10_000.0).round() / 100.0)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn logs(v: &[f64], side: &str) -> Result<Vec<f64>, Impossible> {
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            if x > 0.0 && x.is_finite() {
                Ok(x.ln())
            } else {
                Err(Impossible::Other(format!("{side}'s round {} measured {x}, which has no ratio", i + 1)))
            }
        })
        .collect()
}

fn log_ratios(a: &[f64], b: &[f64]) -> Result<Vec<f64>, Impossible> {
    let (la, lb) = (logs(a, "A")?, logs(b, "B")?);
    Ok(la.iter().zip(&lb).map(|(x, y)| y - x).collect())
}

/// The verdict on an interval of log ratios.
fn judge(estimate: f64, low: f64, high: f64, coverage: f64, better: Better, noise: f64) -> Change {
    let ratio = |x: f64| x.exp() - 1.0;
    let (estimate, low, high) = (ratio(estimate), ratio(low), ratio(high));
    let significant = low > 0.0 || high < 0.0;
    let within_noise = significant && estimate.abs() < noise;
    let verdict = if !significant || within_noise {
        Verdict::NoChange
    } else if (estimate > 0.0) == (better == Better::Higher) {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    Change { estimate, low, high, coverage, verdict, within_noise }
}

/// `dist[t]`: the probability that the statistic is `t` under no change. The largest `k >= 1`
/// with P(T < k) <= alpha/2, or `None` when even the extremes are likelier than that.
fn order_statistic(dist: &[f64], alpha: f64) -> Option<usize> {
    let mut below = 0.0;
    let mut k = 0;
    for (t, p) in dist.iter().enumerate() {
        // A hair of slack for rounding in the sums: 2^-6 must pass 0.05/2 exactly as it is.
        if below + p > alpha / 2.0 + 1e-12 {
            break;
        }
        below += p;
        k = t + 1;
    }
    (k >= 1 && k <= dist.len() / 2).then_some(k)
}

/// The median of `values` and its interval between the k-th smallest and k-th largest, with
/// the interval's coverage under `dist`.
fn interval_from_order(mut values: Vec<f64>, k: usize, dist: &[f64]) -> (f64, f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let len = values.len();
    let median = if len % 2 == 1 { values[len / 2] } else { (values[len / 2 - 1] + values[len / 2]) / 2.0 };
    let tail: f64 = dist[..k].iter().sum();
    (median, values[k - 1], values[len - k], 1.0 - 2.0 * tail)
}

fn percentile_interval(estimate: f64, mut draws: Vec<f64>, alpha: f64) -> (f64, f64, f64, f64) {
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (draws.len() - 1) as f64).round() as usize).min(draws.len() - 1)];
    (estimate, at(alpha / 2.0), at(1.0 - alpha / 2.0), 1.0 - alpha)
}

/// The null distribution of the signed-rank statistic T+ for `n` pairs (index: T+), by
/// counting the subsets of 1..=n with each sum, as probabilities (2^-n each).
fn signed_rank_distribution(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut p = vec![0.0; max + 1];
    p[0] = 1.0;
    for rank in 1..=n {
        for t in (rank..=max).rev() {
            p[t] = (p[t] + p[t - rank]) / 2.0;
        }
        for v in p.iter_mut().take(rank) {
            *v /= 2.0;
        }
    }
    p
}

/// The null distribution of the Mann-Whitney U for samples of `m` and `n`, as probabilities:
/// the arrangements of m A's and n B's with U pairs (B above A), over all C(m+n, m).
fn rank_sum_distribution(m: usize, n: usize) -> Vec<f64> {
    // ways[j][u]: arrangements of i A's and j B's with U = u, built up over i.
    let mut ways: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        for j in 0..=n {
            let mut row = vec![0.0; i * j + 1];
            // The last item is an A (it is above j B's) or a B.
            for (u, w) in ways[j].iter().enumerate() {
                row[u + j] += w;
            }
            if j > 0 {
                for (u, w) in next[j - 1].iter().enumerate() {
                    row[u] += w;
                }
            }
            next.push(row);
        }
        ways = next;
    }
    let all = &ways[n];
    let total: f64 = all.iter().sum();
    all.iter().map(|w| w / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXACT: Settings = Settings { confidence: 0.95, noise: 0.02, method: Method::Exact };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn signed_rank_tail_matches_the_tables() {
        // n = 10: P(T+ <= 8) = 25/1024, P(T+ <= 9) = 33/1024; the 95 % interval uses the 9th Walsh average.
        let d = signed_rank_distribution(10);
        assert!(close(d[..9].iter().sum::<f64>(), 25.0 / 1024.0));
        assert!(close(d.iter().sum::<f64>(), 1.0));
        assert_eq!(order_statistic(&d, 0.05), Some(9));
        // Five pairs cannot reach 95 %: the most extreme outcome alone has 1/32 > 2.5 %.
        assert_eq!(order_statistic(&signed_rank_distribution(5), 0.05), None);
        assert_eq!(order_statistic(&signed_rank_distribution(6), 0.05), Some(1));
    }

    #[test]
    fn rank_sum_tail_matches_the_tables() {
        // 5 and 5: P(U <= 2) = 4/252 <= 2.5 % < P(U <= 3) = 7/252; the interval is the 3rd difference.
        let d = rank_sum_distribution(5, 5);
        assert_eq!(d.len(), 26);
        assert!(close(d[..3].iter().sum::<f64>(), 4.0 / 252.0));
        assert_eq!(order_statistic(&d, 0.05), Some(3));
        assert_eq!(order_statistic(&rank_sum_distribution(3, 3), 0.05), None);
        assert_eq!(order_statistic(&rank_sum_distribution(4, 4), 0.05), Some(1));
        assert!(close(rank_sum_distribution(2, 3).iter().sum::<f64>(), 1.0));
    }

    #[test]
    fn paired_exact_interval_from_known_ratios() {
        // Six pairs whose ratios are e^0.01 .. e^0.06: the Walsh averages run 0.01 .. 0.06 and
        // with k = 1 the interval is their extremes; the estimate their median, 0.035.
        let a = [100.0; 6];
        let b: Vec<f64> = (1..=6).map(|i| 100.0 * (0.01 * i as f64).exp()).collect();
        let c = paired(&a, &b, Better::Higher, &EXACT).unwrap();
        assert!(close(c.estimate, 0.035f64.exp() - 1.0), "{c:?}");
        assert!(close(c.low, 0.01f64.exp() - 1.0) && close(c.high, 0.06f64.exp() - 1.0), "{c:?}");
        assert!(close(c.coverage, 1.0 - 2.0 / 64.0));
        assert_eq!(c.verdict, Verdict::Faster);
        // The same as latency: higher is worse.
        assert_eq!(paired(&a, &b, Better::Lower, &EXACT).unwrap().verdict, Verdict::Slower);
    }

    #[test]
    fn paired_needs_enough_pairs_and_says_how_many() {
        let err = paired(&[1.0; 5], &[2.0; 5], Better::Higher, &EXACT).unwrap_err();
        assert!(err.to_string().contains("at least 6 round pairs; there are 5"), "{err}");
        assert!(
            paired(&[1.0, 0.0, 1.0], &[1.0; 3], Better::Higher, &EXACT).unwrap_err().to_string().contains("round 2")
        );
    }

    #[test]
    fn an_interval_across_zero_or_inside_the_noise_is_no_change() {
        let a = [100.0; 8];
        let mixed = [101.0, 99.0, 100.5, 99.5, 102.0, 98.0, 100.2, 99.8];
        assert_eq!(paired(&a, &mixed, Better::Higher, &EXACT).unwrap().verdict, Verdict::NoChange);
        let tiny: Vec<f64> = (1..=8).map(|i| 100.0 + 0.1 * i as f64).collect();
        let c = paired(&a, &tiny, Better::Higher, &EXACT).unwrap();
        assert!(c.within_noise && c.verdict == Verdict::NoChange, "{c:?}");
    }

    #[test]
    fn unpaired_exact_interval_from_known_samples() {
        // Differences of logs: b's logs are a's plus 0.10 .. : all 25 differences positive.
        let a: Vec<f64> = (0..5).map(|i| (0.01 * i as f64).exp()).collect();
        let b: Vec<f64> = (0..5).map(|i| (0.10 + 0.01 * i as f64).exp()).collect();
        let c = unpaired(&a, &b, Better::Higher, &EXACT).unwrap();
        // Differences 0.10 + 0.01 (j - i): sorted, the 3rd is 0.07 and the 3rd largest 0.13.
        assert!(close(c.low, 0.07f64.exp() - 1.0) && close(c.high, 0.13f64.exp() - 1.0), "{c:?}");
        assert!(close(c.estimate, 0.10f64.exp() - 1.0));
        assert_eq!(c.verdict, Verdict::Faster);
        let one = unpaired(&[1.0], &[2.0], Better::Higher, &EXACT).unwrap_err();
        assert!(
            matches!(&one, Impossible::TooFewRuns(why) if why.contains("at least 4 runs on each side; A has 1, B has 1")),
            "{one}"
        );
    }

    /// Rounds on a drifting machine with neighbours that come and go: each round's throughput
    /// is the machine's speed (a random walk, a third of it taken by a neighbour one round in
    /// five) times its own noise; B is A times `ratio`, the order drawn per pair.
    fn simulated_trial(rng: &mut Rng, ratio: f64, pairs: usize) -> (Vec<f64>, Vec<f64>) {
        let mut speed: f64 = 0.0;
        let mut round = |rng: &mut Rng| {
            speed += 0.1 * rng.normal();
            let neighbour = if rng.below(5) == 0 { 0.3f64.ln() } else { 0.0 };
            (speed + neighbour + 0.05 * rng.normal()).exp()
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..pairs {
            let (first, second) = (round(rng), round(rng));
            let (x, y) = if rng.below(2) == 0 { (first, second) } else { (second, first) };
            a.push(x);
            b.push(y * ratio);
        }
        (a, b)
    }

    #[test]
    fn a_against_a_on_a_drifting_machine_claims_a_change_at_most_five_percent_of_the_time() {
        let mut rng = Rng::derive(26, 0);
        let trials = 4000;
        let claims = |rng: &mut Rng, ratio: f64| {
            (0..trials)
                .filter(|_| {
                    let (a, b) = simulated_trial(rng, ratio, 10);
                    paired(&a, &b, Better::Higher, &EXACT).unwrap().verdict != Verdict::NoChange
                })
                .count() as f64
                / trials as f64
        };
        let false_positives = claims(&mut rng, 1.0);
        // At most 2 x 25/1024 by construction (exact, signs fair given the order drawn); the
        // binomial spread of 4000 trials is 0.35 %.
        assert!(false_positives <= 0.05, "false-positive rate {false_positives}");
        // A 20 % slowdown is found in a third of the trials (33 % with this seed) despite a
        // neighbour taking 70 % of one round in five at random: more pairs find it more often.
        let detected = claims(&mut rng, 0.8);
        assert!(detected > 0.25, "detection rate {detected}; false positives {false_positives}");
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_a_steady_change() {
        let s = Settings { method: Method::Bootstrap { resamples: 10_000, seed: 7 }, ..EXACT };
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0];
        let b: Vec<f64> = a.iter().zip([0.9, 0.91, 0.89, 0.9, 0.92, 0.88]).map(|(x, r)| x * r).collect();
        let one = paired(&a, &b, Better::Higher, &s).unwrap();
        assert_eq!(one, paired(&a, &b, Better::Higher, &s).unwrap());
        assert!(one.low < -0.09 && one.high > -0.11 && one.high < -0.09 + 0.01, "{one:?}");
        assert_eq!(one.verdict, Verdict::Slower);
        // A constant ratio: every resample gives it, so the interval is the point.
        let c = paired(&[10.0; 4], &[11.0; 4], Better::Higher, &s).unwrap();
        assert!(close(c.low, 0.1) && close(c.high, 0.1), "{c:?}");
        let u = unpaired(&a, &b, Better::Higher, &s).unwrap();
        assert_eq!(u.verdict, Verdict::Slower);
    }
}
