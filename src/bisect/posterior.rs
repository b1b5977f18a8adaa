//! The probability of each candidate being the culprit, from every sample taken
//! (pure). The culprit c is the first bad candidate (1..=n; 0 is the good end, n
//! the bad end); with a uniform prior, P(c | data) ∝ Π_{k<c} p(x_k | good) ·
//! Π_{k≥c} p(x_k | bad), so log P(c) = const + Σ_{k≥c} e_k with e_k the evidence
//! (log-likelihood ratio, bad over good) of candidate k's samples.
//!
//! Each candidate's evidence is measured by a [`Judge`] built from the
//! reference runs of both ends: against the machine's level at each run's
//! time (so slow drift cancels), with the noise's own shape learnt from the
//! references, "good" and "bad" as the two sides of the boundary rather than
//! two points, and runs that share references counted only as much as those
//! references allow; the probabilities are averaged over the doubt about the
//! regression's size ([`Judge::around`]). The sum is tempered by [`TEMPER`],
//! chosen with the calibration study of docs/bisect.md: in every noise regime
//! there, a stated probability p is right at least p of the time.

use crate::stats::summary::median_by_selection;

/// How much of the runs' summed log-likelihood ratio is believed.
pub const TEMPER: f64 = 0.7;
/// Reference runs (of either end) the machine's level at a run's time is the median of.
pub const WINDOW: usize = 16;

/// The samples of one candidate: values (already inverted when bisecting an
/// improvement) and the run numbers of the last `seq.len()` of them (the
/// others' times are unknown: cached from an earlier bisection).
#[derive(Debug, Clone, Copy)]
pub struct Samples<'a> {
    pub values: &'a [f64],
    pub seq: &'a [u64],
}

fn median(v: &[f64]) -> f64 {
    median_by_selection(&mut v.to_vec())
}

/// A reference run on good's scale: its time and log value (bad ones shifted
/// down by the regression).
#[derive(Debug, Clone, Copy)]
struct Timed {
    t: u64,
    log: f64,
}

