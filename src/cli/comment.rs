//! `tardy comment`: post tardy's pull-request comment, or edit it in place.

use std::path::PathBuf;

use clap::Args;

use tardy::ci::comment::{self, Done, Target};

#[derive(Args)]
#[command(
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
    let body = comment::body(&args.file)?;
    let target = Target::from_job(args.pr, args.repo, args.token, args.api, args.marker)?;
    let pr = target.pr;
    let (done, id) = match comment::upsert(&target, &body)? {
        Done::Created(id) => ("created", id),
        Done::Updated(id) => ("updated", id),
    };
    eprintln!("tardy: {done} comment {id} on {}#{pr}", target.repo);
    Ok(0)
}
