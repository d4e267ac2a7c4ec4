//! Writes respbench's manual pages and shell completions, generated from its clap definitions
//! (`respbench::cli::manual::command`), into a directory: `man/respbench.1`, a page per
//! subcommand (`man/respbench-fill.1`, ...), and `completions/respbench.bash`, `_respbench`
//! (zsh) and `respbench.fish`. `make man completions` runs it; `make install` installs them.
//!
//! Usage: cargo run --example manual -- DIR

use std::path::Path;
use std::process::ExitCode;

use clap::Command;
use clap_complete::Shell;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("manual: error: expected one argument, the directory to write into, got {}", args.len());
        return ExitCode::from(2);
    };
    match write_all(Path::new(dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("manual: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write_all(dir: &Path) -> std::io::Result<()> {
    let mut cmd = respbench::cli::manual::command();
    cmd.build();
    let man = dir.join("man");
    std::fs::create_dir_all(&man)?;
    page(&cmd, &man.join("respbench.1"))?;
    for sub in cmd.get_subcommands() {
        let name = sub.get_display_name().unwrap_or(sub.get_name());
        page(sub, &man.join(format!("{name}.1")))?;
    }
    let completions = dir.join("completions");
    std::fs::create_dir_all(&completions)?;
    for (shell, name) in [(Shell::Bash, "respbench.bash"), (Shell::Zsh, "_respbench"), (Shell::Fish, "respbench.fish")]
    {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd.clone(), "respbench", &mut out);
        write(&completions.join(name), &out)?;
    }
    Ok(())
}

/// Writes a file whole under another name, then renames it: two runs at once (two `make man`)
/// never leave a file half written.
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}", std::process::id()));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
}

/// One manual page, section 1.
fn page(cmd: &Command, path: &Path) -> std::io::Result<()> {
    let mut out = Vec::new();
    let title = path.file_stem().and_then(|s| s.to_str()).unwrap_or("respbench").to_string();
    let version = format!("respbench {}", env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(cmd.clone()).title(title).section("1").source(version).render(&mut out)?;
    write(path, &out)
}
