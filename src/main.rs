fn main() -> std::process::ExitCode {
    hyraid::cli::run()
}
