//! Export of a trace as Chrome trace event JSON, which ui.perfetto.dev and chrome://tracing
//! open: one track per node named after it, compute / communication / wait slices (`X`),
//! message flow arrows between nodes (`s` / `f`), a speed counter per node (`C`), and the
//! user-named phases on a track of their own under each node. Timestamps are microseconds
//! since the run began, virtual on the `sim` backend.

use std::collections::HashMap;
use std::path::Path;

use hbsp::trace::Trace;
use serde_json::{Value, json};

use crate::error::{ReportError, Result};
use crate::timeline::{Activity, Timeline, TraceOptions, achieved_speed, achieved_speed_unit};

/// Every event of the run belongs to this process.
const PID: u64 = 1;
/// Category of the node tracks' slices and flows (flows bind to slices of their category).
const CATEGORY: &str = "hbsp";

/// Microseconds, the trace format's unit.
fn us(seconds: f64) -> f64 {
    seconds * 1e6
}

/// Track of node `pid`; 0 is avoided because some viewers treat tid 0 as the idle thread.
fn node_tid(pid: usize) -> u64 {
    pid as u64 + 1
}

/// Track of node `pid`'s phases, after every node track.
fn phase_tid(pid: usize, p: usize) -> u64 {
    (p + pid) as u64 + 1
}

/// An event with the time it sorts by and its kind's rank at equal times: slices open
/// before counters and flows at the same instant, so flows find their slice.
struct Timed {
    ts: f64,
    rank: u8,
    event: Value,
}

/// The trace as a Chrome trace event JSON object (`{"traceEvents": [...], ...}`).
pub fn chrome_trace(trace: &Trace, options: &TraceOptions) -> Result<Value> {
    let timeline = Timeline::from_trace(trace, options.network.as_ref())?;
    let mut events = metadata(trace, &timeline, options);
    let mut timed = Vec::new();
    timed.extend(slices(&timeline));
    timed.extend(phases(&timeline));
    timed.extend(speed_counters(trace, options));
    timed.extend(flows(&timeline));
    // Sorted by time, each track's timestamps are monotone, as viewers expect.
    timed.sort_by(|a, b| a.ts.total_cmp(&b.ts).then(a.rank.cmp(&b.rank)));
    events.extend(timed.into_iter().map(|t| t.event));
    Ok(json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": concat!("hetscale-report ", env!("CARGO_PKG_VERSION")),
            "platform": trace.platform,
            "clock": if options.virtual_time { "virtual (sim backend)" } else { "wall" },
        },
    }))
}

/// Writes [`chrome_trace`] to `path`.
pub fn write_chrome_trace(
    trace: &Trace,
    options: &TraceOptions,
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = path.as_ref();
    let text = serde_json::to_string(&chrome_trace(trace, options)?)
        .map_err(|e| ReportError::BadValue(e.to_string()))?;
    hbsp::file::write_atomically(path, text).map_err(|e| ReportError::io(path, e))
}

