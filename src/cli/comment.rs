//! `tardy comment`: post tardy's pull-request comment, or edit it in place.

use std::path::PathBuf;

use clap::Args;

use tardy::ci::comment::{self, Done, Target};

#[derive(Args)]
#[command(
    about = "Post a pull request's tardy comment, or edit the one already there (found by its hidden marker)",
    long_about = include_str!("../../docs/help/comment.about.txt"),
    after_help = include_str!("../../docs/help/comment.examples.txt")
)]
pub struct CommentArgs {
    /// The Markdown to post.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The pull request's number (default: from $GITHUB_EVENT_PATH).
    #[arg(long, value_name = "N")]
    pr: Option<u64>,
    /// owner/name (default: $GITHUB_REPOSITORY).
    #[arg(long, value_name = "OWNER/NAME", env = "GITHUB_REPOSITORY")]
    repo: Option<String>,
    /// The REST API's address (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long, value_name = "URL", env = "GITHUB_API_URL")]
    api: Option<String>,
    /// A token that may write comments.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "GITHUB_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// The hidden line that marks the comment (one per kind of report).
    #[arg(long, value_name = "TEXT", default_value = tardy::render::ci::MARKER)]
    marker: String,
}

/// `tardy comment`; its exit code.
pub fn run(args: CommentArgs) -> Result<i32, String> {
    let body = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    if body.len() > 65_000 {
        return Err(format!(
            "{}: {} bytes; GitHub takes comments of at most 65,536 characters",
            args.file.display(),
            body.len()
        ));
    }
    let pr = match args.pr {
        Some(n) => n,
        None => std::env::var_os("GITHUB_EVENT_PATH")
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|e| comment::pr_from_event(&e))
            .ok_or("no pull request: give --pr N (outside a pull_request job there is no event to read it from)")?,
    };
    let repo = args
        .repo
        .filter(|r| r.contains('/'))
        .ok_or("no repository: give --repo OWNER/NAME (or set $GITHUB_REPOSITORY)")?;
    let token = args.token.filter(|t| !t.is_empty()).ok_or(
        "no token: set $GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})",
    )?;
    let target = Target {
        api: args
            .api
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "https://api.github.com".into()),
        repo,
        pr,
        token,
        marker: args.marker,
    };
    let (done, id) = match comment::upsert(&target, &body)? {
        Done::Created(id) => ("created", id),
        Done::Updated(id) => ("updated", id),
    };
    eprintln!("tardy: {done} comment {id} on {}#{pr}", target.repo);
    Ok(0)
}
