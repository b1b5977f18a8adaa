//! benchstat's habits for choosing and arranging what is compared:
//! `-filter` (a query over benchmark keys) and `-col` (which key makes the
//! columns). The keys are benchstat's: `.name` (the base name), `.fullname`
//! (the whole name), `.unit`, `.file` (the input's label), `/KEY` (a
//! sub-benchmark key of the name, `BenchmarkSum/size=1000/impl=fast-2`, and
//! `/gomaxprocs` from its `-2`), and any file configuration key (`goos`,
//! `pkg`, `cpu`).
//!
//! The query language is benchstat's: `key:value`, `key:"quoted value"`,
//! `key:/regexp/`, `key:(a OR b)`, `*`, and `AND` (or a space), `OR`, `-x`
//! (not) and parentheses. Nesting is capped, so a hostile query cannot
//! overflow the stack.

use std::fmt;

use crate::ingest::{Dataset, Series};

/// Deepest nesting of parentheses and `-` a query may use.
const MAX_DEPTH: usize = 64;

/// A query that could not be read: where, and what was expected there.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryError {
    /// Byte offset in the query (0-based).
    pub position: usize,
    pub message: String,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.position + 1, self.message)
    }
}

impl std::error::Error for QueryError {}

#[derive(Debug, Clone)]
enum Value {
    Exact(String),
    Regex(regex::Regex),
}

impl Value {
    fn matches(&self, v: &str) -> bool {
        match self {
            Value::Exact(e) => e == v,
            Value::Regex(r) => r.is_match(v),
        }
    }
}

#[derive(Debug, Clone)]
enum Expr {
    All,
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Match { key: String, values: Vec<Value> },
}

/// A parsed `-filter` query.
#[derive(Debug, Clone)]
pub struct Filter {
    expr: Expr,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Regex(String),
    Colon,
    Open,
    Close,
    Minus,
}

