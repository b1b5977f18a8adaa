//! The `tardy` command line. All the work is in the library; see `cli`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
