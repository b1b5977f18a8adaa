//! `tardy compare --ministat ARGS` (also `tardy ministat ARGS`): exactly what
//! the ministat Debian ships (20150715) prints, its errors and exit codes
//! included, for its flags `-A -n -s -c LEVEL -C COL -d DELIMS -w WIDTH`.
//! Options are parsed like GNU getopt (they may follow the files). Where
//! that ministat crashes (`-w 1` with a plot, inf or nan values), tardy
//! prints an error instead.

use std::io::Read;

use crate::ingest::cnum::strtod;
use crate::ingest::{NumberOptions, numbers};
use crate::render::ministat::{Flags, report};
use crate::stats::ministat::{LEVELS, Set};

/// Everything a ministat run produces.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

const USAGE: &str = "Usage: ministat [-C column] [-c confidence] [-d delimiter(s)] [-Ans] [-w width] [file [file ...]]\n\
\tconfidence = {80%, 90%, 95%, 98%, 99%, 99.5%}\n\
\t-A : print statistics only. suppress the graph.\n\
\t-C : column number to extract (starts and defaults to 1)\n\
\t-d : delimiter(s) string, default to \" \\t\"\n\
\t-n : print summary statistics only, no graph/test\n\
\t-s : print avg/median/stddev bars on separate lines\n\
\t-w : width of graph/test output (default 74 or terminal width)\n";

fn usage(prefix: &str, whine: &str) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr: format!("{prefix}{whine}\n{USAGE}"),
        code: 2,
    }
}

/// C's strtol(s, &end, 10) and whether it consumed the whole string.
fn strtol(s: &str) -> (i64, bool) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return (0, s.is_empty());
    }
    let v = digits[..n].parse::<i64>().unwrap_or(i64::MAX);
    (if neg { -v } else { v }, n == digits.len())
}

/// C's atoi.
pub fn atoi(s: &str) -> i64 {
    strtol(s).0
}

fn strerror(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        // SAFETY: strerror returns a pointer to a static NUL-terminated string.
        Some(code) => unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }
            .to_string_lossy()
            .into_owned(),
        None => e.to_string(),
    }
}

/// Run ministat on `args` (without the program name).
pub fn run(args: &[String], stdin: &mut dyn Read, default_width: i64) -> Outcome {
    let (flags, opts, files) = match options(args, default_width) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let sets = match read_sets(&files, &opts, stdin) {
        Ok(s) => s,
        Err(e) => return e,
    };
    if flags.width == 1 && !flags.summary_only && !flags.no_plot {
        return Outcome {
            stdout: String::new(),
            stderr: "tardy: error: ministat crashes when plotting with -w 1; use -w 0, -w 2 or wider, or -A\n".into(),
            code: 2,
        };
    }
    Outcome {
        stdout: report(&sets, flags),
        stderr: String::new(),
        code: 0,
    }
}

/// The value of option `c` (-C column, -c level, -d delimiters, -w width).
fn set_option(
    c: char,
    optarg: String,
    flags: &mut Flags,
    column: &mut usize,
    delims: &mut String,
) -> Result<(), Outcome> {
    match c {
        'C' => {
            let (v, whole) = strtol(&optarg);
            if !whole {
                return Err(usage("", "Invalid column number."));
            }
            if v <= 0 {
                return Err(usage("", "Column number should be positive."));
            }
            *column = v as usize;
        }
        'c' => {
            let (v, used) = strtod(&optarg);
            if used != optarg.len() {
                return Err(usage("", "Not a floating point number"));
            }
            match LEVELS.iter().position(|&l| l == v) {
                Some(level) => flags.level = level,
                None => {
                    return Err(usage("", "No support for confidence level"));
                }
            }
        }
        'd' => {
            if optarg.is_empty() {
                return Err(usage("", "Can't use empty delimiter string"));
            }
            *delims = optarg;
        }
        _ => {
            let (v, whole) = strtol(&optarg);
            if !whole {
                return Err(usage("", "Invalid width, not a number."));
            }
            if v < 0 {
                return Err(usage("", "Unable to move beyond left margin."));
            }
            flags.width = v;
        }
    }
    Ok(())
}

