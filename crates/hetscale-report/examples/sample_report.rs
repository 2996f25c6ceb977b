//! Writes a report with every view to the directory given (default `target/sample-report`),
//! and the Perfetto trace of its GE run beside it as `trace.json`.
//!
//! `cargo run -p hetscale-report --example sample_report -- /tmp/report`

#[path = "../tests/common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/sample-report".into());
    let written = common::sample_report().write(&dir)?;
    let (trace, options) = common::ge_run();
    hetscale_report::write_chrome_trace(
        &trace,
        &options,
        std::path::Path::new(&dir).join("trace.json"),
    )?;
    println!("{}", written.index.display());
    Ok(())
}
