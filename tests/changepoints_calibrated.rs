//! The default change-point detector keeps its stated false-alarm rate on many
//! kinds of noise and still finds a 3-sigma step where it is: small versions of
//! the study in docs/changepoints.md (`cargo run --release --example cp_sim`),
//! run on the real detector. Bounds are the stated rate plus three binomial
//! standard errors, so a calibrated detector fails them about once in 700 runs
//! and a miscalibrated one (Otava's p-values: 40-100% of series) always.

use tardy::history::simulate::{
    Detector, Regime, Step, false_alarm_rate, power, sequential_false_alarm_rate,
};

const TRIALS: usize = 150;

fn bound(rate: f64, trials: usize) -> f64 {
    rate + 3.0 * (rate * (1.0 - rate) / trials as f64).sqrt()
}

#[test]
fn false_alarms_on_noise_stay_at_the_stated_rate() {
    let cal = Detector::Calibrated(0.01);
    for (k, regime) in [
        Regime::Gaussian,
        Regime::Lognormal,
        Regime::HeavyTailed,
        Regime::Bimodal,
        Regime::Autocorrelated(0.5),
        Regime::Discrete,
    ]
    .into_iter()
    .enumerate()
    {
        // 1,000 points: at most 1% of series with any change point.
        let rate = false_alarm_rate(regime, cal, 1000, TRIALS, 7 + k as u64);
        assert!(
            rate <= bound(0.01, TRIALS),
            "{}: {:.1}% of noise series got a change point",
            regime.name(),
            rate * 100.0
        );
    }
}

#[test]
fn false_alarms_stay_at_the_stated_rate_when_checked_as_points_arrive() {
    sequential_false_alarms(Regime::Lognormal, 90);
}

/// The same for autocorrelated noise: its own test, so the two run side by side.
#[test]
fn false_alarms_stay_at_the_stated_rate_when_autocorrelated_points_arrive() {
    sequential_false_alarms(Regime::Autocorrelated(0.6), 91);
}

fn sequential_false_alarms(regime: Regime, seed: u64) {
    // A server detects after every upload: checking 1,000 points of noise
    // after every 20 (from 40 on) must not raise more false alarms than one
    // check of the whole is allowed (1% per 1,000 points). Before the
    // thresholds were made per scale and the short series' correlation
    // floored, this ran at 3.6% (lognormal) and 6.4% (AR(1) 0.6) checked
    // every 10 points (docs/changepoints.md has the full table).
    let cal = Detector::Calibrated(0.01);
    let trials = 150;
    let rate = sequential_false_alarm_rate(regime, cal, 40, 1000, 20, trials, seed);
    assert!(
        rate <= bound(0.01, trials),
        "{}: {:.1}% of noise series checked every 20 points got a change point",
        regime.name(),
        rate * 100.0
    );
}

#[test]
fn otava_mode_is_still_otava_and_cries_wolf_on_noise() {
    // The reason the default changed: at its p = 0.001 Otava's E-Divisive puts
    // a change point in a large share of pure-noise series of 1,000 points.
    let rate = false_alarm_rate(Regime::Gaussian, Detector::Otava, 1000, 30, 1);
    assert!(rate > 0.2, "{rate}");
}

#[test]
fn a_three_sigma_step_is_found_where_it_is() {
    let cal = Detector::Calibrated(0.01);
    for (k, regime) in [Regime::Gaussian, Regime::Lognormal, Regime::Bimodal]
        .into_iter()
        .enumerate()
    {
        // 30 points before the end of 600, and in the middle.
        for at in [570, 300] {
            let p = power(
                regime,
                cal,
                600,
                Step {
                    at,
                    len: None,
                    size: 3.0,
                    tolerance: 3,
                },
                60,
                40 + k as u64,
            );
            assert!(
                p.found >= 0.85,
                "{} step at {at}: found in {:.0}%",
                regime.name(),
                p.found * 100.0
            );
            assert!(p.extra_per_series < 0.1, "{}", p.extra_per_series);
        }
    }
}

#[test]
fn steps_are_called_within_a_few_points_of_arriving_and_placed_where_they_are() {
    use tardy::history::simulate::delay;
    let cal = Detector::Calibrated(0.01);
    // After 200 points of Gaussian noise, checked after every new point:
    // the median number of points at the new level when the step is called
    // (docs/changepoints.md: 3, 3 and 10 with 300 series a cell; the issue's
    // bars are 3, 5 and 12, which a 40 series' median must meet too).
    for (size, most, seed) in [(10.0, 3, 11), (4.0, 5, 12), (2.0, 12, 13)] {
        let d = delay(Regime::Gaussian, cal, 200, size, 40, 40, seed);
        assert!(
            d.median <= most,
            "{size} sigma: called after {} points",
            d.median
        );
        assert!(
            d.found >= 0.9,
            "{size} sigma: found in {:.0}%",
            d.found * 100.0
        );
        assert!(
            d.placed >= 0.75,
            "{size} sigma: placed in {:.0}%",
            d.placed * 100.0
        );
    }
    // A short series: 20 points, then a 4-sigma step.
    let d = delay(Regime::Gaussian, cal, 20, 4.0, 30, 40, 14);
    assert!(d.found >= 0.9 && d.median <= 16, "{d:?}");
}

#[test]
fn the_end_test_alone_stays_within_its_half_of_the_rate_as_points_arrive() {
    use tardy::history::simulate::end_test_false_alarm_rate;
    // Checked after every point of 400: at most 0.5% per 1,000 points, so
    // 0.2% of these series, within three standard errors.
    for (k, regime) in [Regime::HeavyTailed, Regime::Autocorrelated(0.6)]
        .into_iter()
        .enumerate()
    {
        let rate = end_test_false_alarm_rate(regime, 0.005, 400, 60, 40 + k as u64);
        assert!(
            rate <= bound(0.002, 60),
            "{}: {:.1}% of noise series",
            regime.name(),
            rate * 100.0
        );
    }
}
