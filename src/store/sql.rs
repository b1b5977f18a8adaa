//! The little SQL interface both databases offer tardy: run a statement with
//! `?1`-numbered parameters, stream rows of plain values, and transactions.
//! [`super::sqlstore`] writes every query once against it; [`super::sqlite`]
//! and [`super::postgres`] are its two drivers.

use super::db::DbError;
use super::schema::Dialect;

/// A parameter or a column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(v.clone())
    }
}

impl<T: Clone + Into<Value>> From<&Option<T>> for Value {
    fn from(v: &Option<T>) -> Value {
        v.clone().map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// Parameters from a list of expressions.
#[macro_export]
#[doc(hidden)]
macro_rules! sql_args {
    ($($x:expr),* $(,)?) => { &[$($crate::store::sql::Value::from($x)),*] as &[$crate::store::sql::Value] };
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn get(&self, i: usize) -> Result<&Value, DbError> {
        self.0
            .get(i)
            .ok_or_else(|| DbError::Invalid(format!("internal: the query has no column {i}")))
    }

    fn wrong(&self, i: usize, want: &str) -> DbError {
        DbError::Invalid(format!(
            "internal: column {i} holds {:?}, expected {want}",
            self.0.get(i)
        ))
    }

    pub fn opt_i64(&self, i: usize) -> Result<Option<i64>, DbError> {
        match self.get(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v)),
            Value::Real(v) if v.fract() == 0.0 => Ok(Some(*v as i64)),
            _ => Err(self.wrong(i, "an integer")),
        }
    }

    pub fn i64(&self, i: usize) -> Result<i64, DbError> {
        self.opt_i64(i)?.ok_or_else(|| self.wrong(i, "an integer"))
    }

    pub fn opt_f64(&self, i: usize) -> Result<Option<f64>, DbError> {
        match self.get(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v as f64)),
            Value::Real(v) => Ok(Some(*v)),
            _ => Err(self.wrong(i, "a number")),
        }
    }

    pub fn f64(&self, i: usize) -> Result<f64, DbError> {
        self.opt_f64(i)?.ok_or_else(|| self.wrong(i, "a number"))
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>, DbError> {
        match self.get(i)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s.clone())),
            _ => Err(self.wrong(i, "text")),
        }
    }

    pub fn text(&self, i: usize) -> Result<String, DbError> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "text"))
    }
}

/// Called with each row of a query.
pub type RowVisitor<'a> = dyn FnMut(Row) -> Result<(), DbError> + 'a;

/// A connection to one database. Statements use `?1`, `?2`... parameters.
pub trait Conn {
    fn dialect(&self) -> Dialect;
    /// Run a statement; the number of rows it changed.
    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64, DbError>;
    /// Stream a query's rows to `f`.
    fn query_each(&self, sql: &str, args: &[Value], f: &mut RowVisitor<'_>) -> Result<(), DbError>;
    /// Start a write transaction (SQLite takes the write lock at once).
    fn begin(&self) -> Result<(), DbError>;
    fn commit(&self) -> Result<(), DbError>;
    fn rollback(&self) -> Result<(), DbError>;

    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, DbError> {
        let mut out = Vec::new();
        self.query_each(sql, args, &mut |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    fn query_opt(&self, sql: &str, args: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    fn query_one(&self, sql: &str, args: &[Value]) -> Result<Row, DbError> {
        self.query_opt(sql, args)?
            .ok_or_else(|| DbError::Invalid("internal: the query returned no row".into()))
    }

    /// Run `f` in one transaction: committed when it succeeds, rolled back
    /// (nothing written) when it fails.
    fn transaction<T>(&self, f: impl FnOnce(&Self) -> Result<T, DbError>) -> Result<T, DbError>
    where
        Self: Sized,
    {
        self.begin()?;
        match f(self) {
            Ok(v) => match self.commit() {
                Ok(()) => Ok(v),
                Err(e) => {
                    let _ = self.rollback();
                    Err(e)
                }
            },
            Err(e) => {
                let _ = self.rollback();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_convert_and_complain() {
        let r = Row(vec![
            Value::Int(3),
            Value::Null,
            Value::Real(2.5),
            Value::Text("x".into()),
        ]);
        assert_eq!(r.i64(0).unwrap(), 3);
        assert_eq!(r.opt_i64(1).unwrap(), None);
        assert_eq!(r.f64(0).unwrap(), 3.0);
        assert_eq!(r.f64(2).unwrap(), 2.5);
        assert_eq!(r.text(3).unwrap(), "x");
        assert!(r.text(0).is_err());
        assert!(r.i64(1).is_err());
        assert!(r.i64(9).is_err());
        let args = sql_args!(1i64, "a", None::<i64>, &Some(2.0));
        assert_eq!(args[2], Value::Null);
        assert_eq!(args[3], Value::Real(2.0));
    }
}
