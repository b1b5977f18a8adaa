//! Plain number files, read as ministat reads them: one value per line, in
//! column `-C` of tokens split by any of the `-d` characters (default space
//! and tab); a token starting with `#` ends the line (comments); lines
//! without that column are skipped.

use super::NumberOptions;
use super::cnum::strtod;
use super::error::IngestError;

/// One line's token for the column, or `None` (skip the line).
fn column_token<'a>(line: &'a str, opts: &NumberOptions) -> Option<&'a str> {
    let delims = opts.delimiters.as_bytes();
    line.split(|c: char| c.is_ascii() && delims.contains(&(c as u8)))
        .filter(|t| !t.is_empty())
        .enumerate()
        .take_while(|(_, t)| !t.starts_with('#'))
        .find(|(i, _)| i + 1 == opts.column)
        .map(|(_, t)| t)
}

/// Trailing white space of a line, as ministat drops it (`\r` of Windows line ends, `\v`,
/// `\f`, spaces and tabs).
fn trim_end(line: &str) -> &str {
    line.trim_end_matches([' ', '\t', '\r', '\x0b', '\x0c'])
}

/// ministat's exact rules: the token must be a whole strtod number (inf and
/// nan included; trailing white space of the line dropped, as Debian's ministat
/// does). Returns the values in file order, or the 1-based number of the first
/// invalid line.
pub fn read_strict(text: &str, opts: &NumberOptions) -> Result<Vec<f64>, usize> {
    let mut values = Vec::new();
    for (i, line) in lines(text).enumerate() {
        let line = trim_end(line);
        if let Some(token) = column_token(line, opts) {
            let (v, used) = strtod(token);
            if used != token.len() {
                return Err(i + 1);
            }
            values.push(v);
        }
    }
    Ok(values)
}

/// tardy's rules: like ministat, but `\r` and surrounding spaces are
/// tolerated, and a non-number, NaN or infinity is an error naming the line.
pub fn read_lenient(
    text: &str,
    source: &str,
    opts: &NumberOptions,
) -> Result<Vec<f64>, IngestError> {
    let mut values = Vec::new();
    for (i, line) in lines(text).enumerate() {
        let line = trim_end(line);
        if i == 0 && line.trim_start().starts_with("command,mean,stddev") {
            return Err(IngestError::at(
                source,
                Some(1),
                "is hyperfine's --export-csv, which holds only each command's summary \
                 (mean, stddev, min, max), not its runs: export them with hyperfine \
                 --export-json and give tardy that file"
                    .into(),
            ));
        }
        if let Some(token) = column_token(line, opts) {
            let token = token.trim();
            if token.is_empty() {
                continue;
            }
            let (v, used) = strtod(token);
            if used != token.len() || used == 0 {
                let shown: String = token.chars().take(40).collect();
                return Err(IngestError::at(
                    source,
                    Some(i + 1),
                    format!(
                        "expected a number in column {}, found '{shown}'",
                        opts.column
                    ),
                ));
            }
            if !v.is_finite() {
                return Err(IngestError::at(
                    source,
                    Some(i + 1),
                    format!("expected a finite number, found '{token}'"),
                ));
            }
            values.push(v);
        }
    }
    Ok(values)
}

/// Lines as fgets sees them: split at '\n', no empty line after a final '\n'.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').filter(move |_| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ministat_rules() {
        let o = NumberOptions::default();
        assert_eq!(
            read_strict("150\n400\n720\t\n500\n930\n", &o),
            Ok(vec![150.0, 400.0, 720.0, 500.0, 930.0])
        );
        assert_eq!(
            read_strict("# c\n5\n\n  6 # x\n#7\n", &o),
            Ok(vec![5.0, 6.0])
        );
        assert_eq!(read_strict("1\nabc\n", &o), Err(2));
        // Debian's ministat 20150715 drops trailing white space: CRLF, \v, \f, spaces.
        assert_eq!(
            read_strict("1\r\n2\x0b\n3\x0c\n4 \r\n", &o),
            Ok(vec![1.0, 2.0, 3.0, 4.0])
        );
        // ... but not inside a line: "1\r5" is not a number.
        assert_eq!(read_strict("1\r5\n", &o), Err(1));
        let col2 = NumberOptions {
            column: 2,
            delimiters: ",".into(),
        };
        assert_eq!(read_strict("a,1\nb,2\nc\n", &col2), Ok(vec![1.0, 2.0]));
    }

    #[test]
    fn lenient_errors_name_the_line() {
        let o = NumberOptions::default();
        assert_eq!(read_lenient("1\r\n2\r\n", "f", &o), Ok(vec![1.0, 2.0]));
        let e = read_lenient("1\n2\n3x\n", "f", &o).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:3: expected a number in column 1, found '3x'"
        );
        let e = read_lenient("1\nnan\n", "f", &o).unwrap_err();
        assert_eq!(e.line, Some(2));
        let comma = NumberOptions {
            column: 1,
            delimiters: ",".into(),
        };
        assert_eq!(
            read_lenient("1 ,x\n 2,y\n", "f", &comma),
            Ok(vec![1.0, 2.0])
        );
    }
}
