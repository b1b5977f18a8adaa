//! `tardy explain`'s job as a library call: the sides to explain (commands
//! to record, or saved traces), recorded and compared. The CLI maps its
//! flags to a [`Request`] and renders the [`Explained`].

use std::path::{Path, PathBuf};

use super::session::{self, Spec};
use super::{Comparison, Trace};
use crate::measure::command::{self, CommandLine};
use crate::model::Exec;
use crate::record::RecordOptions;

/// What to explain: one or two commands (strings or one argv), or saved
/// traces, or one command against itself under B's conditions.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Commands as strings, or saved trace files.
    pub inputs: Vec<String>,
    /// Or one program and its arguments (after `--`).
    pub argv: Vec<String>,
    pub no_shell: bool,
    pub cwd: Option<PathBuf>,
    /// B is the command with these KEY=VALUE in its environment...
    pub condition_b: Vec<String>,
    /// ...or run under this prefix (`taskset -c 0`).
    pub prefix_b: Option<String>,
    /// Or a running process's tree, recorded as it runs (`--pid`)...
    pub pid: Option<i32>,
    /// ...for this long (else until Ctrl-C or its exit).
    pub duration: Option<std::time::Duration>,
}

/// One side of the comparison: a command to run, or a saved trace; or
/// the one side there is, a running tree to record.
pub enum Side {
    Run(Spec),
    Saved(Box<Trace>),
    Running {
        pid: i32,
        duration: Option<std::time::Duration>,
        options: RecordOptions,
    },
}

pub fn looks_like_trace(s: &str) -> bool {
    let p = Path::new(s);
    if !p.is_file() {
        return false;
    }
    // A .json file, or a file that is not executable, is read as a trace
    // (and refused as "not a tardy trace" when it is not one).
    use std::os::unix::fs::PermissionsExt;
    let executable = std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || !executable
    {
        return true;
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(p)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Read a saved trace: bounded size, versioned, validated.
pub fn read_trace(path: &Path) -> Result<Trace, String> {
    const MAX: u64 = 64 << 20;
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX {
        return Err(format!(
            "{}: {} bytes is more than a trace summary holds (limit 64 MiB)",
            path.display(),
            meta.len()
        ));
    }
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a tardy trace: not JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let schema = v.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if schema != super::SCHEMA {
        let hint = if schema == crate::model::SCHEMA {
            " (this is a `tardy run` results file; `tardy compare` reads those)"
        } else {
            ""
        };
        return Err(format!(
            "{}: not a tardy trace: expected schema \"{}\", found {}{hint}",
            path.display(),
            super::SCHEMA,
            if schema.is_empty() {
                "none".to_string()
            } else {
                format!("\"{schema}\"")
            }
        ));
    }
    if let Some(ver) = v.get("schema_version").and_then(|s| s.as_u64())
        && ver > super::SCHEMA_VERSION as u64
    {
        return Err(format!(
            "{}: trace schema version {ver} is newer than this tardy reads ({}); upgrade tardy",
            path.display(),
            super::SCHEMA_VERSION
        ));
    }
    let t: Trace = serde_json::from_value(v).map_err(|e| format!("{}: {e}", path.display()))?;
    t.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(t)
}

fn env_pairs(list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("--condition-b takes KEY=VALUE, not '{kv}'"))
        })
        .collect()
}

fn to_exec(cmd: &str, no_shell: bool) -> Result<Exec, String> {
    Ok(
        match command::parse(cmd, no_shell).map_err(|e| e.to_string())? {
            CommandLine::Direct(argv) => Exec::Direct { argv },
            CommandLine::Shell(script) => Exec::Shell {
                shell: "sh".into(),
                script,
            },
        },
    )
}

fn run_side(display: &str, exec: &Exec, opts: &RecordOptions) -> Side {
    Side::Run(Spec {
        display: display.into(),
        exec: exec.clone(),
        options: opts.clone(),
    })
}

/// `--duration SECS` (how long `--pid` records), checked.
pub fn duration(secs: Option<f64>) -> Result<Option<std::time::Duration>, String> {
    secs.map(|s| {
        std::time::Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("--duration {s}: give a number of seconds above 0"))
    })
    .transpose()
}

