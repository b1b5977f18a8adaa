//! The server's errors as responses: every 4xx and 5xx of the API is a
//! JSON body `{"error": {"status": 413, "code": "too_large", "message": "..."}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::store::DbError;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    /// The message is made safe to send back: input it echoes is cut to
    /// 200 characters, control characters escaped.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: crate::fmt::clip::message(&message.into()),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": {
            "status": self.status.as_u16(),
            "code": self.code,
            "message": self.message,
        }})
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> ApiError {
        match e {
            DbError::NoSeries(_) | DbError::NoAlert(_) | DbError::NoTest { .. } => {
                ApiError::not_found(e.to_string())
            }
            DbError::Invalid(m) => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", m),
            DbError::Locked { .. } => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the database is busy; retry shortly",
            ),
            other => {
                eprintln!("tardy serve: database error: {other}");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "database",
                    "the database failed; nothing was written (details in the server's log)",
                )
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body())).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"tardy\""),
            );
        }
        r
    }
}
