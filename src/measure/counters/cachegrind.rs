//! valgrind's cachegrind, following every child, for machines without a PMU.
//!
//! The command runs under `valgrind --tool=cachegrind --trace-children=yes`,
//! each process writing its own `cg.PID` file into a directory of the run;
//! the counts of the run are the sums of those files' `summary:` lines.
//! Instructions (`Ir`) are exact. With the cache simulation on, the cache is
//! fixed (32 KiB 8-way L1s, an 8 MiB 16-way LL, 64-byte lines) rather than
//! read from this machine, so estimated cycles agree between machines, and
//! the estimate is L1 hits + 5 x LL hits + 35 x RAM accesses: Itamar
//! Turner-Trauring's weights
//! (<https://pythonspeed.com/articles/consistent-benchmarking-in-ci/>), the
//! ones iai and iai-callgrind publish.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::{Counts, Exec};

/// How cachegrind is run.
#[derive(Debug, Clone, PartialEq)]
pub struct CachegrindSpec {
    pub valgrind: PathBuf,
    /// Simulate the caches (for estimated cycles); off, it only counts
    /// instructions, about twice as fast.
    pub cache_sim: bool,
}

/// The fixed cache the simulation uses (size, associativity, line size).
pub const I1: &str = "32768,8,64";
pub const D1: &str = "32768,8,64";
pub const LL: &str = "8388608,16,64";

/// Weights of an LL hit and of a RAM access, in cycles (an L1 hit is 1).
pub const LL_HIT_CYCLES: u64 = 5;
pub const RAM_CYCLES: u64 = 35;

impl CachegrindSpec {
    pub fn events(&self) -> Vec<String> {
        if self.cache_sim {
            [
                "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
            ]
            .map(String::from)
            .to_vec()
        } else {
            vec!["Ir".to_string()]
        }
    }

    /// `exec` as run under cachegrind, writing into `dir`. `program` is the
    /// resolved program of a direct command (valgrind would otherwise look it
    /// up again in its own way).
    pub fn wrap(&self, exec: &Exec, program: Option<&Path>, dir: &Path) -> Exec {
        let mut argv = vec![
            self.valgrind.to_string_lossy().into_owned(),
            "-q".to_string(),
            "--tool=cachegrind".to_string(),
            "--trace-children=yes".to_string(),
            format!("--cache-sim={}", if self.cache_sim { "yes" } else { "no" }),
            "--branch-sim=no".to_string(),
        ];
        if self.cache_sim {
            argv.push(format!("--I1={I1}"));
            argv.push(format!("--D1={D1}"));
            argv.push(format!("--LL={LL}"));
        }
        argv.push(format!(
            "--cachegrind-out-file={}",
            dir.join("cg.%p").to_string_lossy()
        ));
        match exec {
            Exec::Direct { argv: cmd } => {
                if let Some(p) = program {
                    argv.push(p.to_string_lossy().into_owned());
                    argv.extend(cmd.iter().skip(1).cloned());
                } else {
                    argv.extend(cmd.iter().cloned());
                }
            }
            Exec::Shell { shell, script } => {
                argv.push(shell.clone());
                argv.push("-c".to_string());
                argv.push(script.clone());
            }
        }
        Exec::Direct { argv }
    }
}

/// The counts of one run: the sum of every `cg.*` file in `dir`.
pub fn collect(dir: &Path, cache_sim: bool) -> Result<Counts, String> {
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut processes = 0u64;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("cg.") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        let file = parse(&text).map_err(|e| format!("{}: {e}", entry.path().display()))?;
        for (k, v) in file {
            *totals.entry(k).or_default() += v;
        }
        processes += 1;
    }
    if processes == 0 {
        return Err("cachegrind wrote no counts (did the command start?)".into());
    }
    let ir = totals.get("Ir").copied();
    let estimated_cycles = if cache_sim {
        estimated_cycles(&totals)
    } else {
        None
    };
    Ok(Counts {
        backend: "cachegrind".into(),
        instructions: ir,
        cycles: None,
        estimated_cycles,
        events: totals,
        processes: Some(processes),
        counted_wall_ns: None,
    })
}

/// One cachegrind output file's `events:` and `summary:` lines, by event.
pub fn parse(text: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut events: Option<Vec<&str>> = None;
    let mut summary: Option<Vec<u64>> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some(rest.split_whitespace().collect());
        } else if let Some(rest) = line.strip_prefix("summary:") {
            summary = Some(
                rest.split_whitespace()
                    .map(|v| {
                        v.parse::<u64>()
                            .map_err(|_| format!("bad summary value '{v}'"))
                    })
                    .collect::<Result<_, _>>()?,
            );
        }
    }
    let events = events.ok_or("no 'events:' line")?;
    let summary = summary.ok_or("no 'summary:' line (was the process killed?)")?;
    // Trailing zero counts may be left off.
    Ok(events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.to_string(), summary.get(i).copied().unwrap_or(0)))
        .collect())
}

/// L1 hits + 5 x LL hits + 35 x RAM accesses, from cachegrind's events.
pub fn estimated_cycles(ev: &BTreeMap<String, u64>) -> Option<u64> {
    let g = |k: &str| ev.get(k).copied();
    let accesses = g("Ir")? + g("Dr")? + g("Dw")?;
    let l1_misses = g("I1mr")? + g("D1mr")? + g("D1mw")?;
    let ll_misses = g("ILmr")? + g("DLmr")? + g("DLmw")?;
    let l1_hits = accesses.saturating_sub(l1_misses);
    let ll_hits = l1_misses.saturating_sub(ll_misses);
    Some(l1_hits + LL_HIT_CYCLES * ll_hits + RAM_CYCLES * ll_misses)
}

#[cfg(test)]
mod tests {
    use super::*;

    // From `valgrind --tool=cachegrind --cache-sim=yes sh -c 'gzip -6 < f | wc -c'`
    // (valgrind 3.19): the summary of the sh process.
    const SH: &str = "desc: I1 cache:         32768 B, 64 B, 8-way associative\n\
desc: D1 cache:         32768 B, 64 B, 8-way associative\n\
desc: LL cache:         8388608 B, 64 B, 16-way associative\n\
cmd: sh -c gzip -6 < f | wc -c\n\
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw \n\
fl=???\n0 131 24 23 44 5 0 17 1 1\n\
summary: 231339 1522 1503 57449 1985 1520 21427 505 471\n";

    #[test]
    fn a_summary_reads_by_event_and_estimates_cycles() {
        let ev = parse(SH).unwrap();
        assert_eq!(ev["Ir"], 231_339);
        assert_eq!(ev["DLmw"], 471);
        let accesses = 231_339 + 57_449 + 21_427;
        let l1m = 1522 + 1985 + 505;
        let llm = 1503 + 1520 + 471;
        assert_eq!(
            estimated_cycles(&ev),
            Some((accesses - l1m) + 5 * (l1m - llm) + 35 * llm)
        );
        // Without the cache simulation there is no estimate.
        let ir = parse("events: Ir\nsummary: 42\n").unwrap();
        assert_eq!(ir["Ir"], 42);
        assert_eq!(estimated_cycles(&ir), None);
    }

    #[test]
    fn a_cut_file_says_what_is_missing() {
        assert!(parse("events: Ir\n").unwrap_err().contains("summary"));
        assert!(parse("summary: 1\n").unwrap_err().contains("events"));
        assert!(
            parse("events: Ir\nsummary: x\n")
                .unwrap_err()
                .contains("'x'")
        );
    }
}