/// The sides `req` names, each a command to record with `opts` or a saved
/// trace read and checked.
pub fn sides(req: &Request, opts: &RecordOptions) -> Result<Vec<Side>, String> {
    let args = req;
    let conditioned = !args.condition_b.is_empty() || args.prefix_b.is_some();
    if let Some(pid) = args.pid {
        if !args.inputs.is_empty() || !args.argv.is_empty() || conditioned {
            return Err(
                "--pid records a running process on its own: give no command, trace or B condition with it"
                    .into(),
            );
        }
        return Ok(vec![Side::Running {
            pid,
            duration: args.duration,
            options: opts.clone(),
        }]);
    }
    if args.duration.is_some() {
        return Err("--duration is how long --pid records: give it with --pid".into());
    }
    let mut sides: Vec<Side> = Vec::new();
    if !args.argv.is_empty() {
        if !args.inputs.is_empty() {
            return Err("give the command either as strings or after --, not both".into());
        }
        let display = command::join_quoted(&args.argv);
        sides.push(run_side(
            &display,
            &Exec::Direct {
                argv: args.argv.clone(),
            },
            opts,
        ));
    } else {
        match args.inputs.len() {
            0 => {
                return Err(
                    "nothing to explain: give a command, e.g. tardy explain -- ./suite, or two saved traces"
                        .into(),
                );
            }
            2 if !args.inputs.iter().any(|i| looks_like_trace(i))
                && !args.inputs[1].contains(char::is_whitespace)
                && command::resolve_program(&args.inputs[1], args.cwd.as_deref()).is_err() =>
            {
                return Err(format!(
                    "'{}' is not a program: to explain one command with arguments, quote it (tardy explain '{} {}') or put it after -- (tardy explain -- {} {})",
                    args.inputs[1], args.inputs[0], args.inputs[1], args.inputs[0], args.inputs[1]
                ));
            }
            1 | 2 => {
                for input in &args.inputs {
                    if looks_like_trace(input) {
                        sides.push(Side::Saved(Box::new(read_trace(Path::new(input))?)));
                    } else {
                        let exec = to_exec(input, args.no_shell)?;
                        sides.push(run_side(input, &exec, opts));
                    }
                }
            }
            n => {
                return Err(format!(
                    "tardy explain compares at most two commands or traces, not {n}"
                ));
            }
        }
    }
    if conditioned {
        if sides.len() != 1 {
            return Err(
                "--condition-b and --prefix-b compare one command with itself: give one command"
                    .into(),
            );
        }
        let base = match &sides[0] {
            Side::Run(spec) => spec.display.clone(),
            Side::Saved(_) | Side::Running { .. } => {
                return Err(
                    "--condition-b and --prefix-b need a command, not a saved trace".into(),
                );
            }
        };
        let cmd_b = match &args.prefix_b {
            Some(p) => format!("{p} {base}"),
            None => base.clone(),
        };
        let exec_b = if args.prefix_b.is_none() && !args.argv.is_empty() {
            Exec::Direct {
                argv: args.argv.clone(),
            }
        } else {
            to_exec(&cmd_b, args.no_shell)?
        };
        let mut opts_b = opts.clone();
        opts_b.env = env_pairs(&args.condition_b)?;
        let mut label = cmd_b.clone();
        for (k, v) in &opts_b.env {
            label = format!("{k}={v} {label}");
        }
        sides.push(run_side(&label, &exec_b, &opts_b));
    }

    Ok(sides)
}

/// What `tardy explain` found: the traces (A, and B when there are two)
/// and, for two, their comparison.
pub struct Explained {
    pub traces: Vec<Trace>,
    pub comparison: Option<Comparison>,
    /// Ctrl-C stopped the recording: the runs completed so far.
    pub interrupted: bool,
}

/// Record the sides that are commands (`on` hears of each run) and compare
/// two sides.
pub fn explain(
    sides: Vec<Side>,
    opts: &session::Options,
    on: &mut dyn FnMut(session::Event),
) -> Result<Explained, String> {
    if let [
        Side::Running {
            pid,
            duration,
            options,
        },
    ] = sides.as_slice()
    {
        let recorded =
            session::record_running(*pid, *duration, options, on).map_err(|e| e.to_string())?;
        return Ok(Explained {
            traces: recorded.traces,
            comparison: None,
            interrupted: false,
        });
    }
    let specs: Vec<Spec> = sides
        .iter()
        .filter_map(|s| match s {
            Side::Run(spec) => Some(spec.clone()),
            Side::Saved(_) | Side::Running { .. } => None,
        })
        .collect();
    let mut recorded = if specs.is_empty() {
        session::Outcome {
            traces: Vec::new(),
            interrupted: false,
        }
    } else {
        session::record_set(&specs, opts, on).map_err(|e| match e {
            session::SessionError::Failed(m) if !m.starts_with("--prepare") => {
                format!("{m}; use --ignore-failure to explain failing runs")
            }
            e => e.to_string(),
        })?
    };
    let interrupted = recorded.interrupted;
    let mut fresh = recorded.traces.drain(..);
    let mut traces: Vec<Trace> = Vec::new();
    for side in sides {
        match side {
            Side::Saved(t) => traces.push(*t),
            Side::Run(_) => traces.extend(fresh.next()),
            Side::Running { .. } => {}
        }
    }
    drop(fresh);
    let comparison = match traces.as_slice() {
        [a, b] => Some(super::compare(a, b)),
        _ => None,
    };
    Ok(Explained {
        traces,
        comparison,
        interrupted,
    })
}