/// Process and track names, and track order by pid.
fn metadata(trace: &Trace, timeline: &Timeline, options: &TraceOptions) -> Vec<Value> {
    let clock = if options.virtual_time {
        "virtual time"
    } else {
        "wall time"
    };
    let mut out = vec![json!({
        "ph": "M", "name": "process_name", "pid": PID,
        "args": {"name": format!("hetscale on {} ({} nodes, {clock})", trace.platform, trace.nodes.len())},
    })];
    let p = timeline.nodes.len();
    for node in &timeline.nodes {
        let tid = node_tid(node.pid);
        out.push(json!({
            "ph": "M", "name": "thread_name", "pid": PID, "tid": tid,
            "args": {"name": format!("{} (pid {}, C = {} {})", node.name, node.pid, node.marked_speed, options.speed_unit)},
        }));
        out.push(json!({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid, "args": {"sort_index": 2 * node.pid}}));
        if !node.phases.is_empty() {
            let tid = phase_tid(node.pid, p);
            out.push(json!({
                "ph": "M", "name": "thread_name", "pid": PID, "tid": tid,
                "args": {"name": format!("{} phases", node.name)},
            }));
            out.push(json!({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": tid, "args": {"sort_index": 2 * node.pid + 1}}));
        }
    }
    out
}

fn slices(timeline: &Timeline) -> Vec<Timed> {
    timeline
        .nodes
        .iter()
        .flat_map(|node| {
            node.slices.iter().map(move |s| Timed {
                ts: us(s.start_s),
                rank: 0,
                event: json!({
                    "ph": "X", "name": s.activity.name(), "cat": CATEGORY, "pid": PID, "tid": node_tid(node.pid),
                    "ts": us(s.start_s), "dur": us(s.duration_s), "args": {"superstep": s.superstep},
                }),
            })
        })
        .collect()
}

fn phases(timeline: &Timeline) -> Vec<Timed> {
    let p = timeline.nodes.len();
    let mut out = Vec::new();
    for node in &timeline.nodes {
        let mut phases: Vec<_> = node.phases.iter().collect();
        // The trace lists phases as they end (inner first); viewers need an enclosing phase
        // to open before the phases inside it.
        phases.sort_by(|a, b| {
            a.start_s
                .total_cmp(&b.start_s)
                .then(b.duration_s.total_cmp(&a.duration_s))
        });
        out.extend(phases.into_iter().map(|phase| Timed {
            ts: us(phase.start_s),
            rank: 0,
            event: json!({
                "ph": "X", "name": phase.name, "cat": "phase", "pid": PID, "tid": phase_tid(node.pid, p),
                "ts": us(phase.start_s), "dur": us(phase.duration_s),
            }),
        }));
    }
    out
}

/// Each node's achieved speed: its rate while computing, 0 from when it enters `sync`.
fn speed_counters(trace: &Trace, options: &TraceOptions) -> Vec<Timed> {
    let unit = achieved_speed_unit(&options.speed_unit);
    let mut out = Vec::new();
    for node in &trace.nodes {
        let name = format!("speed {} ({unit})", node.name);
        let counter = |ts: f64, value: f64| Timed {
            ts,
            rank: 1,
            event: json!({"ph": "C", "name": name, "cat": CATEGORY, "pid": PID, "tid": node_tid(node.pid), "ts": ts, "args": {"speed": value}}),
        };
        for step in &node.supersteps {
            let speed = achieved_speed(step, &options.speed_unit).unwrap_or(0.0);
            out.push(counter(us(step.start_s), speed));
            if speed > 0.0 {
                out.push(counter(us(step.start_s + step.compute_s), 0.0));
            }
        }
    }
    out
}

/// One arrow per sender, receiver and superstep, from just inside the sender's communication
/// slice to the middle of the receiver's: viewers bind a flow event to the slice enclosing it,
/// and an arrow should not point back in time.
fn flows(timeline: &Timeline) -> Vec<Timed> {
    let slices: HashMap<(usize, u64), (f64, f64)> = timeline
        .nodes
        .iter()
        .flat_map(|node| {
            node.slices
                .iter()
                .filter(|s| s.activity == Activity::Communication)
                .map(move |s| ((node.pid, s.superstep), (s.start_s, s.duration_s)))
        })
        .collect();
    let mut out = Vec::new();
    for (id, m) in timeline.messages.iter().enumerate() {
        let (Some(&(ss, ds)), Some(&(rs, dr))) = (
            slices.get(&(m.from, m.superstep)),
            slices.get(&(m.to, m.superstep)),
        ) else {
            continue;
        };
        let sent = ss + 0.01 * ds.min(dr);
        let received = (rs + 0.5 * dr).max(sent.min(rs + dr));
        let args = json!({"bytes": m.bytes, "messages": m.messages, "superstep": m.superstep});
        out.push(Timed {
            ts: us(sent),
            rank: 2,
            event: json!({"ph": "s", "name": "message", "cat": CATEGORY, "id": id + 1, "pid": PID, "tid": node_tid(m.from), "ts": us(sent), "args": args}),
        });
        out.push(Timed {
            ts: us(received),
            rank: 2,
            event: json!({"ph": "f", "bp": "e", "name": "message", "cat": CATEGORY, "id": id + 1, "pid": PID, "tid": node_tid(m.to), "ts": us(received), "args": args}),
        });
    }
    out
}
