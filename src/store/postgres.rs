//! The PostgreSQL driver of the history store: the same migrations and the
//! same queries ([`super::sqlstore`]) as SQLite, for a team's server. Any
//! number of `tardy serve` processes may share one database: every write is
//! one transaction, uploads are made unique by the database itself, and
//! migrations take an advisory lock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error;
use std::path::PathBuf;

use bytes::BytesMut;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};

use super::db::DbError;
use super::schema::Dialect;
use super::sql::{Conn, Row, RowVisitor, Value};
use super::sqlstore::SqlStore;

/// The history store on a PostgreSQL database.
pub type PgStore = SqlStore<PgConn>;

/// One connection to a PostgreSQL database.
pub struct PgConn {
    client: RefCell<Client>,
    statements: RefCell<HashMap<String, Statement>>,
    /// The URL without its password, for messages.
    place: PathBuf,
}

impl SqlStore<PgConn> {
    /// Connect to `url` (`postgres://user:password@host:port/db`), migrate,
    /// and select (creating) `project`.
    pub fn connect(url: &str, project: &str) -> Result<PgStore, DbError> {
        let place = PathBuf::from(redact(url));
        let client = Client::connect(url, NoTls).map_err(|e| DbError::Open {
            path: place.clone(),
            detail: describe(&e),
        })?;
        let conn = PgConn {
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
            place: place.clone(),
        };
        SqlStore::new(conn, project, &place)
    }

    /// Is the connection still usable?
    pub fn is_closed(&self) -> bool {
        self.conn().client.borrow().is_closed()
    }
}

/// `postgres://user:secret@host/db` -> `postgres://user@host/db`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((auth, host)) => {
            let user = auth.split_once(':').map_or(auth, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// `?1` placeholders as PostgreSQL's `$1`.
fn translate(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut src = e.source();
            while let Some(inner) = src {
                s = format!("{s}: {inner}");
                src = inner.source();
            }
            s
        }
    }
}

impl PgConn {
    fn err(&self, e: postgres::Error) -> DbError {
        use postgres::error::SqlState;
        if let Some(code) = e.code()
            && (*code == SqlState::T_R_DEADLOCK_DETECTED
                || *code == SqlState::T_R_SERIALIZATION_FAILURE
                || *code == SqlState::LOCK_NOT_AVAILABLE)
        {
            return DbError::Locked {
                path: self.place.clone(),
                waited_s: 0.0,
            };
        }
        if e.is_closed() {
            return DbError::Open {
                path: self.place.clone(),
                detail: format!("the connection was lost ({})", describe(&e)),
            };
        }
        DbError::Sql {
            path: self.place.clone(),
            detail: describe(&e),
        }
    }

    fn statement(&self, sql: &str) -> Result<Statement, DbError> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let stmt = self
            .client
            .borrow_mut()
            .prepare(&translate(sql))
            .map_err(|e| self.err(e))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    fn simple(&self, sql: &str) -> Result<(), DbError> {
        self.client
            .borrow_mut()
            .batch_execute(sql)
            .map_err(|e| self.err(e))
    }
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => v.to_string().to_sql(ty, out),
            },
            Value::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::FLOAT8 => v.to_sql(ty, out),
                _ => Err(format!("a number cannot be stored as {ty}").into()),
            },
            Value::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn value_of(row: &postgres::Row, i: usize) -> Result<Value, postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::VOID => None,
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Value::Int(v as i64)),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Value::Int(v as i64)),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map(|v| Value::Int(v as i64)),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|v| Value::Real(v as f64)),
        _ => row.try_get::<_, Option<String>>(i)?.map(Value::Text),
    }
    .unwrap_or(Value::Null))
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|v| v as _).collect();
        self.client
            .borrow_mut()
            .execute(&stmt, &params)
            .map_err(|e| self.err(e))
    }

    fn query_each(&self, sql: &str, args: &[Value], f: &mut RowVisitor<'_>) -> Result<(), DbError> {
        let stmt = self.statement(sql)?;
        // Rows are read in full before `f` sees them: `f` may query again,
        // and one connection runs one statement at a time.
        let rows = self
            .client
            .borrow_mut()
            .query_raw(&stmt, args.iter())
            .and_then(|rows| rows.collect::<Vec<_>>())
            .map_err(|e| self.err(e))?;
        for row in rows {
            let mut values = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                values.push(value_of(&row, i).map_err(|e| self.err(e))?);
            }
            f(Row(values))?;
        }
        Ok(())
    }

    fn begin(&self) -> Result<(), DbError> {
        self.simple("BEGIN")
    }

    fn commit(&self) -> Result<(), DbError> {
        self.simple("COMMIT")
    }

    fn rollback(&self) -> Result<(), DbError> {
        self.simple("ROLLBACK")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_passwords() {
        assert_eq!(
            translate("a = ?1 AND b = ?12 OR c = '?'"),
            "a = $1 AND b = $12 OR c = '?'"
        );
        assert_eq!(
            redact("postgres://me:secret@db:5432/tardy"),
            "postgres://me@db:5432/tardy"
        );
        assert_eq!(redact("postgres://db/tardy"), "postgres://db/tardy");
    }
}
