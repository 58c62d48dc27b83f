// SPDX-License-Identifier: MIT
//! Puts the versions a benchmark prints beside its figures into the
//! binary: the peers' crate versions as Cargo.lock resolved them, and the
//! compiler's version.

use std::process::Command;

/// The version Cargo.lock gives `name`, or "unknown".
fn locked(lock: &str, name: &str) -> String {
    let key = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == key {
            if let Some(v) = lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = "))
            {
                return v.trim_matches('"').to_string();
            }
        }
    }
    "unknown".to_string()
}

fn main() {
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    for (name, var) in [
        ("string_cache", "SC_VERSION"),
        ("ustr", "USTR_VERSION"),
        ("lasso", "LASSO_VERSION"),
    ] {
        println!("cargo:rustc-env={var}={}", locked(&lock, name));
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let v = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc unknown".to_string());
    println!("cargo:rustc-env=RUSTC_VERSION_STRING={v}");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}
