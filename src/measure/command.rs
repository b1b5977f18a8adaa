//! From a command string to something to execute: direct argv or a shell.
//!
//! A command without shell syntax is split into words (honouring quotes and
//! backslashes the way `sh` would) and executed directly, which is faster and
//! more precise. Anything a shell would interpret (pipes, redirections,
//! variables, globs, command substitution, `~`, comments, leading `VAR=x`
//! assignments, builtins like `cd`) makes tardy run it with `SHELL -c`.

use std::path::{Path, PathBuf};

use super::error::MeasureError;

/// How to execute one command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    Direct(Vec<String>),
    Shell(String),
}

/// Words that only mean something to a shell.
const SHELL_ONLY: &[&str] = &[
    "cd", "export", "source", ".", "alias", "unalias", "unset", "set", "exit", "eval", "exec",
    "if", "then", "else", "fi", "for", "while", "until", "do", "done", "case", "esac", "function",
    "return", "shift", "trap", "umask", "ulimit", "wait", "readonly", "local", "declare",
    "typeset", "!", "{", "}", "[[", "time", "builtin", "command", "type", "hash", "jobs", "fg",
    "bg", "read", "let", "shopt", "pushd", "popd",
];

/// Decide how to run `command`: `force_direct` is `-N/--no-shell`.
pub fn parse(command: &str, force_direct: bool) -> Result<CommandLine, MeasureError> {
    if command.trim().is_empty() {
        return Err(MeasureError::EmptyCommand);
    }
    match split_words(command) {
        Some(words) if !words.is_empty() => {
            if !force_direct && SHELL_ONLY.contains(&words[0].as_str()) {
                Ok(CommandLine::Shell(command.to_string()))
            } else {
                Ok(CommandLine::Direct(words))
            }
        }
        Some(_) => Err(MeasureError::EmptyCommand),
        None if force_direct => {
            // -N: split on whitespace like hyperfine's --shell=none, no interpretation.
            Ok(CommandLine::Direct(
                command.split_whitespace().map(str::to_string).collect(),
            ))
        }
        None => Ok(CommandLine::Shell(command.to_string())),
    }
}

