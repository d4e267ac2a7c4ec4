//! The spread of a figure over repeated runs: median, range, and a 95 % confidence interval
//! of the mean (Student's t), so users can tell a real difference from noise.

use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Spread {
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// 95 % confidence interval of the mean; equal to the mean for a single run.
    pub ci95_low: f64,
    pub ci95_high: f64,
}

/// Two-sided 97.5 % quantiles of Student's t for 1 to 30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

impl Spread {
    /// `None` for no values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let half_width = if n > 1 {
            let variance = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let t = T_975.get(n - 2).copied().unwrap_or(1.96);
            t * (variance / n as f64).sqrt()
        } else {
            0.0
        };
        Some(Spread {
            runs: n,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            ci95_low: mean - half_width,
            ci95_high: mean + half_width,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_runs() {
        let s = Spread::of(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.mean), (11.0, 10.0, 12.0, 11.0));
        // sd = 1, n = 3: half width = 4.303 / sqrt(3)
        assert!((s.ci95_high - 11.0 - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(Spread::of(&[5.0]).unwrap().ci95_low, 5.0);
        assert!(Spread::of(&[]).is_none());
        assert_eq!(Spread::of(&[1.0, 3.0]).unwrap().median, 2.0);
    }
}
