//! The respbench binary: everything lives in the library; see `respbench::cli::main`.

fn main() -> std::process::ExitCode {
    respbench::cli::main(std::env::args_os())
}
