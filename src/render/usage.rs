//! What tardy says when its command line is wrong, beyond clap's own
//! message: the `tardy run` command for a program given where a subcommand
//! goes (hyperfine's habit: `tardy 'sleep 0.1'`), and the option meant when
//! one is misspelt with letters swapped (`--tpo` for `--top`).

/// `tardy 'sleep 0.1'` (hyperfine's habit: the command first): when the
/// word is no subcommand, the command `tardy run` would take. When clap has
/// a near subcommand to offer (`tardy sleep 0.1` is close to `serve`), the
/// tip is given only if the word is a program on PATH; words typed apart
/// after a program are one command, quoted (`tardy run` times each
/// argument as a command of its own, as hyperfine does).
pub fn run_tip(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let words: Vec<&String> = args
        .iter()
        .skip(1)
        .take_while(|a| !a.starts_with('-'))
        .collect();
    let program = words.first()?.split_whitespace().next()?;
    let is_program = program_on_path(program);
    if e.get(ContextKind::SuggestedSubcommand).is_some() && !is_program {
        return None;
    }
    let quote = |a: &str| {
        if a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/=:,+".contains(c))
        {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    let commands: Vec<String> =
        if is_program && words.len() > 1 && words.iter().all(|w| !w.contains(' ')) {
            let joined: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
            vec![quote(&joined.join(" "))]
        } else {
            words.iter().map(|w| quote(w)).collect()
        };
    Some(format!(
        "tip: to measure a command, give it to `tardy run`: tardy run {}",
        commands.join(" ")
    ))
}

/// Whether `word` names a program: a path to a file, or a file in a PATH directory.
pub fn program_on_path(word: &str) -> bool {
    if word.contains('/') {
        return std::path::Path::new(word).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(word).is_file()))
}

/// clap suggests an option only when it is spelled close by its own measure, which
/// misses swapped letters (`--tpo` for `--top`). When it has no suggestion, offer the
/// option of the subcommand given whose name is within two edits (a swap counting
/// one).
pub fn suggest(e: &mut clap::Error, cli: &clap::Command, args: &[String]) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument || e.get(ContextKind::SuggestedArg).is_some() {
        return;
    }
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return;
    };
    let Some(word) = bad
        .strip_prefix("--")
        .map(|w| w.split('=').next().unwrap_or(w))
    else {
        return;
    };
    // The subcommand path given before the bad option.
    let mut cmd = cli.clone();
    for a in args.iter().skip(1).take_while(|a| !a.starts_with('-')) {
        match cmd.find_subcommand(a) {
            Some(sub) => cmd = sub.clone(),
            None => break,
        }
    }
    let best = cmd
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| (strsim::osa_distance(word, long), long))
        .filter(|&(d, long)| d > 0 && d <= 2 && d < long.len().min(word.len()))
        .min();
    if let Some((_, long)) = best {
        e.insert(
            ContextKind::SuggestedArg,
            ContextValue::String(format!("--{long}")),
        );
    }
}
