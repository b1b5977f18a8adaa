//! The probability of each candidate being the culprit, from every sample taken
//! (pure). The culprit c is the first bad candidate (1..=n; 0 is the good end, n
//! the bad end); with a uniform prior, P(c | data) ∝ Π_{k<c} p(x_k | good) ·
//! Π_{k≥c} p(x_k | bad), so log P(c) = const + Σ_{k≥c} e_k with e_k the evidence
//! (log-likelihood ratio, bad over good) of candidate k's samples.
//!
//! Each candidate's evidence is measured against the reference runs of both
//! ends taken *nearest in time* to its own runs (so slow drift of the machine
//! cancels), on log values, with a robust spread, each sample's term clipped so
//! one outlier cannot decide, and tempered by [`TEMPER`] because real noise
//! (slow modes, heavy tails, drift inside a window) carries less evidence than
//! a Gaussian would. [`TEMPER`] was chosen with the calibration study of
//! docs/bisect.md: in every noise regime there, a stated probability p is right
//! at least p of the time.

use crate::stats::summary::median_by_selection;

/// How much of the Gaussian log-likelihood ratio is believed.
pub const TEMPER: f64 = 0.4;
/// Reference runs of each end an evidence is measured against.
pub const WINDOW: usize = 8;

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

/// The `WINDOW` reference values taken nearest to run `t` (all when `t` or
/// the references' times are unknown). `seq` times the last `seq.len()` values.
fn nearest(r: Samples, t: Option<u64>) -> Vec<f64> {
    let known = r.seq.len().min(r.values.len());
    match t {
        Some(t) if known >= WINDOW => {
            let timed = &r.values[r.values.len() - known..];
            let seq = &r.seq[r.seq.len() - known..];
            let mut idx: Vec<usize> = (0..known).collect();
            idx.sort_by_key(|&i| seq[i].abs_diff(t));
            idx.truncate(WINDOW);
            idx.iter().map(|&i| timed[i]).collect()
        }
        _ => r.values.to_vec(),
    }
}

/// The evidence (bad over good) of a candidate's samples, each judged against
/// the references of both ends taken nearest in time to it; 0 with no samples
/// or unusable references.
pub fn evidence(cand: Samples, good: Samples, bad: Samples, temper: f64) -> f64 {
    if cand.values.is_empty() {
        return 0.0;
    }
    let logs = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .filter(|x| *x > 0.0 && x.is_finite())
            .map(f64::ln)
            .collect()
    };
    // The spread, from all references, each centred on its own end.
    let (ga, ba) = (logs(good.values.to_vec()), logs(bad.values.to_vec()));
    if ga.len() < 2 || ba.len() < 2 {
        return 0.0;
    }
    let (cg, cb) = (median(&ga), median(&ba));
    let centred: Vec<f64> = ga
        .iter()
        .map(|x| x - cg)
        .chain(ba.iter().map(|x| x - cb))
        .collect();
    let mad = 1.4826 * median(&centred.iter().map(|x| x.abs()).collect::<Vec<_>>());
    let m = centred.len() as f64;
    // The spread with values beyond 4 MADs pulled in: a slow mode a few spreads
    // away widens it (as it must), a rare hiccup of +50% does not swamp it.
    let cap = 4.0 * mad.max(1e-4);
    let sd = (centred
        .iter()
        .map(|x| x.clamp(-cap, cap).powi(2))
        .sum::<f64>()
        / (m - 1.0).max(1.0))
    .sqrt();
    let sigma = mad.max(sd).max(1e-3);
    let known = cand.seq.len().min(cand.values.len());
    let untimed = cand.values.len() - known;
    let mut total = 0.0;
    for (i, &x) in cand.values.iter().enumerate() {
        if !(x > 0.0 && x.is_finite()) {
            continue;
        }
        let t = (i >= untimed).then(|| cand.seq[cand.seq.len() - known + (i - untimed)]);
        let g = logs(nearest(good, t));
        let b = logs(nearest(bad, t));
        if g.len() < 2 || b.len() < 2 {
            continue;
        }
        let (mu_g, mu_b) = (median(&g), median(&b));
        let delta = mu_b - mu_g;
        if delta.abs() < 1e-12 {
            continue;
        }
        // The centres are estimated from a few runs each: their error adds to
        // the spread a sample is judged with.
        let var = sigma * sigma * (1.0 + 2.0 / g.len().min(b.len()) as f64);
        let mid = (mu_g + mu_b) / 2.0;
        let clip = 2.0 * delta * delta / var;
        total += (delta * (x.ln() - mid) / var).clamp(-clip, clip);
    }
    temper * total
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
}
