//! Probe `counters`: can this machine count instructions, and how? A hardware
//! PMU (perf_event_open counts a command's instructions at no cost), or
//! valgrind's cachegrind (exact instructions, 20-50x slower runs), or neither.

use super::result::ProbeResult;
use crate::measure::counters::{cachegrind, find_valgrind, pmu};

pub fn counters() -> ProbeResult {
    let mut r = ProbeResult::new("counters", "instruction counters (--metric instructions)");
    match pmu::available(false) {
        Ok(()) => {
            r.fact("pmu", true);
            r.fact("pmu_kernel", pmu::available(true).is_ok());
        }
        Err(why) => {
            r.fact("pmu", false);
            r.fact("pmu_why", why);
        }
    }
    match find_valgrind() {
        Some(v) => {
            r.fact("valgrind", v.display().to_string());
            r.fact(
                "cachegrind_cache",
                format!(
                    "I1 {}, D1 {}, LL {}",
                    cachegrind::I1,
                    cachegrind::D1,
                    cachegrind::LL
                ),
            );
        }
        None => {
            r.fact("valgrind", serde_json::Value::Null);
        }
    }
    r
}
