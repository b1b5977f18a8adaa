//! `tardy serve` (the team server) and `tardy token add` (a new upload or
//! read token, whose hash goes into the token file).

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use tardy::history::detect::Method;
use tardy::jobs::serve::Settings;
use tardy::render::web::listening_line;
use tardy::server::auth::Scope;
use tardy::server::serve;

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/serve.about.txt"),
    after_help = include_str!("../../docs/help/serve.examples.txt")
)]
pub struct ServeArgs {
    /// The database: sqlite:PATH (or a path), or postgres://USER:PASSWORD@HOST/DB
    /// [default: the repository's .tardy/tardy.db].
    #[arg(long, value_name = "DB", env = "TARDY_DB")]
    db: Option<String>,
    /// Project name inside the database.
    #[arg(long, value_name = "NAME", default_value = "default")]
    project: String,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    listen: String,
    /// File of accepted token hashes (see `tardy token add`); without it
    /// the server takes no uploads.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Reads (pages and API) need a token too.
    #[arg(long, requires = "token_file")]
    read_token: bool,
    /// Largest request body, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    max_body_mib: usize,
    /// Largest size a compressed (gzip) body may inflate to, in MiB
    /// [default: 4 times --max-body-mib]. A bomb is refused (413) as soon
    /// as it passes this, and nothing is stored.
    #[arg(long, value_name = "MIB")]
    max_inflated_mib: Option<usize>,
    /// Most test results one upload may hold (reruns of a test count each
    /// time); past it the upload is refused (413) while being read.
    #[arg(long, value_name = "N", default_value_t = 500_000)]
    max_results: u64,
    /// Most distinct tests one upload may name; each becomes a row kept for
    /// good.
    #[arg(long, value_name = "N", default_value_t = 250_000)]
    max_tests: u64,
    /// Most series one upload may hold (columns of a CSV, benchmarks of a
    /// results file); each is stored and checked on its own.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_series: u64,
    /// Seconds a client has to send its request headers (slow clients are cut off).
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    header_timeout: f64,
    /// Seconds a client has to send its request body.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    body_timeout: f64,
    /// Seconds one upload may take to be read and stored once its body is in (a
    /// 32 MiB report takes well under a second); past it the upload is refused (422)
    /// and nothing is stored, so no body can hold a thread for long.
    #[arg(long, value_name = "S", default_value_t = 20.0)]
    read_budget: f64,
    /// Connections served at once. When fewer than an eighth are free, a new
    /// connection closes the oldest one that has not sent a complete request yet (a
    /// slow client trickling its headers), so new clients always get in.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_connections: usize,
    /// Connections one client may hold at once, and request bodies it may be
    /// sending at once (beyond them: its oldest connection without a request
    /// is closed, and a body is refused with 429). A client is its address's
    /// /24 (IPv4) or /64 (IPv6).
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_per_client: usize,
    /// A reverse proxy in front of the server (repeat for several): its
    /// connections are not limited per client, and a request through it is
    /// counted as its client's, the last address of X-Forwarded-For.
    #[arg(long, value_name = "ADDR")]
    trusted_proxy: Vec<std::net::IpAddr>,
    /// Do not run change-point detection after each upload.
    #[arg(long)]
    no_detect: bool,
    /// Memory for each suite's newest points, held between uploads so that
    /// an upload's check reads only its own point: about 1.5 MiB per 1,000
    /// tests. Beyond it, the least recently uploaded suites are read whole
    /// again when their next upload comes.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    detect_memory: usize,
    /// Detection after uploads: ignore changes of at most this amount
    /// (2, 2% or 0.02; Otava's -M).
    #[arg(long, value_name = "AMOUNT", default_value = "0")]
    min_magnitude: String,
    /// Detection after uploads: false alerts per 1,000 points of pure noise,
    /// checked after every upload (the calibrated default; docs/changepoints.md).
    #[arg(long, value_name = "RATE")]
    false_alarm_rate: Option<f64>,
    /// Detection after uploads: Apache Otava 0.8's E-Divisive exactly.
    #[arg(long)]
    otava: bool,
    /// With --otava: significance level of a change point (Otava's -P, default 0.001).
    #[arg(long = "p-value", value_name = "P")]
    p_value: Option<f64>,
}

#[derive(Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Make a token, print it once, and append its SHA-256 hash to the token file.
    #[command(
        after_help = include_str!("../../docs/help/token-add.examples.txt")
    )]
    Add {
        /// The token file of `tardy serve --token-file` (created 0600 if missing).
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
        /// What the token may do.
        #[arg(long, value_parser = ["write", "read"], default_value = "write")]
        scope: String,
        /// A note kept next to the hash (who has it).
        #[arg(long, default_value = "")]
        label: String,
    },
}

/// `tardy serve`, until Ctrl-C or SIGTERM; its exit code.
pub fn run(a: ServeArgs) -> Result<i32, String> {
    let min_magnitude = super::percent("min-magnitude", &a.min_magnitude, false)?;
    let method = Method::from_flags(a.otava, None, a.p_value, a.false_alarm_rate, min_magnitude)?;
    let opts = tardy::jobs::serve::options(&Settings {
        db: a.db,
        project: a.project,
        listen: a.listen,
        token_file: a.token_file,
        read_token: a.read_token,
        max_body_mib: a.max_body_mib,
        max_inflated_mib: a.max_inflated_mib,
        max_results: a.max_results,
        max_tests: a.max_tests,
        max_series: a.max_series,
        header_timeout: a.header_timeout,
        body_timeout: a.body_timeout,
        read_budget: a.read_budget,
        max_connections: a.max_connections,
        max_per_client: a.max_per_client,
        trusted_proxies: a.trusted_proxy,
        no_detect: a.no_detect,
        detect_memory_mib: a.detect_memory,
        method,
    })?;
    let said = listening_line(
        &opts.backend.describe(),
        opts.tokens.len(),
        opts.read_protected,
    );
    serve(opts, |addr| {
        // The first line of stdout is the address (scripts read it).
        println!("tardy serve: listening on http://{addr}");
        let _ = std::io::stdout().flush();
        eprintln!("{said}");
    })
    .map_err(|e| e.to_string())?;
    eprintln!("tardy serve: stopped");
    Ok(0)
}

/// `tardy token`; its exit code.
pub fn token(args: TokenArgs) -> Result<i32, String> {
    let TokenCommand::Add {
        token_file,
        scope,
        label,
    } = args.command;
    add_token(&token_file, &scope, &label).map(|()| 0)
}

fn add_token(file: &std::path::Path, scope: &str, label: &str) -> Result<(), String> {
    let scope = Scope::parse(scope).unwrap_or(Scope::Write);
    println!("{}", tardy::server::auth::add_token(file, scope, label)?);
    eprintln!(
        "tardy: added a {} token to {} (only its hash is stored; keep the token above, it is not shown again)",
        scope.as_str(),
        file.display()
    );
    Ok(())
}
