//! Tests that run the real fio are compiled as ignored when fio is not installed, so a missing
//! fio shows in the test runner's own count ("N ignored"), never as a silent pass.
//!
//! A build with nothing changed must not run this script again (a rerun rebuilds the crate, and
//! the release profile's fat LTO relinks it for minutes): every `rerun-if-changed` names a path
//! that exists. With fio, its binary; without, the directories of PATH, whose modification time
//! changes when fio is installed into one of them.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hyraid_no_fio)");
    println!("cargo::rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_dir())
        .collect();
    let found = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match dirs.iter().map(|d| d.join("fio")).find(|p| p.is_file()) {
        Some(fio) if found => println!("cargo::rerun-if-changed={}", fio.display()),
        _ => {
            for d in &dirs {
                println!("cargo::rerun-if-changed={}", d.display());
            }
        }
    }
    if !found {
        println!("cargo::rustc-cfg=hyraid_no_fio");
        println!("cargo::warning=fio is not installed: the bench tests that run it are ignored");
    }
}
