//! ministat's report, byte for byte (the Debian 20150715 build): the set
//! names, the ASCII plot, the `%13.8g` table and the Student's t verdicts.
//! The plot follows ministat's own algorithm, quirks included: equal
//! columns stack upward, the plot's height is that of the *last* set (taller
//! stacks of earlier sets are cut), overlapping sets OR their symbols.

use super::cfmt::{g, g_width};
use crate::stats::ministat::{LEVELS, Relative, Set, relative};

/// Write `c` at column `x` when it is inside the line (C would write anywhere).
fn put(line: &mut [u8], x: i64, c: u8) {
    if x >= 0 && (x as usize) < line.len() {
        line[x as usize] = c;
    }
}

const SYMBOL: [u8; 8] = [b' ', b'x', b'+', b'*', b'%', b'#', b'@', b'O'];

/// What ministat's flags change in the report.
#[derive(Debug, Clone, Copy)]
pub struct Flags {
    /// -n: statistics only, no plot and no test.
    pub summary_only: bool,
    /// -A: no plot.
    pub no_plot: bool,
    /// -s: one bar line per set.
    pub separate_bars: bool,
    pub width: i64,
    /// Index into LEVELS.
    pub level: usize,
}

struct Plot {
    min: f64,
    max: f64,
    span: f64,
    width: i64,
    x0: f64,
    dx: f64,
    height: usize,
    data: Vec<u8>,
    bars: Vec<Option<Vec<u8>>>,
    separate: bool,
}

impl Plot {
    fn new(width: i64, separate: bool, sets: usize) -> Plot {
        Plot {
            min: 999e99,
            max: -999e99,
            span: 0.0,
            width,
            x0: 0.0,
            dx: 0.0,
            height: 0,
            data: Vec::new(),
            bars: vec![None; sets],
            separate,
        }
    }

    fn adjust(&mut self, a: f64) {
        if a < self.min {
            self.min = a;
        }
        if a > self.max {
            self.max = a;
        }
        self.span = self.max - self.min;
        self.dx = self.span / (self.width as f64 - 1.0);
        self.x0 = self.min - 0.5 * self.dx;
    }

    fn dimension(&mut self, s: &Set) {
        self.adjust(s.min());
        self.adjust(s.max());
        self.adjust(s.avg() - s.stddev());
        self.adjust(s.avg() + s.stddev());
    }

    /// C's `(int)((v - x0) / dx)`.
    fn col(&self, v: f64) -> i64 {
        ((v - self.x0) / self.dx) as i64
    }

    fn cell(&mut self, row: usize, x: i64) -> Option<&mut u8> {
        let w = self.width.max(0) as usize;
        if x < 0 || x as usize >= w {
            return None;
        }
        self.data.get_mut(row * w + x as usize)
    }

    fn set(&mut self, s: &Set, val: u8) {
        if self.span == 0.0 {
            return;
        }
        let w = self.width.max(0) as usize;
        let bar = if self.separate { val as usize - 1 } else { 0 };
        if self.bars[bar].is_none() {
            self.bars[bar] = Some(vec![0; w]);
        }
        let (mut m, mut i, mut j) = (1usize, i64::MIN, 0usize);
        for &p in &s.points {
            let x = self.col(p);
            if x == i {
                j += 1;
                m = m.max(j);
            } else {
                j = 1;
                i = x;
            }
        }
        m += 1;
        if m > self.height {
            // ministat reallocates to exactly m rows and zeroes the rows above
            // the *current* height, erasing what earlier, taller sets put there.
            self.data.resize(w * m, 0);
            self.data[self.height * w..].fill(0);
        }
        self.height = m;
        i = i64::MIN;
        for &p in &s.points {
            let x = self.col(p);
            if x == i {
                j += 1;
            } else {
                j = 1;
                i = x;
            }
            if let Some(c) = self.cell(j, x) {
                *c |= val;
            }
        }
        let stddev = s.stddev();
        let cols = |v: f64| self.col(v);
        let (lo, hi, med, avg) = (
            cols(s.avg() - stddev),
            cols(s.avg() + stddev),
            cols(s.median()),
            cols(s.avg()),
        );
        let Some(line) = self.bars[bar].as_mut() else {
            return;
        };
        if !stddev.is_nan() {
            put(line, hi, b'|');
            put(line, lo, b'|');
            for x in lo + 1..hi {
                if x >= 0 && (x as usize) < line.len() && line[x as usize] == 0 {
                    line[x as usize] = b'_';
                }
            }
        }
        put(line, med, b'M');
        put(line, avg, b'A');
    }

    fn dump(&self, out: &mut String) {
        if self.span == 0.0 {
            out.push_str("[no plot, span is zero width]\n");
            return;
        }
        let w = self.width.max(0) as usize;
        let frame = format!("+{}+\n", "-".repeat(w));
        out.push_str(&frame);
        for i in 1..self.height {
            out.push('|');
            let row = self.height - i;
            for j in 0..w {
                let k = self.data.get(row * w + j).copied().unwrap_or(0) as usize;
                match SYMBOL.get(k) {
                    Some(&c) => out.push(c as char),
                    None => out.push_str(&format!("[{k:02x}]")),
                }
            }
            out.push_str("|\n");
        }
        for bar in self.bars.iter().flatten() {
            out.push('|');
            out.extend(bar.iter().map(|&c| if c == 0 { ' ' } else { c as char }));
            out.push_str("|\n");
        }
        out.push_str(&frame);
    }
}

fn vitals(out: &mut String, s: &Set, flag: usize) {
    out.push_str(&format!(
        "{} {:>3} {} {} {} {} {}\n",
        SYMBOL[flag] as char,
        s.n(),
        g_width(s.min(), 13, 8),
        g_width(s.max(), 13, 8),
        g_width(s.median(), 13, 8),
        g_width(s.avg(), 13, 8),
        g_width(s.stddev(), 13, 8)
    ));
}

/// The whole standard output of ministat for `sets` (in argument order).
pub fn report(sets: &[Set], flags: Flags) -> String {
    let mut out = String::new();
    for (i, s) in sets.iter().enumerate() {
        out.push_str(&format!("{} {}\n", SYMBOL[i + 1] as char, s.name));
    }
    if !flags.summary_only && !flags.no_plot {
        let mut plot = Plot::new(flags.width, flags.separate_bars, sets.len());
        for s in sets {
            plot.dimension(s);
        }
        for (i, s) in sets.iter().enumerate() {
            plot.set(s, (i + 1) as u8);
        }
        plot.dump(&mut out);
    }
    out.push_str("    N           Min           Max        Median           Avg        Stddev\n");
    vitals(&mut out, &sets[0], 1);
    for (i, s) in sets.iter().enumerate().skip(1) {
        vitals(&mut out, s, i + 1);
        if !flags.summary_only {
            match relative(s, &sets[0], flags.level) {
                Relative::Difference {
                    diff,
                    err,
                    pct,
                    pct_err,
                    pooled,
                } => {
                    out.push_str(&format!(
                        "Difference at {:.1}% confidence\n",
                        LEVELS[flags.level]
                    ));
                    out.push_str(&format!("\t{} +/- {}\n", g(diff, 6), g(err, 6)));
                    out.push_str(&format!("\t{}% +/- {}%\n", g(pct, 6), g(pct_err, 6)));
                    out.push_str(&format!("\t(Student's t, pooled s = {})\n", g(pooled, 6)));
                }
                Relative::NoDifference => {
                    out.push_str(&format!(
                        "No difference proven at {:.1}% confidence\n",
                        LEVELS[flags.level]
                    ));
                }
            }
        }
    }
    out
}
