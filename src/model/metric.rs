//! What a run can be measured by.

/// What a run can be measured by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Wall-clock time (tardy's default).
    Wall,
    /// Instructions retired in user space (and the kernel with `--count-kernel`
    /// on a PMU).
    Instructions,
    /// CPU cycles (a PMU only: they move with frequency and load, less than time).
    Cycles,
    /// Cycles estimated from cachegrind's simulated cache: L1 hits, plus 5 per
    /// LL hit, plus 35 per RAM access (Itamar Turner-Trauring's weights, as
    /// iai and iai-callgrind use them).
    EstimatedCycles,
    /// CPU time of the whole tree, user plus system (getrusage): waiting for
    /// a CPU on a busy machine does not count, as it does in wall time.
    Cpu,
    /// User CPU time of the whole tree.
    User,
    /// System CPU time of the whole tree.
    Sys,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Wall,
        Metric::Instructions,
        Metric::Cycles,
        Metric::EstimatedCycles,
        Metric::Cpu,
        Metric::User,
        Metric::Sys,
    ];

    /// The name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Wall => "wall",
            Metric::Instructions => "instructions",
            Metric::Cycles => "cycles",
            Metric::EstimatedCycles => "estimated-cycles",
            Metric::Cpu => "cpu",
            Metric::User => "user",
            Metric::Sys => "sys",
        }
    }

    /// The unit its values are in (a count's unit is what it counts).
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Wall | Metric::Cpu | Metric::User | Metric::Sys => "s",
            m => m.name(),
        }
    }

    pub fn is_count(self) -> bool {
        matches!(
            self,
            Metric::Instructions | Metric::Cycles | Metric::EstimatedCycles
        )
    }

    /// A CPU time of the runs (`cpu`, `user`, `sys`): measured with every run
    /// from getrusage, compared as times.
    pub fn is_cpu_time(self) -> bool {
        matches!(self, Metric::Cpu | Metric::User | Metric::Sys)
    }

    /// The CPU time of one run, seconds, for a CPU-time metric.
    pub fn cpu_time_of(self, r: &super::Run) -> Option<f64> {
        let ns = match self {
            Metric::Cpu => r.user_ns + r.sys_ns,
            Metric::User => r.user_ns,
            Metric::Sys => r.sys_ns,
            _ => return None,
        };
        Some(ns as f64 / 1e9)
    }

    /// The metric a unit names, when it is one of the counts.
    pub fn of_unit(unit: &str) -> Option<Metric> {
        Metric::ALL
            .into_iter()
            .find(|m| m.is_count() && m.unit() == unit)
    }

    pub fn parse(s: &str) -> Result<Metric, String> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "wall" | "time" | "wall-time" => Ok(Metric::Wall),
            "instructions" | "instr" | "ir" => Ok(Metric::Instructions),
            "cycles" => Ok(Metric::Cycles),
            "estimated-cycles" | "est-cycles" => Ok(Metric::EstimatedCycles),
            "cpu" => Ok(Metric::Cpu),
            "user" => Ok(Metric::User),
            "sys" | "system" => Ok(Metric::Sys),
            _ => Err(format!(
                "unknown metric '{s}': expected wall, cpu, user, sys, instructions, cycles or estimated-cycles"
            )),
        }
    }

    /// The value of this metric in a run's counts.
    pub fn of(self, c: &super::Counts) -> Option<u64> {
        match self {
            Metric::Wall | Metric::Cpu | Metric::User | Metric::Sys => None,
            Metric::Instructions => c.instructions,
            Metric::Cycles => c.cycles,
            Metric::EstimatedCycles => c.estimated_cycles,
        }
    }
}