/// Split `s` into words as `sh` would, or `None` when it holds anything that
/// needs a shell to mean what it says.
pub fn split_words(s: &str) -> Option<Vec<String>> {
    #[derive(PartialEq)]
    enum State {
        Normal,
        Single,
        Double,
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut state = State::Normal;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Normal => match c {
                ' ' | '\t' => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                '\'' => {
                    state = State::Single;
                    in_word = true;
                }
                '"' => {
                    state = State::Double;
                    in_word = true;
                }
                '\\' => {
                    let next = chars.next()?;
                    if next == '\n' {
                        return None;
                    }
                    word.push(next);
                    in_word = true;
                }
                '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | '\n'
                | '\r' => return None,
                '#' | '~' if !in_word => return None,
                '=' if words.is_empty() && in_word && is_name(&word) => return None,
                _ => {
                    word.push(c);
                    in_word = true;
                }
            },
            State::Single => {
                if c == '\'' {
                    state = State::Normal;
                } else {
                    word.push(c);
                }
            }
            State::Double => match c {
                '"' => state = State::Normal,
                '$' | '`' => return None,
                '\\' => match chars.peek() {
                    Some('"') | Some('\\') => word.push(chars.next()?),
                    Some('$') | Some('`') | Some('\n') => return None,
                    _ => word.push('\\'),
                },
                _ => word.push(c),
            },
        }
    }
    if state != State::Normal {
        return None; // unterminated quote: let the shell report it
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// Join `argv` into one command string that splits back into the same words.
pub fn join_quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty() && split_words(w).is_some_and(|v| v.len() == 1 && v[0] == *w) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Find `program` the way execvp would: a path when it contains a slash,
/// otherwise the first executable file of that name in `PATH`.
pub fn resolve_program(program: &str, cwd: Option<&Path>) -> Result<PathBuf, MeasureError> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.contains('/') {
        let path = match cwd {
            Some(dir) if Path::new(program).is_relative() => dir.join(program),
            _ => PathBuf::from(program),
        };
        if !path.exists() {
            return Err(MeasureError::ProgramNotFound {
                program: program.to_string(),
                hint: String::new(),
            });
        }
        if !is_exec(&path) {
            return Err(MeasureError::NotExecutable {
                program: program.to_string(),
            });
        }
        return Ok(PathBuf::from(program));
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join(program);
        if is_exec(&candidate) {
            return Ok(candidate);
        }
    }
    let hint = if program.contains(' ') {
        " (a command with its arguments must be one quoted string per command)".to_string()
    } else {
        String::new()
    };
    Err(MeasureError::ProgramNotFound {
        program: program.to_string(),
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Option<Vec<String>> {
        split_words(s)
    }

    #[test]
    fn plain_commands_split_into_words() {
        assert_eq!(
            words("sleep 0.01"),
            Some(vec!["sleep".into(), "0.01".into()])
        );
        assert_eq!(
            words("grep 'a b' \"c d\" e\\ f"),
            Some(vec![
                "grep".into(),
                "a b".into(),
                "c d".into(),
                "e f".into()
            ])
        );
        assert_eq!(
            words("echo 'a*b' \"x?\""),
            Some(vec!["echo".into(), "a*b".into(), "x?".into()])
        );
        assert_eq!(words("  a   b  "), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            words("env A=1 prog"),
            Some(vec!["env".into(), "A=1".into(), "prog".into()])
        );
        assert_eq!(
            words("prog --opt=1"),
            Some(vec!["prog".into(), "--opt=1".into()])
        );
        assert_eq!(words("a''b"), Some(vec!["ab".into()]));
        assert_eq!(words("''"), Some(vec!["".into()]));
    }

    #[test]
    fn shell_syntax_is_detected() {
        for s in [
            "echo hi | cat",
            "a && b",
            "a; b",
            "a > f",
            "a < f",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo `date`",
            "ls *.rs",
            "ls file?",
            "ls [ab]",
            "cd ~",
            "X=1 prog",
            "a # comment",
            "(sub)",
            "echo 'unterminated",
            "a\nb",
        ] {
            assert_eq!(words(s), None, "{s}");
        }
    }

    #[test]
    fn builtins_go_to_the_shell() {
        assert_eq!(
            parse("cd /tmp", false).unwrap(),
            CommandLine::Shell("cd /tmp".into())
        );
        assert_eq!(
            parse("sleep 1", false).unwrap(),
            CommandLine::Direct(vec!["sleep".into(), "1".into()])
        );
        assert!(matches!(
            parse("   ", false),
            Err(MeasureError::EmptyCommand)
        ));
    }

    #[test]
    fn join_quoted_round_trips() {
        let argv: Vec<String> = ["sh", "-c", "echo 'x' >&2; exit 4", "", "a b"]
            .map(String::from)
            .to_vec();
        let joined = join_quoted(&argv);
        assert_eq!(joined, "sh -c 'echo '\\''x'\\'' >&2; exit 4' '' 'a b'");
        assert_eq!(split_words(&joined), Some(argv));
    }

    #[test]
    fn no_shell_splits_on_whitespace() {
        assert_eq!(
            parse("echo $HOME", true).unwrap(),
            CommandLine::Direct(vec!["echo".into(), "$HOME".into()])
        );
    }

    #[test]
    fn resolve_finds_sh_and_rejects_missing() {
        assert!(resolve_program("sh", None).is_ok());
        assert!(matches!(
            resolve_program("definitely-not-a-program-xyz", None),
            Err(MeasureError::ProgramNotFound { .. })
        ));
        assert!(matches!(
            resolve_program("/nonexistent/prog", None),
            Err(MeasureError::ProgramNotFound { .. })
        ));
    }
}
