//! Errors that name the file, the line when there is one, and what was expected.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map_or(String::new(), |l| format!(":{l}")))]
pub struct IngestError {
    /// The file as the user named it.
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl IngestError {
    pub fn at(source: &str, line: Option<usize>, message: String) -> IngestError {
        IngestError {
            file: source.to_string(),
            line,
            message,
        }
    }

    pub fn io(source: &str, e: std::io::Error) -> IngestError {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => format!("cannot read: {e}"),
        };
        IngestError::at(source, None, message)
    }
}
