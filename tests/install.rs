//! The ways respbench reaches a machine, each done as a user does it: `make install` into a
//! prefix and `make uninstall` out of it (the manual pages render, bash completes the flags),
//! the crate (`cargo package`), `make deb` installed and removed with
//! dpkg, and `make image` run with podman against a redis-server on the loopback. They share one
//! release build (`make release`, which `make test` runs first).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{Server, stderr, stdout};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A command as a user runs it from a shell: without the CARGO_* variables cargo sets for a test
/// (build scripts that watch them, ring's among them, would otherwise make cargo rebuild the
/// release build `make test` made).
fn as_user(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("CARGO_") && n != "CARGO_HOME") {
            cmd.env_remove(name);
        }
    }
    cmd.current_dir(ROOT);
    cmd
}

fn make(args: &[&str]) -> Output {
    let out = as_user("make").arg("-s").args(args).output().expect("make runs");
    assert!(out.status.success(), "make {args:?} failed:\n{}{}", stdout(&out), stderr(&out));
    out
}

fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}{}", stdout(&out), stderr(&out));
    out
}

fn installed(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

/// Everything under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The manual page names: respbench(1) and respbench-NAME(1) for each subcommand.
fn pages() -> Vec<String> {
    let cmd = respbench::cli::manual::command();
    let subcommands = cmd.get_subcommands().map(|sub| format!("respbench-{}", sub.get_name()));
    std::iter::once("respbench".to_string()).chain(subcommands).collect()
}

/// A page as `man` renders it, 100 columns wide, its words joined by single spaces.
fn man(args: &[&str]) -> String {
    assert!(installed("man"), "man is not installed: scripts/install-deps.sh installs man-db");
    let out = ok(Command::new("man").args(args).env("MANWIDTH", "100").env_remove("MAN_KEEP_FORMATTING"));
    assert!(stderr(&out).trim().is_empty(), "man {args:?} warned: {}", stderr(&out));
    // Words as they read, whatever the justification spaced them by.
    stdout(&out).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What bash's completion offers for `words` (the last one being completed), with the script
/// loaded as bash-completion loads it.
fn bash_completes(script: &Path, words: &[&str]) -> (String, Vec<String>) {
    let line = words.join(" ");
    let program = format!(
        "source '{}' && complete -p respbench && COMP_WORDS=({line}) && COMP_CWORD={} && COMP_LINE='{line}' && \
         COMP_POINT=${{#COMP_LINE}} && _respbench respbench '{}' '{}' && printf 'offer %s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = ok(Command::new("bash").args(["--norc", "-c", &program]));
    let text = stdout(&out);
    let offers = text.lines().filter_map(|l| l.strip_prefix("offer ")).map(str::to_string).collect();
    (text, offers)
}

#[test]
fn make_install_puts_pages_and_completions_in_place_and_uninstall_takes_them_away() {
    let prefix = tempfile::tempdir().unwrap();
    let p = prefix.path();
    let at = p.display().to_string();
    make(&["install", &format!("PREFIX={at}"), "FRONT_ENDS=1"]);

    let version = ok(Command::new(p.join("bin/respbench")).arg("--version"));
    assert!(stdout(&version).starts_with("respbench "), "{}", stdout(&version));
    for link in ["memtier_benchmark", "redis-benchmark", "valkey-benchmark"] {
        assert_eq!(std::fs::read_link(p.join("bin").join(link)).unwrap(), Path::new("respbench"), "{link}");
    }
    let page = man(&["-l", &format!("{at}/share/man/man1/respbench.1")]);
    assert!(page.contains("respbench - A load generator") && page.contains("--key-pattern"), "{page}");
    for name in pages() {
        let page = man(&["-l", &format!("{at}/share/man/man1/{name}.1")]);
        assert!(page.contains(&format!("{name} - ")), "{name}(1):\n{page}");
    }
    // Every subcommand of the manual is one the program runs.
    for sub in respbench::cli::manual::command().get_subcommands() {
        ok(Command::new(p.join("bin/respbench")).args([sub.get_name(), "--help"]));
    }

    let bash = p.join("share/bash-completion/completions/respbench");
    let (text, offers) = bash_completes(&bash, &["respbench", "--key-p"]);
    assert!(text.contains("-F _respbench respbench"), "the script registers no completion: {text}");
    assert!(offers.iter().any(|o| o == "--key-pattern") && offers.iter().all(|o| o.starts_with("--key-p")), "{text}");
    let (text, offers) = bash_completes(&bash, &["respbench", "fill", "--memory-t"]);
    assert_eq!(offers, ["--memory-target"], "{text}");
    let (text, offers) = bash_completes(&bash, &["respbench", "cap"]);
    assert_eq!(offers, ["capacity"], "{text}");
    assert!(p.join("share/zsh/site-functions/_respbench").is_file());
    assert!(p.join("share/fish/vendor_completions.d/respbench.fish").is_file());
    for doc in ["README.md", "ARCHITECTURE.md", "examples/scenarios", "deploy/kubernetes/respbench-shards.yaml"] {
        assert!(p.join("share/doc/respbench").join(doc).exists(), "{doc} is not installed");
    }

    make(&["uninstall", &format!("PREFIX={at}")]);
    assert_eq!(tree(p), Vec::<String>::new(), "make uninstall left these under the prefix");
}

#[test]
fn make_uninstall_leaves_what_was_there_before() {
    let prefix = tempfile::tempdir().unwrap();
    let p = prefix.path();
    std::fs::create_dir_all(p.join("share/man/man1")).unwrap();
    std::fs::create_dir_all(p.join("bin")).unwrap();
    std::fs::write(p.join("bin/redis-benchmark"), "not ours").unwrap();
    let before = tree(p);
    let at = format!("PREFIX={}", p.display());
    // A name that is not respbench's link is never replaced.
    let out = as_user("make").args(["-s", "install", &at, "FRONT_ENDS=1"]).output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("is not a link to respbench"), "{}", stderr(&out));
    std::fs::remove_file(p.join("bin/redis-benchmark")).unwrap();
    std::fs::write(p.join("bin/other"), "not ours").unwrap();
    let before_install = tree(p);
    make(&["install", &at]);
    make(&["install", &at]);
    assert!(!p.join("bin/memtier_benchmark").exists(), "the front-end links are made only with FRONT_ENDS=1");
    make(&["uninstall", &at]);
    assert_eq!(tree(p), before_install);
    assert_ne!(before, before_install);
}

#[test]
fn the_crate_packages_with_its_metadata_and_no_file_over_1_mb() {
    let meta = ok(as_user(env!("CARGO")).args(["metadata", "--no-deps", "--format-version", "1"]));
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    let package = &meta["packages"][0];
    for field in ["license", "repository", "description", "readme"] {
        assert!(package[field].as_str().is_some_and(|v| !v.is_empty()), "Cargo.toml lacks {field}");
    }
    for field in ["keywords", "categories"] {
        assert!(package[field].as_array().is_some_and(|v| !v.is_empty()), "Cargo.toml lacks {field}");
    }
    let listed = ok(as_user(env!("CARGO")).args(["package", "--list", "--allow-dirty"]));
    let files: Vec<String> = stdout(&listed).lines().map(str::to_string).collect();
    for wanted in ["LICENSE-MIT", "LICENSE-APACHE", "README.md", "src/main.rs", "docs/ab-schema.json"] {
        assert!(files.iter().any(|f| f == wanted), "the crate lacks {wanted}");
    }
    for file in &files {
        let Ok(meta) = std::fs::metadata(Path::new(ROOT).join(file)) else { continue };
        assert!(meta.len() <= 1 << 20, "the crate ships {file}, {} bytes: over 1 MB", meta.len());
    }
    let packaged =
        ok(as_user(env!("CARGO")).args(["package", "--no-verify", "--allow-dirty", "--locked", "--offline"]));
    let krate = Path::new(ROOT).join(format!("target/package/respbench-{}.crate", env!("CARGO_PKG_VERSION")));
    assert!(krate.is_file(), "{}", stderr(&packaged));
}

/// Why dpkg cannot be used here, if it cannot.
fn dpkg_unusable() -> Option<String> {
    if !installed("dpkg") || !installed("dpkg-deb") || !installed("dpkg-shlibdeps") {
        return Some("dpkg, dpkg-deb or dpkg-shlibdeps is not installed (Debian's dpkg and dpkg-dev)".into());
    }
    let uid = ok(Command::new("id").arg("-u"));
    if stdout(&uid).trim() != "0" {
        return Some("dpkg -i needs root".into());
    }
    for package in ["respbench", "respbench-frontends"] {
        if is_installed(package) {
            return Some(format!("{package} is installed on this machine already: the test does not replace it"));
        }
    }
    None
}

/// Whether dpkg has `package` installed.
fn is_installed(package: &str) -> bool {
    let status = Command::new("dpkg-query").args(["-W", "-f", "${Status}", package]).output().unwrap();
    stdout(&status).contains("installed") && !stdout(&status).contains("not-installed")
}

/// dpkg, waiting while apt or another dpkg holds its lock (a package install elsewhere).
fn dpkg(args: &[&str]) -> Output {
    let start = std::time::Instant::now();
    loop {
        let out = Command::new("dpkg").args(args).output().unwrap();
        if out.status.success() || !stderr(&out).contains("lock") || start.elapsed().as_secs() > 300 {
            assert!(out.status.success(), "dpkg {args:?}: {}{}", stdout(&out), stderr(&out));
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

#[test]
fn make_deb_installs_and_removes_cleanly_with_dpkg() {
    if let Some(why) = dpkg_unusable() {
        eprintln!("skipped: {why}");
        return;
    }
    make(&["deb"]);
    let version = env!("CARGO_PKG_VERSION");
    let debs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("target/deb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    assert_eq!(debs.len(), 2, "{debs:?}");
    let main =
        debs.iter().find(|d| d.file_name().unwrap().to_string_lossy().starts_with(&format!("respbench_{version}_")));
    let main = main.expect("respbench_VERSION_ARCH.deb");
    let fronts = debs.iter().find(|d| *d != main).unwrap();
    let field = |deb: &Path, name: &str| {
        stdout(&ok(Command::new("dpkg-deb").args(["-f"]).arg(deb).arg(name))).trim().to_string()
    };
    assert!(field(main, "Depends").contains("libc6 (>="), "{}", field(main, "Depends"));
    assert_eq!(field(fronts, "Depends"), format!("respbench (= {version})"));
    assert_eq!(field(fronts, "Conflicts"), "valkey-tools");
    let contents = stdout(&ok(Command::new("dpkg-deb").arg("-c").arg(fronts)));
    assert!(contents.contains("./usr/bin/memtier_benchmark -> respbench"), "{contents}");
    assert!(!contents.contains("redis-benchmark"), "redis-tools ships redis-benchmark:\n{contents}");
    let files: Vec<String> = stdout(&ok(Command::new("dpkg-deb").arg("-c").arg(main)))
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5).map(|f| f.trim_start_matches('.').to_string()))
        .filter(|f| !f.ends_with('/'))
        .collect();
    assert!(files.iter().any(|f| f == "/usr/share/man/man1/respbench.1"), "{files:?}");

    // Where valkey-tools is installed (make deps installs it for the tests against
    // valkey-server), dpkg refuses the front-ends for the conflict they declare: respbench
    // installs alone.
    let with_fronts = !is_installed("valkey-tools");
    if !with_fronts {
        let refused = Command::new("dpkg").arg("-i").arg(fronts).output().unwrap();
        assert!(!refused.status.success(), "dpkg installed the front-ends beside valkey-tools");
        assert!(stderr(&refused).contains("conflicts with valkey-tools"), "{}", stderr(&refused));
        assert!(!is_installed("respbench-frontends"));
    }
    let mut install = vec!["-i".to_string(), main.display().to_string()];
    install.extend(with_fronts.then(|| fronts.display().to_string()));
    dpkg(&install.iter().map(String::as_str).collect::<Vec<_>>());
    let ran = Command::new("/usr/bin/respbench").arg("--version").output().unwrap();
    let memtier = with_fronts.then(|| Command::new("/usr/bin/memtier_benchmark").arg("--help").output().unwrap());
    let page = Command::new("man").arg("respbench").env("MANWIDTH", "100").output().unwrap();
    dpkg(&if with_fronts { vec!["-r", "respbench-frontends", "respbench"] } else { vec!["-r", "respbench"] });
    assert_eq!(stdout(&ran).trim(), format!("respbench {version}"), "{}", stderr(&ran));
    if let Some(memtier) = memtier {
        let out = stdout(&memtier);
        assert!(memtier.status.success() && out.contains("Usage: memtier_benchmark"), "{out}");
    }
    assert!(stdout(&page).contains("respbench - A load generator"), "{}{}", stdout(&page), stderr(&page));
    for file in &files {
        assert!(!Path::new(file).exists(), "dpkg -r left {file}");
    }
    assert!(!Path::new("/usr/bin/memtier_benchmark").exists());
}

/// podman run's options for this machine: a lower open-files and process limit (the runtime may
/// not raise them to its defaults where the machine caps them), and runc where it is installed
/// (crun refuses a host whose cgroups are half version 1, half version 2).
fn podman_run() -> Command {
    let mut cmd = Command::new("podman");
    if installed("runc") {
        cmd.args(["--runtime", "runc"]);
    }
    cmd.args(["run", "--rm", "--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]);
    cmd
}

#[test]
fn make_image_builds_a_small_image_that_runs_against_a_server_on_the_loopback() {
    if !installed("podman") {
        eprintln!("skipped: podman is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let tag = stdout(&make(&["image-tag"])).trim().to_string();
    let built = make(&["image"]);
    assert_eq!(stdout(&built).trim(), tag);
    let inspect = |format: &str| {
        stdout(&ok(Command::new("podman").args(["image", "inspect", "--format", format, &tag]))).trim().to_string()
    };
    let size: u64 = inspect("{{.Size}}").parse().unwrap();
    assert!(size < 40_000_000, "the image is {size} bytes: over 40 MB");
    assert_eq!(inspect("{{.Config.User}}"), "10001:10001");
    assert_eq!(inspect("{{json .Config.Entrypoint}}"), r#"["/usr/bin/respbench"]"#);

    let version = ok(podman_run().arg(&tag).arg("--version"));
    assert_eq!(stdout(&version).trim(), format!("respbench {}", env!("CARGO_PKG_VERSION")));
    let memtier = ok(podman_run().args(["--entrypoint", "memtier_benchmark", &tag, "--version"]));
    assert!(stdout(&memtier).contains("memtier_benchmark"), "{}", stdout(&memtier));
    let home = ok(podman_run().args(["--entrypoint", "sh", &tag, "-c", "echo $HOME; echo ok > written && pwd"]));
    assert_eq!(stdout(&home), "/home/respbench\n/home/respbench\n", "{}", stderr(&home));

    let server = Server::start(&[]);
    let port = server.port_arg();
    let run = ok(podman_run().arg(&tag).args(["-h", "127.0.0.1", "-p", &port, "--duration", "1s", "-c", "4", "-q"]));
    assert!(stdout(&run).contains("requests per second"), "{}{}", stdout(&run), stderr(&run));
    assert!(server.calls("get") + server.calls("set") > 0, "the server saw no request from the container");
}

#[test]
fn the_kubernetes_manifest_the_slurm_example_and_readme_name_the_image_make_builds() {
    let tag = stdout(&make(&["image-tag"])).trim().to_string();
    assert_eq!(tag, format!("localhost/respbench:{}", env!("CARGO_PKG_VERSION")));
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("deploy/kubernetes/respbench-shards.yaml")).unwrap();
    let images: Vec<&str> = manifest.lines().filter_map(|l| l.trim().strip_prefix("image:")).map(str::trim).collect();
    assert_eq!(images, [tag.as_str()]);
    for file in ["deploy/slurm/respbench.sbatch", "README.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        assert!(text.contains(&tag), "{file} does not name {tag}");
    }
}
