//! The Perfetto export is valid Chrome trace event JSON: it parses, names one track per node,
//! pairs every flow start with one finish inside communication slices, and keeps each track's
//! timestamps in order.

mod common;

use std::collections::HashMap;

use hbsp::{Backend, HbspError, Trace};
use hetscale_report::{TraceOptions, chrome_trace, write_chrome_trace};
use serde_json::Value;

/// The export, written to a file and read back as a viewer would.
fn exported(trace: &Trace, options: &TraceOptions) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    write_chrome_trace(trace, options, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let json: Value = serde_json::from_str(&text).expect("the export is JSON");
    json["traceEvents"]
        .as_array()
        .expect("traceEvents is an array")
        .clone()
}

fn phase(e: &Value) -> &str {
    e["ph"].as_str().expect("every event has a phase")
}

fn tid(e: &Value) -> u64 {
    e["tid"].as_u64().expect("a tid")
}

/// The checks every export must pass.
fn check_export(trace: &Trace, options: &TraceOptions) -> Vec<Value> {
    let events = exported(trace, options);
    let p = trace.nodes.len() as u64;
    // One thread_name per node track (tids 1..=p), naming the node.
    let names: Vec<&Value> = events
        .iter()
        .filter(|e| phase(e) == "M" && e["name"] == "thread_name" && tid(e) <= p)
        .collect();
    assert_eq!(names.len(), trace.nodes.len());
    for node in &trace.nodes {
        let name = names
            .iter()
            .find(|e| tid(e) == node.pid as u64 + 1)
            .expect("a track per node");
        assert!(
            name["args"]["name"]
                .as_str()
                .unwrap()
                .starts_with(&node.name)
        );
    }
    // Timestamps in microseconds, finite, monotone on every track.
    let mut last: HashMap<(u64, u64), f64> = HashMap::new();
    for e in events.iter().filter(|e| phase(e) != "M") {
        let ts = e["ts"].as_f64().expect("a numeric ts");
        assert!(ts.is_finite() && ts >= 0.0);
        let key = (e["pid"].as_u64().unwrap(), tid(e));
        let previous = last.insert(key, ts).unwrap_or(0.0);
        assert!(
            ts >= previous,
            "ts goes back on track {key:?}: {previous} then {ts}"
        );
        if phase(e) == "X" {
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
        }
    }
    // Flows: one start and one finish per id, finish not before start, both inside a
    // communication slice of their node's track.
    let mut flows: HashMap<u64, (Vec<&Value>, Vec<&Value>)> = HashMap::new();
    for e in &events {
        match phase(e) {
            "s" => flows
                .entry(e["id"].as_u64().unwrap())
                .or_default()
                .0
                .push(e),
            "f" => flows
                .entry(e["id"].as_u64().unwrap())
                .or_default()
                .1
                .push(e),
            _ => {}
        }
    }
    let communication: Vec<&Value> = events
        .iter()
        .filter(|e| phase(e) == "X" && e["name"] == "communication")
        .collect();
    let inside = |flow: &Value| {
        let ts = flow["ts"].as_f64().unwrap();
        communication.iter().any(|s| {
            let start = s["ts"].as_f64().unwrap();
            tid(s) == tid(flow) && start <= ts && ts <= start + s["dur"].as_f64().unwrap()
        })
    };
    for (id, (starts, finishes)) in &flows {
        assert_eq!((starts.len(), finishes.len()), (1, 1), "flow {id}");
        assert!(finishes[0]["ts"].as_f64() >= starts[0]["ts"].as_f64());
        assert_eq!(finishes[0]["bp"], "e");
        assert!(
            inside(starts[0]) && inside(finishes[0]),
            "flow {id} binds to no slice"
        );
    }
    events
}

#[test]
fn ge_on_sim_exports_tracks_slices_flows_and_counters() {
    let (trace, options) = common::ge_run();
    let events = check_export(&trace, &options);
    let count = |ph: &str| events.iter().filter(|e| phase(e) == ph).count();
    assert!(count("X") > trace.supersteps());
    assert!(count("s") > 0, "GE's broadcasts make flows");
    assert!(count("C") >= trace.nodes.len());
    let messages: usize = trace
        .nodes
        .iter()
        .map(|n| {
            n.supersteps
                .iter()
                .map(|s| s.flows.iter().filter(|f| f.to != n.pid).count())
                .sum::<usize>()
        })
        .sum();
    assert_eq!(
        count("s"),
        messages,
        "one arrow per sender, receiver and superstep"
    );
    let phases = events
        .iter()
        .filter(|e| phase(e) == "X" && e["cat"] == "phase")
        .count();
    assert!(phases > 0, "GE names its phases");
}

#[test]
fn a_threads_run_in_wall_time_exports_too() {
    let machine = common::machine(3);
    let output = hbsp::run(&Backend::threads(), &machine, |ctx| {
        for step in 0..5u64 {
            ctx.compute(1e4, || std::hint::black_box(step))?;
            let to = (ctx.pid() + 1) % ctx.nprocs();
            ctx.send(to, 0, &[step; 16])?;
            ctx.sync()?;
        }
        Ok::<_, HbspError>(())
    })
    .unwrap();
    let options = TraceOptions::for_machine(&machine, false);
    let events = check_export(&output.trace, &options);
    assert_eq!(events.iter().filter(|e| phase(e) == "s").count(), 15);
}

#[test]
fn an_empty_trace_is_refused_with_a_reason() {
    let err = chrome_trace(&Trace::default(), &TraceOptions::default()).unwrap_err();
    assert!(err.to_string().contains("run with tracing on"), "{err}");
}
