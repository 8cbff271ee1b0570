//! Tests that run the real fio are compiled as ignored when fio is not installed, so a missing
//! fio shows in the test runner's own count ("N ignored"), never as a silent pass.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hyraid_no_fio)");
    println!("cargo::rerun-if-env-changed=PATH");
    // Rerun when fio appears or changes: the path it is at, or (missing) where apt puts it —
    // a path that does not exist makes cargo run this script again on every build.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let at = std::env::split_paths(&path)
        .map(|d| d.join("fio"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| "/usr/bin/fio".into());
    println!("cargo::rerun-if-changed={}", at.display());
    let found = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("cargo::rustc-cfg=hyraid_no_fio");
        println!("cargo::warning=fio is not installed: the bench tests that run it are ignored");
    }
}
