//! Parameter scans: `-P VAR MIN MAX [-D STEP]` and `-L VAR a,b,c`, expanded
//! into one benchmark per command and combination, with `{VAR}` substituted
//! in the command, its name and its hooks.

use std::collections::BTreeMap;

use super::error::MeasureError;

/// The most values one scan may produce.
const MAX_VALUES: usize = 100_000;

/// One parameter and its values, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub values: Vec<String>,
}

/// The values of `-P VAR MIN MAX [-D STEP]`. Integers without a step count by
/// one; decimals keep as many digits as the most precise of the three numbers.
pub fn scan(
    name: &str,
    min: &str,
    max: &str,
    step: Option<&str>,
) -> Result<Parameter, MeasureError> {
    let parse = |what: &str, s: &str| -> Result<f64, MeasureError> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                MeasureError::Parameter(format!("{what} '{s}' of '{name}' is not a number"))
            })
    };
    check_name(name)?;
    let (lo, hi) = (parse("minimum", min)?, parse("maximum", max)?);
    let step_str = step.unwrap_or("1");
    let d = parse("step", step_str)?;
    if d <= 0.0 {
        return Err(MeasureError::Parameter(format!(
            "step of '{name}' must be positive, not {step_str}"
        )));
    }
    if lo > hi {
        return Err(MeasureError::Parameter(format!(
            "minimum {min} of '{name}' is above its maximum {max}"
        )));
    }
    let decimals = [min, max, step_str]
        .iter()
        .map(|s| s.trim().split_once('.').map_or(0, |(_, f)| f.len()))
        .max()
        .unwrap_or(0);
    let count = ((hi - lo) / d + 1e-9).floor() as usize + 1;
    if count > MAX_VALUES {
        return Err(MeasureError::Parameter(format!(
            "'{name}' would take {count} values (at most {MAX_VALUES})"
        )));
    }
    let values = (0..count)
        .map(|i| format!("{:.*}", decimals, lo + i as f64 * d))
        .collect();
    Ok(Parameter {
        name: name.to_string(),
        values,
    })
}

/// The values of `-L VAR a,b,c`.
pub fn list(name: &str, values: &str) -> Result<Parameter, MeasureError> {
    check_name(name)?;
    let values: Vec<String> = values.split(',').map(str::to_string).collect();
    if values.iter().all(|v| v.is_empty()) {
        return Err(MeasureError::Parameter(format!("'{name}' has no values")));
    }
    Ok(Parameter {
        name: name.to_string(),
        values,
    })
}

fn check_name(name: &str) -> Result<(), MeasureError> {
    if name.is_empty() || name.contains(['{', '}']) {
        return Err(MeasureError::Parameter(format!(
            "'{name}' is not a usable parameter name"
        )));
    }
    Ok(())
}

/// Every combination of the parameters' values (the first parameter varies
/// slowest). One empty combination when there are no parameters.
pub fn combinations(params: &[Parameter]) -> Result<Vec<BTreeMap<String, String>>, MeasureError> {
    let mut seen = std::collections::HashSet::new();
    for p in params {
        if !seen.insert(&p.name) {
            return Err(MeasureError::Parameter(format!(
                "'{}' is given twice",
                p.name
            )));
        }
    }
    let mut combos = vec![BTreeMap::new()];
    for p in params {
        let mut next = Vec::with_capacity(combos.len() * p.values.len());
        for combo in &combos {
            for v in &p.values {
                let mut c = combo.clone();
                c.insert(p.name.clone(), v.clone());
                next.push(c);
            }
        }
        if next.len() > MAX_VALUES {
            return Err(MeasureError::Parameter(format!(
                "the parameters make {} combinations (at most {MAX_VALUES})",
                next.len()
            )));
        }
        combos = next;
    }
    Ok(combos)
}

/// Replace every `{NAME}` of `values` in `template`.
pub fn substitute(template: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_and_decimal_scans() {
        assert_eq!(
            scan("n", "1", "4", None).unwrap().values,
            ["1", "2", "3", "4"]
        );
        assert_eq!(
            scan("t", "0.1", "0.3", Some("0.1")).unwrap().values,
            ["0.1", "0.2", "0.3"]
        );
        assert_eq!(scan("t", "0", "1", Some("0.25")).unwrap().values.len(), 5);
    }

    #[test]
    fn bad_scans_are_errors() {
        assert!(scan("n", "a", "3", None).is_err());
        assert!(scan("n", "3", "1", None).is_err());
        assert!(scan("n", "1", "3", Some("0")).is_err());
        assert!(scan("n", "1", "1e9", None).is_err());
        assert!(scan("{n}", "1", "2", None).is_err());
    }

    #[test]
    fn combinations_are_a_product() {
        let p = [
            list("a", "x,y").unwrap(),
            scan("n", "1", "3", None).unwrap(),
        ];
        let c = combinations(&p).unwrap();
        assert_eq!(c.len(), 6);
        assert_eq!(substitute("run {a} {n} {other}", &c[4]), "run y 2 {other}");
        assert!(combinations(&[list("a", "1").unwrap(), list("a", "2").unwrap()]).is_err());
    }
}
