//! Builds tardy's small spawner (helper/spawner.rs: a static program
//! without libc or std, a few KiB) with the same rustc, for the same
//! target, and tells the crate where its bytes are (`cfg(tardy_helper)`).
//! Where it cannot be built (another architecture, a linker that refuses),
//! tardy runs its commands through its own binary as a server instead,
//! which is slower per run but measures the same.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=helper/spawner.rs");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(tardy_helper)");
    let target = std::env::var("TARGET").unwrap_or_default();
    let supported = (target.starts_with("x86_64-") || target.starts_with("aarch64-"))
        && target.contains("-linux");
    if !supported || std::env::var_os("TARDY_NO_HELPER_BUILD").is_some() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("tardy-spawner");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition",
        "2024",
        "--crate-type",
        "bin",
        "--crate-name",
        "tardy_spawner",
    ])
    .args(["--target", &target])
    .args([
        "-C",
        "panic=abort",
        "-C",
        "opt-level=s",
        "-C",
        "debuginfo=0",
    ])
    .args(["-C", "strip=symbols", "-C", "relocation-model=static"])
    .args(["-C", "target-feature=+crt-static"])
    .args(["-C", "link-arg=-nostartfiles", "-C", "link-arg=-nostdlib"])
    .args([
        "-C",
        "link-arg=-static",
        "-C",
        "link-arg=-Wl,--build-id=none",
    ])
    .arg("helper/spawner.rs")
    .arg("-o")
    .arg(&out);
    // A linker configured for the target (cross builds) is the one to use.
    let key = format!(
        "CARGO_TARGET_{}_LINKER",
        target.to_uppercase().replace(['-', '.'], "_")
    );
    if let Some(linker) = std::env::var_os(key) {
        cmd.arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    match cmd.output() {
        Ok(o) if o.status.success() && out.is_file() => {
            println!("cargo::rustc-cfg=tardy_helper");
            println!("cargo::rustc-env=TARDY_HELPER_PATH={}", out.display());
        }
        Ok(o) => println!(
            "cargo::warning=the small spawner was not built (commands run through tardy's own binary): {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ),
        Err(e) => println!("cargo::warning=the small spawner was not built: {e}"),
    }
}
