//! Export of a trace as Chrome trace event JSON, which ui.perfetto.dev and chrome://tracing
//! open: one track per node named after it, compute / communication / wait slices (`X`),
//! message flow arrows between nodes (`s` / `f`), a speed counter per node (`C`), and the
//! user-named phases on a track of their own under each node. Timestamps are microseconds
//! since the run began, virtual on the `sim` backend.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use hbsp::trace::Trace;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::error::{ReportError, Result};
use crate::timeline::{Activity, Timeline, TraceOptions, achieved_speed, achieved_speed_unit};

/// Bytes the export (the timeline, the sorted events and the write buffer) holds at its peak
/// per byte of the trace it exports, on top of the trace: measured on GE's skeleton on 1024
/// nodes at N = 1024 (`hetscale run ge --backend sim --skip-compute --platform maspar --nodes
/// pe:1024 --n 1024 --trace t.json`: 4.3 GB peak for a trace estimated at 1.07 GB), with
/// room to spare.
pub const EXPORT_BYTES_PER_TRACE_BYTE: f64 = 4.0;

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
struct Timed<'a> {
    ts: f64,
    rank: u8,
    event: Event<'a>,
}

/// One timed event, typed: a run on a thousand nodes has millions, which as JSON values took
/// 40 times the trace's own memory.
#[derive(Serialize)]
struct Event<'a> {
    ph: &'static str,
    name: &'a str,
    cat: &'static str,
    pid: u64,
    tid: u64,
    ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Args {
    Superstep {
        superstep: u64,
    },
    Speed {
        speed: f64,
    },
    Message {
        bytes: u64,
        messages: u64,
        superstep: u64,
    },
}

/// The whole export, serialised event by event.
struct ChromeTrace<'a> {
    metadata: Vec<Value>,
    timed: Vec<Timed<'a>>,
    other: Value,
}

impl Serialize for ChromeTrace<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        struct Events<'b, 'a>(&'b ChromeTrace<'a>);
        impl Serialize for Events<'_, '_> {
            fn serialize<S: Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                let trace = self.0;
                let mut seq =
                    serializer.serialize_seq(Some(trace.metadata.len() + trace.timed.len()))?;
                for event in &trace.metadata {
                    seq.serialize_element(event)?;
                }
                for timed in &trace.timed {
                    seq.serialize_element(&timed.event)?;
                }
                seq.end()
            }
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("traceEvents", &Events(self))?;
        map.serialize_entry("displayTimeUnit", "ms")?;
        map.serialize_entry("otherData", &self.other)?;
        map.end()
    }
}

/// Builds the export of `trace` and hands it to `use_it`: a callback, because the events
/// borrow the counters' names built here.
fn with_export<R>(
    trace: &Trace,
    options: &TraceOptions,
    use_it: impl FnOnce(&ChromeTrace<'_>) -> Result<R>,
) -> Result<R> {
    let timeline = Timeline::from_trace(trace, options.network.as_ref())?;
    let unit = achieved_speed_unit(&options.speed_unit);
    let counter_names: Vec<String> = trace
        .nodes
        .iter()
        .map(|node| format!("speed {} ({unit})", node.name))
        .collect();
    let mut timed = Vec::new();
    timed.extend(slices(&timeline));
    timed.extend(phases(&timeline));
    timed.extend(speed_counters(trace, options, &counter_names));
    timed.extend(flows(&timeline));
    // Sorted by time, each track's timestamps are monotone, as viewers expect.
    timed.sort_by(|a, b| a.ts.total_cmp(&b.ts).then(a.rank.cmp(&b.rank)));
    let export = ChromeTrace {
        metadata: metadata(trace, &timeline, options),
        timed,
        other: json!({
            "generator": concat!("hetscale-report ", env!("CARGO_PKG_VERSION")),
            "platform": trace.platform,
            "clock": if options.virtual_time { "virtual (sim backend)" } else { "wall" },
        }),
    };
    use_it(&export)
}

/// The trace as a Chrome trace event JSON object (`{"traceEvents": [...], ...}`).
pub fn chrome_trace(trace: &Trace, options: &TraceOptions) -> Result<Value> {
    with_export(trace, options, |export| {
        serde_json::to_value(export).map_err(|e| ReportError::BadValue(e.to_string()))
    })
}

/// Writes [`chrome_trace`] to `path`, streamed event by event (atomically: a temporary file
/// beside it, renamed when complete).
pub fn write_chrome_trace(
    trace: &Trace,
    options: &TraceOptions,
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = path.as_ref();
    with_export(trace, options, |export| {
        hetscale_out::write_atomically_with(path, |temporary| {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(temporary)?;
            let mut writer = std::io::BufWriter::new(file);
            serde_json::to_writer(&mut writer, export)?;
            writer.flush()
        })
        .map_err(|e| ReportError::io(path, e))
    })
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

fn slices(timeline: &Timeline) -> Vec<Timed<'static>> {
    timeline
        .nodes
        .iter()
        .flat_map(|node| {
            node.slices.iter().map(move |s| Timed {
                ts: us(s.start_s),
                rank: 0,
                event: Event {
                    ph: "X",
                    name: s.activity.name(),
                    cat: CATEGORY,
                    pid: PID,
                    tid: node_tid(node.pid),
                    ts: us(s.start_s),
                    dur: Some(us(s.duration_s)),
                    id: None,
                    bp: None,
                    args: Some(Args::Superstep {
                        superstep: s.superstep,
                    }),
                },
            })
        })
        .collect()
}

fn phases(timeline: &Timeline) -> Vec<Timed<'_>> {
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
            event: Event {
                ph: "X",
                name: &phase.name,
                cat: "phase",
                pid: PID,
                tid: phase_tid(node.pid, p),
                ts: us(phase.start_s),
                dur: Some(us(phase.duration_s)),
                id: None,
                bp: None,
                args: None,
            },
        }));
    }
    out
}

/// Each node's achieved speed: its rate while computing, 0 from when it enters `sync`;
/// `names[j]` names node `j`'s counter.
fn speed_counters<'a>(
    trace: &Trace,
    options: &TraceOptions,
    names: &'a [String],
) -> Vec<Timed<'a>> {
    let mut out = Vec::new();
    for (node, name) in trace.nodes.iter().zip(names) {
        let counter = |ts: f64, value: f64| Timed {
            ts,
            rank: 1,
            event: Event {
                ph: "C",
                name,
                cat: CATEGORY,
                pid: PID,
                tid: node_tid(node.pid),
                ts,
                dur: None,
                id: None,
                bp: None,
                args: Some(Args::Speed { speed: value }),
            },
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
fn flows(timeline: &Timeline) -> Vec<Timed<'static>> {
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
        let event = |ph, tid, ts, bp| Event {
            ph,
            name: "message",
            cat: CATEGORY,
            pid: PID,
            tid,
            ts,
            dur: None,
            id: Some(id + 1),
            bp,
            args: Some(Args::Message {
                bytes: m.bytes,
                messages: m.messages,
                superstep: m.superstep,
            }),
        };
        out.push(Timed {
            ts: us(sent),
            rank: 2,
            event: event("s", node_tid(m.from), us(sent), None),
        });
        out.push(Timed {
            ts: us(received),
            rank: 2,
            event: event("f", node_tid(m.to), us(received), Some("e")),
        });
    }
    out
}
