//! The `tardy` command line. All the work is in the library; see `cli`.

mod cli;

/// Before Rust's runtime runs (it ignores SIGPIPE before `main`): the
/// process state the user started tardy with, given back to every command
/// tardy starts (measure::inherit).
#[used]
#[unsafe(link_section = ".init_array")]
static CAPTURE_USER_STATE: extern "C" fn() = {
    extern "C" fn capture() {
        tardy::measure::inherit::capture();
    }
    capture
};

fn main() {
    // `tardy doctor`'s spawn probes run this binary as a no-op (see probe::process).
    if std::env::var_os(tardy::probe::process::NOOP_ENV).is_some() {
        return;
    }
    // Started between tardy and a command it times, before any work of its
    // own (so the command's max RSS is its own; measure::trampoline).
    if let Some(code) = tardy::measure::trampoline::run_if_asked() {
        std::process::exit(code);
    }
    // Started as the server that forks the measured commands (once per
    // session, measure::spawner): serve, then exit.
    tardy::measure::spawner::run_if_asked();
    std::process::exit(cli::main());
}

/// The examples `--help` shows (docs/help/*.txt, included by the CLI) are
/// command lines tardy takes: each `tardy ...` line parses (nothing runs).
#[cfg(test)]
mod help_examples {
    use clap::Parser;

    /// What the shell expands before tardy sees it, as a stand-in: `~/`,
    /// `$NAME` and glob stars (`tardy push $URL results/*.xml`).
    fn shell_expanded(cmd: &str) -> String {
        let mut out = String::new();
        let mut chars = cmd.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '$' if chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_') =>
                {
                    while chars
                        .peek()
                        .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_')
                    {
                        chars.next();
                    }
                    out.push('x');
                }
                '*' => out.push('x'),
                '~' if out.is_empty() || out.ends_with(' ') => out.push_str("/home/u"),
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn every_example_in_the_help_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/help");
        let mut checked = 0;
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            // A command continued on the next line (` \`) is one example.
            let text = std::fs::read_to_string(e.path())
                .unwrap()
                .replace("\\\n", " ");
            // Examples are indented lines; several may share one, apart.
            let examples = text
                .lines()
                .filter_map(|l| {
                    Some(l).zip(l.strip_prefix("  ")?.trim_start().strip_prefix("tardy "))
                })
                .flat_map(|(l, rest)| rest.split("  tardy ").map(move |x| (l, x.trim())));
            for (line, example) in examples {
                // A note after the command: "   (two runs at once...)" or "   # ...".
                let cmd = [example.find("  ("), example.find("  #")]
                    .into_iter()
                    .flatten()
                    .min()
                    .map_or(example, |i| &example[..i]);
                // Shell redirections and pipes are the shell's, not tardy's.
                let cmd = cmd.split(['>', '|']).next().unwrap_or(cmd).trim();
                let cmd = cmd.split(" && ").next().unwrap_or(cmd);
                let cmd = shell_expanded(cmd);
                let mut argv = vec!["tardy".to_string()];
                let Some(words) = tardy::measure::command::split_words(&cmd) else {
                    panic!("{}: `{line}` is not shell words", e.path().display());
                };
                argv.extend(words);
                if argv.get(1).is_some_and(|a| a == "ministat")
                    || argv.get(2).is_some_and(|a| a == "--ministat")
                {
                    continue; // ministat's own getopt parser (tests/ministat.rs)
                }
                if let Err(err) = crate::cli::Cli::try_parse_from(crate::cli::benchstat_flags(argv))
                {
                    panic!("{}: `{line}` does not parse:\n{err}", e.path().display());
                }
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} examples found");
    }
}
