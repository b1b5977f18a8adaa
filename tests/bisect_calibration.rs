//! A small version of docs/bisect.md's study, on the real engine with simulated
//! noise (this VM's: 3% spread, a slow mode, drift): a 5% regression in 64
//! commits is named right nearly always, and when tardy names a culprit with a
//! probability of at least 95%, it is wrong at most about 5% of the time. A
//! union-bound "confidence" that ignored drift named wrong commits 16% of the
//! time here; these bounds fail such a rule and pass a calibrated one with
//! room (about one run in 300 fails by chance if tardy is right 95% of the time,
//! far fewer at the 98.5% the full study measures).

use tardy::bisect::simulate::{Noise, tardy_sim};
use tardy::stats::rng::SplitMix64;

#[test]
fn named_culprits_are_right_as_often_as_stated() {
    let dir = tempfile::tempdir().unwrap();
    let sims = 40;
    let mut rng = SplitMix64::new(2026);
    let (mut right, mut wrong, mut ranged) = (0, 0, 0);
    for s in 0..sims {
        let culprit = 1 + (rng.next_f64() * 63.0) as usize;
        let o = tardy_sim(64, culprit, 0.05, None, Noise::vm(), 1000 + s, dir.path()).unwrap();
        if o.named {
            assert!(o.confidence >= 0.95, "{o:?}");
            if o.right {
                right += 1;
            } else {
                wrong += 1;
            }
        } else {
            ranged += 1;
        }
    }
    assert!(wrong <= 3, "{wrong} wrong of {} named", right + wrong);
    assert!(right >= 34, "right {right}, wrong {wrong}, ranges {ranged}");
}