/// ministat's options as its getopt reads them: the flags, how to read
/// numbers, and the files (standard input when none).
fn options(
    args: &[String],
    default_width: i64,
) -> Result<(Flags, NumberOptions, Vec<String>), Outcome> {
    let mut flags = Flags {
        summary_only: false,
        no_plot: false,
        separate_bars: false,
        width: default_width,
        level: 2,
    };
    let mut column = 1usize;
    let mut delims = " \t".to_string();
    let mut files: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            files.extend(args[i + 1..].iter().cloned());
            break;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                match c {
                    'A' => flags.no_plot = true,
                    'n' => flags.summary_only = true,
                    's' => flags.separate_bars = true,
                    'C' | 'c' | 'd' | 'w' => {
                        let optarg: String = if k + 1 < chars.len() {
                            chars[k + 1..].iter().collect()
                        } else if i + 1 < args.len() {
                            i += 1;
                            args[i].clone()
                        } else {
                            return Err(usage(
                                &format!("ministat: option requires an argument -- '{c}'\n"),
                                "Unknown option",
                            ));
                        };
                        set_option(c, optarg, &mut flags, &mut column, &mut delims)?;
                        break;
                    }
                    other => {
                        return Err(usage(
                            &format!("ministat: invalid option -- '{other}'\n"),
                            "Unknown option",
                        ));
                    }
                }
                k += 1;
            }
        } else {
            files.push(a.clone());
        }
        i += 1;
    }
    if files.len() > 7 {
        return Err(usage("", "Too many datasets."));
    }
    if files.is_empty() {
        files.push("-".to_string());
    }
    let opts = NumberOptions {
        column,
        delimiters: delims,
    };
    Ok((flags, opts, files))
}

/// Each file's numbers as a set (at least 3, all finite), or ministat's
/// own message and exit code.
fn read_sets(
    files: &[String],
    opts: &NumberOptions,
    stdin: &mut dyn Read,
) -> Result<Vec<Set>, Outcome> {
    let mut sets = Vec::new();
    for f in files {
        let name = if f == "-" {
            "<stdin>".to_string()
        } else {
            f.clone()
        };
        let mut bytes = Vec::new();
        let read = if f == "-" {
            stdin.read_to_end(&mut bytes).map(|_| ())
        } else if std::path::Path::new(f).is_dir() {
            Ok(()) // fopen succeeds on a directory; fgets then reads nothing
        } else {
            std::fs::read(f).map(|b| bytes = b)
        };
        if let Err(e) = read {
            return Err(Outcome {
                stdout: String::new(),
                stderr: format!("ministat: Cannot open {name}: {}\n", strerror(&e)),
                code: 1,
            });
        }
        let text = String::from_utf8_lossy(&bytes);
        let values = match numbers::read_strict(&text, opts) {
            Ok(v) => v,
            Err(line) => {
                return Err(Outcome {
                    stdout: String::new(),
                    stderr: format!("ministat: Invalid data on line {line} in {name}\n"),
                    code: 2,
                });
            }
        };
        if values.len() < 3 {
            return Err(Outcome {
                stdout: String::new(),
                stderr: format!("Dataset {name} must contain at least 3 data points\n"),
                code: 2,
            });
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Outcome {
                stdout: String::new(),
                stderr: format!(
                    "tardy: error: {name} holds inf or nan, on which ministat crashes; remove those values\n"
                ),
                code: 2,
            });
        }
        sets.push(Set::new(&name, &values));
    }
    Ok(sets)
}

/// The width ministat uses: 74, or the terminal's when stdout is one.
pub fn default_width() -> i64 {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return 74;
    }
    if let Some(c) = std::env::var("COLUMNS").ok().filter(|c| !c.is_empty()) {
        return atoi(&c);
    }
    // As ministat: the tty's columns less two (COLUMNS, read above as atoi does, wins).
    match terminal_size::terminal_size_of(std::io::stdout()) {
        Some((w, _)) if w.0 > 0 => w.0 as i64 - 2,
        _ => 74,
    }
}