fn tokens(q: &str) -> Result<Vec<(usize, Tok)>, QueryError> {
    let b = q.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // A regexp value may only follow a colon (or an opening parenthesis
    // after one): elsewhere '/' starts a key such as /size.
    let mut value_next = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b':' => out.push((i, Tok::Colon)),
            b'(' => out.push((i, Tok::Open)),
            b')' => out.push((i, Tok::Close)),
            b'-' => out.push((i, Tok::Minus)),
            b'"' => {
                let start = i;
                let mut s = String::new();
                i += 1;
                loop {
                    match q[i..].chars().next() {
                        None => {
                            return Err(QueryError {
                                position: start,
                                message: "a quoted value has no closing \"".into(),
                            });
                        }
                        Some('"') => break,
                        Some('\\') if q[i + 1..].starts_with(['"', '\\']) => {
                            s.push(q.as_bytes()[i + 1] as char);
                            i += 2;
                        }
                        Some(ch) => {
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push((start, Tok::Quoted(s)));
            }
            b'/' if value_next => {
                let start = i;
                let Some(end) = q[i + 1..].find('/') else {
                    return Err(QueryError {
                        position: start,
                        message: "a /regexp/ has no closing /".into(),
                    });
                };
                out.push((start, Tok::Regex(q[i + 1..i + 1 + end].to_string())));
                i += end + 2;
                value_next = false;
                continue;
            }
            _ => {
                let start = i;
                while i < b.len() && !b" \t\n\r:()\"".contains(&b[i]) {
                    i += 1;
                }
                out.push((start, Tok::Word(q[start..i].to_string())));
                value_next = false;
                continue;
            }
        }
        value_next = matches!(c, b':') || (c == b'(' && value_next);
        i += 1;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    at: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|(_, t)| t)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.len, |(p, _)| *p)
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, QueryError> {
        Err(QueryError {
            position: self.pos(),
            message: message.into(),
        })
    }

    fn or(&mut self, depth: usize) -> Result<Expr, QueryError> {
        let mut terms = vec![self.and(depth)?];
        while self.peek() == Some(&Tok::Word("OR".into())) {
            self.at += 1;
            terms.push(self.and(depth)?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Expr::Or(terms)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Expr, QueryError> {
        let mut terms = vec![self.unary(depth)?];
        loop {
            match self.peek() {
                None | Some(Tok::Close) => break,
                Some(Tok::Word(w)) if w == "OR" => break,
                Some(Tok::Word(w)) if w == "AND" => {
                    self.at += 1;
                    terms.push(self.unary(depth)?);
                }
                _ => terms.push(self.unary(depth)?),
            }
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            Expr::And(terms)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, QueryError> {
        if depth > MAX_DEPTH {
            return self.err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match self.peek().cloned() {
            Some(Tok::Minus) => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary(depth + 1)?)))
            }
            Some(Tok::Open) => {
                self.at += 1;
                let e = self.or(depth + 1)?;
                if self.peek() != Some(&Tok::Close) {
                    return self.err("expected ')'");
                }
                self.at += 1;
                Ok(e)
            }
            Some(Tok::Word(w)) if w == "*" => {
                self.at += 1;
                Ok(Expr::All)
            }
            Some(Tok::Word(key)) | Some(Tok::Quoted(key)) => {
                let key_at = self.pos();
                self.at += 1;
                if self.peek() != Some(&Tok::Colon) {
                    return Err(QueryError {
                        position: key_at,
                        message: format!(
                            "expected key:value (such as .name:Sum or /size:1000), not '{key}'"
                        ),
                    });
                }
                self.at += 1;
                let values = if self.peek() == Some(&Tok::Open) {
                    self.at += 1;
                    let mut v = vec![self.value()?];
                    while self.peek() == Some(&Tok::Word("OR".into())) {
                        self.at += 1;
                        v.push(self.value()?);
                    }
                    if self.peek() != Some(&Tok::Close) {
                        return self.err("expected ')' or OR in a list of values");
                    }
                    self.at += 1;
                    v
                } else {
                    vec![self.value()?]
                };
                Ok(Expr::Match { key, values })
            }
            Some(Tok::Close) => self.err("unexpected ')'"),
            Some(Tok::Colon) => self.err("a ':' with no key before it"),
            Some(Tok::Regex(_)) => self.err("a /regexp/ is a value: key:/regexp/"),
            None => self.err("the query ends where a term was expected"),
        }
    }

    fn value(&mut self) -> Result<Value, QueryError> {
        let at = self.pos();
        match self.peek().cloned() {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => {
                self.at += 1;
                Ok(Value::Exact(w))
            }
            Some(Tok::Regex(r)) => {
                self.at += 1;
                // Anchored as benchstat anchors it: the whole value must match.
                regex::RegexBuilder::new(&format!("^(?:{r})$"))
                    .size_limit(1 << 20)
                    .build()
                    .map(Value::Regex)
                    .map_err(|e| QueryError {
                        position: at,
                        message: format!("not a regular expression: {e}"),
                    })
            }
            _ => self.err("expected a value after ':'"),
        }
    }
}

impl Filter {
    /// Parse a benchstat query; `*` or an empty query keeps everything.
    pub fn parse(q: &str) -> Result<Filter, QueryError> {
        let toks = tokens(q)?;
        if toks.is_empty() {
            return Ok(Filter { expr: Expr::All });
        }
        let mut p = Parser {
            toks,
            at: 0,
            len: q.len(),
        };
        let expr = p.or(0)?;
        if p.at < p.toks.len() {
            return p.err("unexpected text after the query");
        }
        Ok(Filter { expr })
    }

    /// Whether the series of this input is kept.
    pub fn keeps(&self, d: &Dataset, s: &Series) -> bool {
        eval(&self.expr, d, s)
    }
}

fn eval(e: &Expr, d: &Dataset, s: &Series) -> bool {
    match e {
        Expr::All => true,
        Expr::Not(x) => !eval(x, d, s),
        Expr::And(xs) => xs.iter().all(|x| eval(x, d, s)),
        Expr::Or(xs) => xs.iter().any(|x| eval(x, d, s)),
        Expr::Match { key, values } => {
            let v = key_value(key, d, s).unwrap_or_default();
            values.iter().any(|m| m.matches(&v))
        }
    }
}

/// The name split as Go writes it: base, sub-benchmark parts, and the
/// GOMAXPROCS suffix ("Sum/size=1000/impl=fast-2" -> "Sum", ["size=1000",
/// "impl=fast"], Some("2")).
fn name_parts(name: &str) -> (&str, Vec<&str>, Option<&str>) {
    let (body, procs) = match name.rsplit_once('-') {
        Some((b, p)) if !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()) => (b, Some(p)),
        _ => (name, None),
    };
    let mut parts = body.split('/');
    let base = parts.next().unwrap_or("");
    (base, parts.collect(), procs)
}

/// A key's value for a series of an input (`None` when it has none).
pub fn key_value(key: &str, d: &Dataset, s: &Series) -> Option<String> {
    match key {
        ".name" => Some(name_parts(&s.name).0.to_string()),
        ".fullname" => Some(s.name.clone()),
        ".unit" => Some(s.unit.clone()),
        ".file" => Some(d.source.clone()),
        "/gomaxprocs" => name_parts(&s.name).2.map(str::to_string),
        k if k.starts_with('/') => {
            let k = &k[1..];
            let (_, parts, _) = name_parts(&s.name);
            parts.iter().find_map(|p| {
                p.split_once('=')
                    .and_then(|(pk, v)| (pk == k).then(|| v.to_string()))
            })
        }
        // The series' own value first: a key that changes within one file
        // (`note: before` ... `note: after`) is in each series' group; the
        // file's configuration holds only one of its values.
        k => s
            .group
            .split(' ')
            .find_map(|p| {
                p.split_once('=')
                    .and_then(|(gk, v)| (gk == k).then(|| v.to_string()))
            })
            .or_else(|| {
                d.config
                    .iter()
                    .find(|(ck, _)| ck == k)
                    .map(|(_, v)| v.clone())
            }),
    }
}

/// The name with a sub-benchmark key taken out (the key now makes the
/// columns): "Sum/size=1000/impl=fast-2" without /impl is "Sum/size=1000-2".
fn without(key: &str, name: &str) -> String {
    let (base, parts, procs) = name_parts(name);
    let mut out = base.to_string();
    for p in parts {
        let is_key = key
            .strip_prefix('/')
            .is_some_and(|k| p.split_once('=').is_some_and(|(pk, _)| pk == k));
        if !is_key {
            out.push('/');
            out.push_str(p);
        }
    }
    if let Some(n) = procs.filter(|_| key != "/gomaxprocs") {
        out.push('-');
        out.push_str(n);
    }
    out
}

/// Keep only the series the filter keeps; inputs left empty stay (the
/// comparison then says what is missing).
pub fn filter(datasets: &mut [Dataset], f: &Filter) {
    for d in datasets.iter_mut() {
        let kept: Vec<Series> = d.series.iter().filter(|s| f.keeps(d, s)).cloned().collect();
        d.series = kept;
    }
}

/// Regroup every input's series into one input per value of `key`, in the
/// order values first appear, as benchstat's `-col KEY`: the first value is
/// the baseline. A series without the key goes under "" (benchstat's empty
/// column). `.file` is the usual grouping and changes nothing.
pub fn columns(datasets: Vec<Dataset>, key: &str) -> Vec<Dataset> {
    if key == ".file" {
        return datasets;
    }
    let mut out: Vec<Dataset> = Vec::new();
    for d in &datasets {
        for s in &d.series {
            let value = key_value(key, d, s).unwrap_or_default();
            let mut s2 = s.clone();
            if key.starts_with('/') {
                s2.name = without(key, &s.name);
            } else if !key.starts_with('.') {
                // A configuration key: the series' group no longer tells them apart by it.
                s2.group = group_without(&s.group, key);
            }
            let col = match out.iter().position(|o| o.source == value) {
                Some(i) => i,
                None => {
                    out.push(Dataset {
                        source: value.clone(),
                        format: d.format,
                        series: Vec::new(),
                        config: d.config.iter().filter(|(k, _)| k != key).cloned().collect(),
                        machine: d.machine.clone(),
                    });
                    out.len() - 1
                }
            };
            let series = &mut out[col].series;
            match series
                .iter_mut()
                .find(|o| o.group == s2.group && o.name == s2.name && o.unit == s2.unit)
            {
                Some(o) => o.values.extend(s2.values),
                None => series.push(s2),
            }
        }
    }
    out
}

/// A group (`pkg=a note=x`) without the configuration key `key`.
fn group_without(group: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    group
        .split(' ')
        .filter(|p| !p.starts_with(&prefix))
        .collect::<Vec<_>>()
        .join(" ")
}

/// benchstat's `-row KEY`: each series named by its value of `key` (the
/// rest of its name and the key's part of its group dropped); series that
/// share a row's value within one input are pooled, as benchstat pools
/// the values of one cell. A series without the key keeps its name.
pub fn rows(datasets: Vec<Dataset>, key: &str) -> Vec<Dataset> {
    datasets
        .into_iter()
        .map(|mut d| {
            let mut out: Vec<Series> = Vec::new();
            for mut s2 in std::mem::take(&mut d.series) {
                if let Some(v) = key_value(key, &d, &s2) {
                    s2.name = v;
                }
                if !key.starts_with('.') && !key.starts_with('/') {
                    s2.group = group_without(&s2.group, key);
                }
                match out
                    .iter_mut()
                    .find(|o| o.group == s2.group && o.name == s2.name && o.unit == s2.unit)
                {
                    Some(o) => {
                        o.values.extend(s2.values);
                        o.described = None;
                    }
                    None => out.push(s2),
                }
            }
            d.series = out;
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;

    fn series(name: &str, unit: &str) -> Series {
        Series {
            group: "pkg=example.com/sub".into(),
            name: name.into(),
            unit: unit.into(),
            higher_is_better: false,
            exact: false,
            values: vec![1.0, 2.0],
            command: None,
            described: None,
        }
    }

    fn dataset(source: &str) -> Dataset {
        Dataset {
            source: source.into(),
            format: Format::Go,
            series: vec![
                series("Sum/size=1000/impl=fast-2", "sec/op"),
                series("Sum/size=1000/impl=slow-2", "sec/op"),
                series("Sum/size=4000/impl=fast-2", "sec/op"),
                series("Sum/size=4000/impl=slow-2", "B/op"),
                series("Other-2", "sec/op"),
            ],
            config: vec![("goos".into(), "linux".into())],
            machine: None,
        }
    }

    fn kept(q: &str) -> Vec<String> {
        let f = Filter::parse(q).unwrap();
        let d = dataset("old.txt");
        d.series
            .iter()
            .filter(|s| f.keeps(&d, s))
            .map(|s| s.name.clone())
            .collect()
    }

    #[test]
    fn queries_select_as_benchstat_does() {
        assert_eq!(kept("*").len(), 5);
        assert_eq!(kept("").len(), 5);
        assert_eq!(kept("/size:1000").len(), 2);
        assert_eq!(
            kept("/impl:slow -/size:4000"),
            ["Sum/size=1000/impl=slow-2"]
        );
        assert_eq!(kept("/impl:slow AND -/size:4000").len(), 1);
        assert_eq!(kept(".name:Other"), ["Other-2"]);
        assert_eq!(kept(".fullname:Other-2"), ["Other-2"]);
        assert_eq!(kept(".unit:B/op"), ["Sum/size=4000/impl=slow-2"]);
        assert_eq!(kept("/size:(1000 OR 4000)").len(), 4);
        assert_eq!(kept(".name:/S.*/").len(), 4);
        assert_eq!(
            kept(".name:/S/").len(),
            0,
            "a regexp matches the whole value"
        );
        assert_eq!(kept("(/impl:fast OR .name:Other) /gomaxprocs:2").len(), 3);
        assert_eq!(kept("goos:linux").len(), 5);
        assert_eq!(kept("pkg:example.com/sub").len(), 5);
        assert_eq!(kept("goos:\"darwin\"").len(), 0);
        assert_eq!(kept(".file:old.txt").len(), 5);
    }

    #[test]
    fn bad_queries_say_where() {
        for (q, at) in [
            ("/size", 0),
            ("/size:", 6),
            ("(/size:1", 8),
            (".name:/[/", 6),
            ("a:\"open", 2),
            (")", 0),
        ] {
            let e = Filter::parse(q).unwrap_err();
            assert_eq!(e.position, at, "{q}: {e}");
        }
        let deep = "-".repeat(10_000) + "a:b";
        assert!(Filter::parse(&deep).is_err());
        let deep = "(".repeat(10_000);
        assert!(Filter::parse(&deep).is_err());
    }

    #[test]
    fn a_key_makes_the_columns() {
        let cols = columns(vec![dataset("new.txt")], "/impl");
        let names: Vec<&str> = cols.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(names, ["fast", "slow", ""]);
        let fast: Vec<&str> = cols[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(fast, ["Sum/size=1000-2", "Sum/size=4000-2"]);
        assert_eq!(cols[2].series[0].name, "Other-2");
        // Two inputs pool into the same columns.
        let cols = columns(vec![dataset("a"), dataset("b")], "/size");
        assert_eq!(cols.len(), 3);
        assert_eq!(cols[0].series[0].values.len(), 4);
        assert_eq!(columns(vec![dataset("a")], ".file")[0].source, "a");
        assert_eq!(without("/gomaxprocs", "Sum/size=1-8"), "Sum/size=1");
    }
}