/// The indexes of the `WINDOW` timed references nearest to `t` (`refs` sorted
/// by time), leaving out the one at index `skip`; `None` with too few.
fn window(refs: &[Timed], t: u64, skip: Option<usize>) -> Option<Vec<usize>> {
    if refs.len() < WINDOW + usize::from(skip.is_some()) {
        return None;
    }
    // Walk outwards from where `t` would sit, taking the nearer side each time.
    let at = refs.partition_point(|r| r.t < t);
    let (mut lo, mut hi) = (at, at);
    let mut picked = Vec::with_capacity(WINDOW);
    while picked.len() < WINDOW {
        let left = (lo > 0).then(|| t.abs_diff(refs[lo - 1].t));
        let right = (hi < refs.len()).then(|| t.abs_diff(refs[hi].t));
        let take_left = match (left, right) {
            (Some(l), Some(r)) => l <= r,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let i = if take_left {
            lo -= 1;
            lo
        } else {
            hi += 1;
            hi - 1
        };
        if Some(i) != skip {
            picked.push(i);
        }
    }
    (picked.len() == WINDOW).then_some(picked)
}

fn logs(v: &[f64]) -> Vec<f64> {
    v.iter()
        .filter(|x| **x > 0.0 && x.is_finite())
        .map(|x| x.ln())
        .collect()
}

/// The timed references of one end (its last `seq.len()` values), on good's
/// scale (`shift` subtracted from each log).
fn timed(r: Samples, shift: f64) -> Vec<Timed> {
    let known = r.seq.len().min(r.values.len());
    r.values[r.values.len() - known..]
        .iter()
        .zip(&r.seq[r.seq.len() - known..])
        .filter(|(x, _)| **x > 0.0 && x.is_finite())
        .map(|(x, &t)| Timed {
            t,
            log: x.ln() - shift,
        })
        .collect()
}

/// The regression δ (bad over good, in logs) measured run by run against the
/// other end's level at the same time: each bad run less the median of the
/// [`PAIRED`] good runs nearest to it, and the median of the [`PAIRED`] bad
/// runs nearest to each good run less that run; δ is the median of all these.
/// The ends are not measured equally often at every moment (the search asks
/// for them as it needs them), so the plain difference of their medians would
/// carry the drift of the machine between the moments; this does not. `None`
/// without [`PAIRED`] timed runs of each end.
fn regression(good: Samples, bad: Samples) -> Option<f64> {
    let (mut g, mut b) = (timed(good, 0.0), timed(bad, 0.0));
    if g.len() < PAIRED || b.len() < PAIRED {
        return None;
    }
    g.sort_by_key(|r| r.t);
    b.sort_by_key(|r| r.t);
    let near = |refs: &[Timed], t: u64| {
        let at = refs.partition_point(|r| r.t < t);
        let mut idx: Vec<usize> =
            (at.saturating_sub(PAIRED)..(at + PAIRED).min(refs.len())).collect();
        idx.sort_by_key(|&i| refs[i].t.abs_diff(t));
        idx.truncate(PAIRED);
        median(&idx.iter().map(|&i| refs[i].log).collect::<Vec<_>>())
    };
    let diffs: Vec<f64> = b
        .iter()
        .map(|r| r.log - near(&g, r.t))
        .chain(g.iter().map(|r| near(&b, r.t) - r.log))
        .collect();
    Some(median(&diffs))
}

/// Runs of the other end a reference run is paired with, for [`regression`].
const PAIRED: usize = 8;

/// The density of a run's residual (its log value less the machine's level at
/// its time), estimated from the reference runs' own residuals: a Gaussian
/// kernel density on a grid, with a floor so that no value is impossible.
#[derive(Debug, Clone)]
struct Density {
    lo: f64,
    step: f64,
    grid: Vec<f64>,
    floor: f64,
}

impl Density {
    const POINTS: usize = 1024;

    fn new(residuals: &[f64], spread: f64, reach: f64) -> Density {
        let n = residuals.len() as f64;
        // Silverman's rule with a robust spread.
        let h = (0.9 * spread * n.powf(-0.2)).max(1e-4);
        let (min, max) = residuals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let lo = min - 5.0 * h - reach;
        let hi = max + 5.0 * h + reach;
        let step = (hi - lo) / (Self::POINTS - 1) as f64;
        let mut grid = vec![0.0; Self::POINTS];
        let norm = 1.0 / (n * h * (2.0 * std::f64::consts::PI).sqrt());
        let half = (5.0 * h / step).ceil() as usize;
        for &r in residuals {
            let centre = ((r - lo) / step).round() as usize;
            let from = centre.saturating_sub(half);
            let to = (centre + half).min(Self::POINTS - 1);
            for (j, g) in grid.iter_mut().enumerate().take(to + 1).skip(from) {
                let z = (lo + j as f64 * step - r) / h;
                *g += norm * (-0.5 * z * z).exp();
            }
        }
        // One percent of the mass spread evenly: a run no reference resembles
        // is unlikely, not impossible.
        let floor = 0.01 / (hi - lo);
        Density {
            lo,
            step,
            grid,
            floor,
        }
    }

    fn at(&self, r: f64) -> f64 {
        let x = (r - self.lo) / self.step;
        if !(x >= 0.0 && x <= (Self::POINTS - 1) as f64) {
            return self.floor;
        }
        let i = (x.floor() as usize).min(Self::POINTS - 2);
        let f = x - i as f64;
        self.floor + 0.99 * (self.grid[i] * (1.0 - f) + self.grid[i + 1] * f)
    }
}

/// What a candidate's runs are judged against, built once from the reference
/// runs of both ends.
///
/// The regression δ (bad over good, in logs) is measured run by run against
/// the other end nearby ([`regression`]), so drift of the machine between the
/// moments the ends were measured does not enter it. The machine's level at
/// time t is the median of the [`WINDOW`] reference runs of either end nearest
/// to t (bad ones shifted down by δ): drift moves the level, never δ. A run's
/// residual is its log value less the level; how residuals are distributed is
/// learnt from the references' own residuals (each against the level of the
/// others around it) as a kernel density f, so a slow mode, a heavy tail or a
/// skew is weighed as the machine shows it, not as a Gaussian would. Each
/// run's weight is clipped at the 99th percentile of what the references' own
/// runs would weigh, so that one run cannot decide alone.
///
/// Runs judged by the same reference runs share those references' error: a
/// candidate measured twenty times between the same few reference runs knows
/// its level no better than those references do. So the sum over its runs is
/// scaled by the ratio of the variance of its mean residual if every run had
/// its own references to the variance it has with the references it shares
/// ([`Judge::evidence`]).
#[derive(Debug, Clone)]
pub struct Judge {
    refs: Vec<Timed>,
    overall: f64,
    delta: f64,
    delta_se: f64,
    clip: f64,
    density: Density,
}

impl Judge {
    /// `None` without two usable runs of each end, or when they do not differ.
    pub fn new(good: Samples, bad: Samples) -> Option<Judge> {
        let (ga, ba) = (logs(good.values), logs(bad.values));
        if ga.len() < 2 || ba.len() < 2 {
            return None;
        }
        Judge::with_delta(
            good,
            bad,
            regression(good, bad).unwrap_or(median(&ba) - median(&ga)),
        )
    }

    /// The judges of [`Judge::new`] at three values of the regression δ: its
    /// estimate and √3 standard errors either side, with the weights of a
    /// 3-point Gauss-Hermite rule (1/6, 2/3, 1/6). With few reference runs δ is
    /// known only roughly, and the boundary δ/2 with it; averaging the
    /// probabilities over δ keeps that doubt in them.
    pub fn around(good: Samples, bad: Samples) -> Vec<(f64, Judge)> {
        let Some(j) = Judge::new(good, bad) else {
            return Vec::new();
        };
        let (d, se) = (j.delta, j.delta_se);
        let mut out = Vec::with_capacity(3);
        for (w, z) in [(1.0 / 6.0, -(3f64.sqrt())), (1.0 / 6.0, 3f64.sqrt())] {
            let dz = d + z * se;
            // Never across zero: a regression's sign is the endpoints' finding.
            if dz * d > 0.0
                && let Some(jz) = Judge::with_delta(good, bad, dz)
            {
                out.push((w, jz));
            }
        }
        let rest: f64 = out.iter().map(|(w, _)| w).sum();
        out.push((1.0 - rest, j));
        out
    }

    fn with_delta(good: Samples, bad: Samples, delta: f64) -> Option<Judge> {
        let (ga, ba) = (logs(good.values), logs(bad.values));
        if ga.len() < 2 || ba.len() < 2 || delta.abs() < 1e-12 || !delta.is_finite() {
            return None;
        }
        let mut refs = timed(good, 0.0);
        refs.extend(timed(bad, delta));
        refs.sort_by_key(|r| r.t);
        let pooled: Vec<f64> = ga
            .iter()
            .copied()
            .chain(ba.iter().map(|x| x - delta))
            .collect();
        let overall = median(&pooled);
        let level = |w: &[usize]| median(&w.iter().map(|&i| refs[i].log).collect::<Vec<_>>());
        // Each timed reference around the level of the others next to it
        // (drift left out); without enough timed ones, around the overall level.
        let residuals: Vec<f64> = if refs.len() > WINDOW {
            (0..refs.len())
                .filter_map(|i| window(&refs, refs[i].t, Some(i)).map(|w| refs[i].log - level(&w)))
                .collect()
        } else {
            pooled.iter().map(|x| x - overall).collect()
        };
        if residuals.len() < 2 {
            return None;
        }
        let mad = 1.4826 * median(&residuals.iter().map(|x| x.abs()).collect::<Vec<_>>());
        let m = residuals.len() as f64;
        // Values beyond 4 MADs pulled in: a slow mode a few spreads away
        // widens the spread (as it must), a rare hiccup of +50% does not swamp it.
        let cap = 4.0 * mad.max(1e-4);
        let sd = (residuals
            .iter()
            .map(|x| x.clamp(-cap, cap).powi(2))
            .sum::<f64>()
            / (m - 1.0).max(1.0))
        .sqrt();
        let sigma = mad.max(sd).max(1e-3);
        let density = Density::new(&residuals, mad.max(1e-3), delta.abs());
        // The clip: what the references' own runs would weigh, as good runs
        // and as bad ones, at its 99th percentile; never under the Gaussian
        // expectation δ²/2σ² (with few references the tail is unknown).
        let llr = |r: f64| (density.at(r - delta).ln() - density.at(r).ln()).abs();
        let mut weights: Vec<f64> = residuals
            .iter()
            .flat_map(|&r| [llr(r), llr(r + delta)])
            .collect();
        weights.sort_by(f64::total_cmp);
        let p99 = weights[((weights.len() - 1) as f64 * 0.99) as usize];
        // The standard error of δ, the median of paired differences each
        // about σ² (1 + 1/PAIRED) apart: 1 / (2 f(0) √n) per median, by the
        // residuals' density at their centre.
        let f0 = density.at(0.0).max(1e-9);
        let n = (ga.len() + ba.len()) as f64;
        let delta_se = (1.0 + 1.0 / PAIRED as f64).sqrt() / (2.0 * f0 * n.sqrt());
        Some(Judge {
            refs,
            overall,
            delta,
            delta_se,
            clip: p99.max(delta * delta / (2.0 * sigma * sigma)),
            density,
        })
    }

    /// The evidence (bad over good) of a candidate's runs, tempered by `temper`.
    ///
    /// A candidate need not sit at good's level or at bad's: with a second,
    /// smaller regression in the range, or a change that only some runs show,
    /// it sits in between. So "good" is the hypothesis that its shift μ over
    /// good is below the boundary δ/2, and "bad" that it is above: each is
    /// [`AT_END`] of its prior at its end's level (the usual case, where the
    /// evidence is as strong as it can be) and the rest spread evenly over its
    /// side (μ from −δ/2 to δ/2, or δ/2 to 3δ/2). The evidence is the log ratio
    /// of the two (tempered) marginal likelihoods; a candidate between the two
    /// levels is then weighed by how far it is from the boundary, not by which
    /// level it is nearer.
    pub fn evidence(&self, cand: Samples, temper: f64) -> f64 {
        let known = cand.seq.len().min(cand.values.len());
        let untimed = cand.values.len() - known;
        let d = self.delta;
        // Shifts: the spread of each side (SIDE points each), then good's and bad's levels.
        let shifts: Vec<f64> = (0..2 * SIDE)
            .map(|j| d * (-0.5 + (j as f64 + 0.5) / SIDE as f64))
            .chain([0.0, d])
            .collect();
        let mut like = vec![0.0; shifts.len()];
        // How often each reference is in the level a run is judged by.
        let mut uses = vec![0u32; self.refs.len()];
        let (mut n, mut untimed_runs) = (0usize, 0usize);
        for (i, &x) in cand.values.iter().enumerate() {
            if !(x > 0.0 && x.is_finite()) {
                continue;
            }
            n += 1;
            let t = (i >= untimed).then(|| cand.seq[cand.seq.len() - known + (i - untimed)]);
            let level = match t.and_then(|t| window(&self.refs, t, None)) {
                Some(w) => {
                    for &j in &w {
                        uses[j] += 1;
                    }
                    median(&w.iter().map(|&j| self.refs[j].log).collect::<Vec<_>>())
                }
                None => {
                    untimed_runs += 1;
                    self.overall
                }
            };
            let r = x.ln() - level;
            // Each run's weight for a shift, against the boundary, clipped.
            let at_boundary = self.density.at(r - d / 2.0).ln();
            for (l, &mu) in like.iter_mut().zip(&shifts) {
                *l += (self.density.at(r - mu).ln() - at_boundary).clamp(-self.clip, self.clip);
            }
        }
        if n == 0 {
            return 0.0;
        }
        // Variance of the mean residual over σ², with a median level's
        // error (π/2 σ²/WINDOW) shared by the runs that use the same references:
        // 1/n + (π/2) Σ_j (uses_j / (WINDOW n))², against what the density
        // assumes, (1 + π/2 / WINDOW) / n.
        let (n_f, w_f) = (n as f64, WINDOW as f64);
        let half_pi = std::f64::consts::FRAC_PI_2;
        let mut shared: f64 = uses
            .iter()
            .map(|&u| (f64::from(u) / (w_f * n_f)).powi(2))
            .sum::<f64>();
        // Runs judged by the overall level share all the references.
        shared += (untimed_runs as f64 / n_f).powi(2) / self.refs.len().max(1) as f64;
        let actual = 1.0 / n_f + half_pi * shared;
        let assumed = (1.0 + half_pi / w_f) / n_f;
        let scale = temper * (assumed / actual).min(1.0);
        let spread = ((1.0 - AT_END) / SIDE as f64).ln();
        let side = |range: std::ops::Range<usize>, end: usize| {
            let terms: Vec<f64> = range
                .map(|j| spread + scale * like[j])
                .chain([AT_END.ln() + scale * like[end]])
                .collect();
            let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            max + terms.iter().map(|t| (t - max).exp()).sum::<f64>().ln()
        };
        side(SIDE..2 * SIDE, 2 * SIDE + 1) - side(0..SIDE, 2 * SIDE)
    }
}

/// The prior mass of each hypothesis at its end's level (the rest is spread).
pub const AT_END: f64 = 0.8;
/// Points over which the rest of each side's prior is spread.
const SIDE: usize = 16;

/// The evidence (bad over good) of a candidate's samples; 0 with no samples or
/// unusable references. See [`Judge`].
pub fn evidence(cand: Samples, good: Samples, bad: Samples, temper: f64) -> f64 {
    match Judge::new(good, bad) {
        Some(j) if !cand.values.is_empty() => j.evidence(cand, temper),
        _ => 0.0,
    }
}

/// P(culprit = c) for c in 0..=n (index 0 is always 0): from the evidence of
/// candidates 1..n-1 (`evidence[k]`, 0 for unmeasured or skipped ones).
pub fn posterior(evidence: &[f64]) -> Vec<f64> {
    let n = evidence.len().saturating_sub(1);
    let mut out = vec![0.0; evidence.len()];
    if n == 0 {
        return out;
    }
    // log w_c = Σ_{k=c}^{n-1} e_k (the bad end's own evidence is the same for every c).
    let mut logw = vec![f64::NEG_INFINITY; n + 1];
    let mut acc = 0.0;
    for c in (1..=n).rev() {
        logw[c] = acc;
        if c < n {
            logw[c] = acc + evidence[c];
            acc += evidence[c];
        }
    }
    let max = logw[1..].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    for c in 1..=n {
        out[c] = (logw[c] - max).exp();
        total += out[c];
    }
    for p in out.iter_mut() {
        *p /= total;
    }
    out
}

/// P(culprit ≤ k) for every k.
pub fn cdf(post: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    post.iter()
        .map(|p| {
            acc += p;
            acc.min(1.0)
        })
        .collect()
}

/// The most likely culprit and its probability.
pub fn top(post: &[f64]) -> (usize, f64) {
    post.iter().copied().enumerate().fold(
        (0, 0.0),
        |best, (i, p)| if p > best.1 { (i, p) } else { best },
    )
}

/// The fewest candidates, in order, whose probabilities sum to at least `level`
/// (most likely first when choosing), returned in index order.
pub fn credible_set(post: &[f64], level: f64) -> Vec<usize> {
    let mut idx: Vec<usize> = (1..post.len()).collect();
    idx.sort_by(|&a, &b| post[b].total_cmp(&post[a]));
    let mut acc = 0.0;
    let mut out = Vec::new();
    for i in idx {
        out.push(i);
        acc += post[i];
        if acc >= level {
            break;
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_posterior_follows_the_evidence() {
        // Candidates 1..=4 of n = 5; 1 and 2 look good, 3 and 4 bad.
        let e = [0.0, -5.0, -5.0, 5.0, 5.0, 0.0];
        let p = posterior(&e);
        assert_eq!(p[0], 0.0);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let (c, pc) = top(&p);
        assert_eq!(c, 3);
        assert!(pc > 0.98, "{p:?}");
        // No evidence: uniform over 1..=n.
        let p = posterior(&[0.0; 6]);
        assert!(p[1..].iter().all(|x| (x - 0.2).abs() < 1e-12));
        assert_eq!(credible_set(&p, 0.5).len(), 3);
        let f = cdf(&p);
        assert!((f[5] - 1.0).abs() < 1e-12 && (f[2] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn evidence_has_the_sign_of_the_side_it_resembles() {
        let good: Vec<f64> = (0..20)
            .map(|i| 1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0))
            .collect();
        let bad: Vec<f64> = good.iter().map(|x| x * 1.2).collect();
        let s = |v: &[f64]| -> Vec<f64> { v.to_vec() };
        let (g, b) = (s(&good), s(&bad));
        let gs = Samples {
            values: &g,
            seq: &[],
        };
        let bs = Samples {
            values: &b,
            seq: &[],
        };
        let like_bad = [1.2, 1.21, 1.19];
        let like_good = [1.0, 0.99, 1.01];
        assert!(
            evidence(
                Samples {
                    values: &like_bad,
                    seq: &[]
                },
                gs,
                bs,
                1.0
            ) > 3.0
        );
        assert!(
            evidence(
                Samples {
                    values: &like_good,
                    seq: &[]
                },
                gs,
                bs,
                1.0
            ) < -3.0
        );
        assert_eq!(
            evidence(
                Samples {
                    values: &[],
                    seq: &[]
                },
                gs,
                bs,
                1.0
            ),
            0.0
        );
    }

    use crate::stats::rng::SplitMix64;

    fn smp<'a>(values: &'a [f64], seq: &'a [u64]) -> Samples<'a> {
        Samples { values, seq }
    }

    /// Runs at `times` of a build `shift` (log) slower, on a machine drifting
    /// by `drift` per run, with 3% lognormal noise.
    fn runs(rng: &mut SplitMix64, times: &[u64], shift: f64, drift: f64) -> (Vec<f64>, Vec<u64>) {
        let v = times
            .iter()
            .map(|&t| (shift + drift * t as f64 + 0.03 * rng.normal()).exp())
            .collect();
        (v, times.to_vec())
    }

    #[test]
    fn the_regression_is_measured_run_by_run_so_drift_between_the_ends_does_not_enter_it() {
        // Good measured mostly early, bad mostly late, on a machine that gets
        // 0.02% slower every run: the plain difference of medians carries the
        // drift between the moments, the paired one does not.
        let mut rng = SplitMix64::new(3);
        let gt: Vec<u64> = (0..60)
            .map(|i| 2 * i)
            .chain((0..10).map(|i| 400 + 2 * i))
            .collect();
        let bt: Vec<u64> = (0..60)
            .map(|i| 2 * i + 1)
            .chain((0..120).map(|i| 200 + 2 * i + 1))
            .collect();
        let (g, gs) = runs(&mut rng, &gt, 0.0, 0.0002);
        let (b, bs) = runs(&mut rng, &bt, 0.05, 0.0002);
        let (good, bad) = (smp(&g, &gs), smp(&b, &bs));
        let plain = median(&logs(&b)) - median(&logs(&g));
        let paired = regression(good, bad).unwrap();
        assert!(
            plain > 0.065,
            "the drift is in the plain difference: {plain}"
        );
        assert!((paired - 0.05).abs() < 0.01, "paired {paired}");
    }

    #[test]
    fn runs_judged_by_the_same_references_count_as_those_references_allow() {
        // 40 runs of a bad build: spread over the session with references
        // around each, or all after the last reference, judged by the same 16.
        let mut rng = SplitMix64::new(5);
        let gt: Vec<u64> = (0..100).map(|i| 4 * i).collect();
        let bt: Vec<u64> = (0..100).map(|i| 4 * i + 1).collect();
        let spread_t: Vec<u64> = (0..40).map(|i| 10 * i + 2).collect();
        let bunched_t: Vec<u64> = (0..40).map(|i| 1000 + i).collect();
        let (mut spread_e, mut bunched_e) = (0.0, 0.0);
        for _ in 0..40 {
            let (g, gs) = runs(&mut rng, &gt, 0.0, 0.0);
            let (b, bs) = runs(&mut rng, &bt, 0.03, 0.0);
            let j = Judge::new(smp(&g, &gs), smp(&b, &bs)).unwrap();
            let (c, cs) = runs(&mut rng, &spread_t, 0.03, 0.0);
            spread_e += j.evidence(smp(&c, &cs), 1.0);
            let (c, cs) = runs(&mut rng, &bunched_t, 0.03, 0.0);
            bunched_e += j.evidence(smp(&c, &cs), 1.0);
        }
        assert!(spread_e > 0.0 && bunched_e > 0.0, "{spread_e} {bunched_e}");
        assert!(
            bunched_e < 0.5 * spread_e,
            "bunched {bunched_e} spread {spread_e}"
        );
    }

    #[test]
    fn a_candidate_between_the_levels_is_weighed_by_its_distance_from_the_boundary() {
        // Good at 0, bad at +4.5% (two regressions); a candidate at +3% has only
        // the first: bad, but less surely than one at +4.5%.
        let mut rng = SplitMix64::new(9);
        let gt: Vec<u64> = (0..150).map(|i| 4 * i).collect();
        let bt: Vec<u64> = (0..150).map(|i| 4 * i + 1).collect();
        let (g, gs) = runs(&mut rng, &gt, 0.0, 0.0);
        let (b, bs) = runs(&mut rng, &bt, 0.045, 0.0);
        let j = Judge::new(smp(&g, &gs), smp(&b, &bs)).unwrap();
        let ct: Vec<u64> = (0..150).map(|i| 4 * i + 2).collect();
        let (mut mid, mut full, mut none) = (0.0, 0.0, 0.0);
        for _ in 0..10 {
            let (c, cs) = runs(&mut rng, &ct[..30], 0.03, 0.0);
            mid += j.evidence(smp(&c, &cs), 1.0);
            let (c, cs) = runs(&mut rng, &ct[..30], 0.045, 0.0);
            full += j.evidence(smp(&c, &cs), 1.0);
            let (c, cs) = runs(&mut rng, &ct[..30], 0.0, 0.0);
            none += j.evidence(smp(&c, &cs), 1.0);
        }
        assert!(none < 0.0 && mid > 0.0 && full > mid, "{none} {mid} {full}");
    }
}
