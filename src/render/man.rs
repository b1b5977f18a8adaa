//! Man pages and shell completion scripts, written from the command line's
//! own description (clap's `Command`): tardy.1 and a page per subcommand and
//! sub-subcommand (tardy-history-list.1), and a script per shell.

use std::path::Path;

/// Write a page per command of `cmd` into `dir` (created if missing);
/// returns how many.
pub fn pages(cmd: &mut clap::Command, dir: &Path) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    cmd.build();
    let mut n = 0;
    write(cmd, "tardy", dir, &mut n)?;
    Ok(n)
}

fn write(cmd: &clap::Command, name: &str, dir: &Path, n: &mut usize) -> Result<(), String> {
    let page = cmd.clone().name(name.to_string());
    let path = dir.join(format!("{name}.1"));
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut buf)
        .map_err(|e| e.to_string())?;
    std::fs::write(&path, buf).map_err(|e| format!("{}: {e}", path.display()))?;
    *n += 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write(sub, &format!("{name}-{}", sub.get_name()), dir, n)?;
    }
    Ok(())
}

/// The completion script of `shell` for `cmd`.
pub fn completions(shell: clap_complete::Shell, cmd: &mut clap::Command) -> Vec<u8> {
    // Into a buffer: clap_complete panics on a closed pipe.
    let mut buf = Vec::new();
    clap_complete::generate(shell, cmd, "tardy", &mut buf);
    buf
}
