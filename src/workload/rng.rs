//! A small, fast, seedable random stream (wyrand) and the samplers built on it.
//! One per connection, so no generator is ever shared between threads.

/// wyrand: 64 bits of state, passes BigCrush, a multiply and a xor per draw.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A stream for `stream` (a connection's index) derived from the run's seed.
    pub fn derive(seed: u64, stream: u64) -> Rng {
        Rng(splitmix64(seed ^ splitmix64(stream.wrapping_add(0x9e37_79b9_7f4a_7c15))))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift; the bias is below 2^-40 for our ranges.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal, by Box-Muller (one of the pair is used).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: ln is finite
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// A number in `lo..=hi`: uniform, or (memtier's WAIT timeout) normal around the middle with a
/// sixth of the range as deviation, redrawn outside it.
pub fn between(rng: &mut Rng, lo: u64, hi: u64, normal: bool) -> u64 {
    if hi <= lo {
        return lo;
    }
    if !normal {
        return lo + rng.below(hi - lo + 1);
    }
    let span = (hi - lo) as f64;
    let median = lo as f64 + span / 2.0 + 0.5;
    loop {
        let x = median + span / 6.0 * rng.normal();
        if x >= lo as f64 && x < (hi + 1) as f64 {
            return x as u64;
        }
    }
}

/// The splitmix64 finaliser: spreads nearby seeds far apart.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Zipf over ranks `1..=n` with exponent `s`, by rejection-inversion (Hörmann and Derflinger,
/// 1996): constant time per draw, no table, any `n`.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    threshold: f64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        let n = n as f64;
        let mut z = Zipf { n, s, h_integral_x1: 0.0, h_integral_n: 0.0, threshold: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n + 0.5);
        z.threshold = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `1..=n`; rank 1 is the most frequent.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.threshold || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.s) * log_x) * log_x
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }
}

/// `(e^x - 1) / x`, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.exp_m1() / x } else { 1.0 + x / 2.0 }
}

/// `ln(1 + x) / x`, continuous at 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.ln_1p() / x } else { 1.0 - x / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(7, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::derive(7, 0).next_u64(), Rng::derive(7, 1).next_u64());
        assert_ne!(Rng::derive(7, 0).next_u64(), Rng::derive(8, 0).next_u64());
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut rng = Rng::derive(1, 1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[rng.below(10) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    }

    #[test]
    fn normal_has_unit_variance() {
        let mut rng = Rng::derive(3, 0);
        let draws: Vec<f64> = (0..100_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03, "{mean} {var}");
    }

    #[test]
    fn zipf_matches_its_law() {
        // With s = 1 over 100 ranks, P(1) = 1 / H(100) ≈ 0.1928 and P(1)/P(2) = 2.
        let z = Zipf::new(100, 1.0);
        let mut rng = Rng::derive(5, 0);
        let mut counts = [0u32; 101];
        for _ in 0..200_000 {
            let k = z.sample(&mut rng);
            assert!((1..=100).contains(&k));
            counts[k as usize] += 1;
        }
        let p1 = f64::from(counts[1]) / 200_000.0;
        assert!((p1 - 0.1928).abs() < 0.01, "{p1}");
        let ratio = f64::from(counts[1]) / f64::from(counts[2]);
        assert!((ratio - 2.0).abs() < 0.1, "{ratio}");
    }
}
