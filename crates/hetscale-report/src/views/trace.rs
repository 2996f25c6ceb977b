//! Views of one run's trace (Sun & Rover's visual tools, after ParaGraph): the spacetime
//! diagram, the average speed chart and the task summary. They need no study database.

use std::collections::BTreeMap;

use hbsp::trace::Trace;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;

use super::{ids, short_list};
use crate::chart::{
    Axes, Axis, BarStack, CHART_SIZE, Drawn, FONT, Glyph, LABEL, Rgb, Scale, Series, Svg, TEXT,
    TITLE, check_range, draw_key, key_height, line_chart, plot_err, render, segments,
    stacked_bar_chart, viridis,
};
use crate::error::Result;
use crate::html::{Figure, Section};
use crate::table::{Cell, Column, Table};
use crate::timeline::{
    Activity, NodeTimeline, Timeline, TraceOptions, achieved_speed, achieved_speed_unit,
};
use hetscale_model::numbers::{significant, time_unit};

/// Nodes drawn in the spacetime diagram and the speed chart; more would not be legible (the
/// tables and the Perfetto export have them all).
pub const MAX_NODES_DRAWN: usize = 64;
/// Slices drawn in the spacetime diagram, so the page stays small; later supersteps are cut.
pub const MAX_SLICES_DRAWN: usize = 20_000;
/// Message lines drawn in the spacetime diagram; beyond this they hide the slices.
pub const MAX_MESSAGES_DRAWN: usize = 1_000;
/// Supersteps beyond which message lines are too dense to read at the page's width.
pub const MAX_SUPERSTEPS_WITH_MESSAGES: u64 = 60;
/// Bars drawn in the task summary chart.
pub const MAX_BARS_DRAWN: usize = 128;

/// Colour of each activity: blue computing, orange communicating, grey waiting for slower
/// nodes, purple in the barrier.
pub fn activity_color(activity: Activity) -> Rgb {
    match activity {
        Activity::Compute => Rgb(0, 114, 178),
        Activity::Communication => Rgb(230, 159, 0),
        Activity::Wait => Rgb(200, 200, 200),
        Activity::Barrier => Rgb(204, 121, 167),
    }
}

/// What the activity colours mean, for captions.
const COLOURS: &str = "blue: computing, orange: communicating, grey: waiting in sync for slower nodes, purple: in the barrier after the exchange";

/// The three trace views of one run: spacetime diagram, average speed chart, task summary.
pub fn trace_sections(trace: &Trace, options: &TraceOptions) -> Result<Vec<Section>> {
    Ok(vec![
        spacetime_section(trace, options)?,
        average_speed_section(trace, options)?,
        task_summary_section(trace, options)?,
    ])
}

/// The spacetime diagram: one row per node, time across, coloured by activity, a line per
/// message from the sender's exchange to the receiver's.
pub fn spacetime_section(trace: &Trace, options: &TraceOptions) -> Result<Section> {
    let timeline = Timeline::from_trace(trace, options.network.as_ref())?;
    let shown = Shown::choose(&timeline);
    let (unit, per_s) = time_unit(shown.end_s);
    let title = format!(
        "Spacetime diagram, {} nodes on {}",
        trace.nodes.len(),
        trace.platform
    );
    let svg = spacetime_chart(&title, &timeline, &shown, options.time_label(), unit, per_s)?;
    let lines = if shown.messages {
        "; dark lines: messages, from the start of the sender's exchange to the end of the receiver's"
    } else {
        ""
    };
    let caption = format!(
        "Each row is a node (pid 0 at the top); {COLOURS}{lines}.{}",
        shown.note(&timeline)
    );
    let how = match options.network {
        Some(_) => {
            "Communication is each node's HBSP^1 cost g r_j h_j + o m_j, from the moment the last node enters sync; before it a node waits for slower ones, after it the barrier releases every node."
        }
        None => {
            "Without a network model, a node's whole exchange (from the last node's arrival in sync to its own exit) counts as communication; a node that exchanged nothing spends that time in the barrier."
        }
    };
    Ok(Section::new(ids::SPACETIME, "Spacetime diagram")
        .text(format!(
            "What every node did, superstep by superstep: where computing is unbalanced, grey waits appear on the faster nodes. {how}"
        ))
        .figure(Figure::new(format!("{}-figure", ids::SPACETIME), caption, svg)))
}

/// What the spacetime diagram draws of a timeline.
struct Shown {
    nodes: usize,
    supersteps: u64,
    end_s: f64,
    messages: bool,
}

impl Shown {
    fn choose(timeline: &Timeline) -> Self {
        let nodes = timeline.nodes.len().min(MAX_NODES_DRAWN);
        let per_step = timeline.nodes[..nodes]
            .iter()
            .map(|n| n.slices.len())
            .sum::<usize>()
            .div_ceil(timeline.supersteps.max(1));
        let supersteps = (MAX_SLICES_DRAWN / per_step.max(1)).clamp(1, timeline.supersteps) as u64;
        let end_s = timeline.nodes[..nodes]
            .iter()
            .flat_map(|n| n.slices.iter())
            .filter(|s| s.superstep < supersteps)
            .map(|s| s.end_s())
            .fold(0.0, f64::max);
        let drawn = timeline
            .messages
            .iter()
            .filter(|m| m.superstep < supersteps)
            .count();
        Self {
            nodes,
            supersteps,
            end_s: if end_s > 0.0 {
                end_s
            } else {
                timeline.end_s.max(1e-9)
            },
            messages: drawn <= MAX_MESSAGES_DRAWN && supersteps <= MAX_SUPERSTEPS_WITH_MESSAGES,
        }
    }

    fn note(&self, timeline: &Timeline) -> String {
        let mut note = String::new();
        if self.nodes < timeline.nodes.len() {
            note += &format!(
                " Only the first {} of {} nodes are drawn.",
                self.nodes,
                timeline.nodes.len()
            );
        }
        if (self.supersteps as usize) < timeline.supersteps {
            note += &format!(
                " Only the first {} of {} supersteps are drawn.",
                self.supersteps, timeline.supersteps
            );
        }
        if !self.messages {
            note +=
                " Message lines are left out: at this many supersteps they would hide the slices.";
        }
        if !note.is_empty() {
            note += " The Perfetto export (hetscale run --trace) has everything.";
        }
        note
    }
}

fn spacetime_chart(
    title: &str,
    timeline: &Timeline,
    shown: &Shown,
    time_label: &str,
    unit: &str,
    per_s: f64,
) -> Result<Svg> {
    let rows = shown.nodes;
    let plot_height = CHART_SIZE.1.max(130 + 22 * rows as u32);
    let labels: Vec<String> = timeline.nodes[..rows]
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let entries = spacetime_key(timeline, shown);
    let range = check_range(
        title,
        time_label,
        Scale::Linear,
        (0.0, shown.end_s * per_s * 1.02),
    )?;
    let height = plot_height + key_height(&entries);
    render(title, (CHART_SIZE.0, height), |root| {
        let (plot, key) = root.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, TITLE))
            .margin(10)
            .x_label_area_size(56)
            .y_label_area_size(100)
            .build_cartesian_2d(range.0..range.1, segments(rows))
            .map_err(plot_err)?;
        let row_label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) if *i < rows => labels[rows - 1 - i].clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows)
            .x_desc(format!("{time_label} ({unit})"))
            .y_desc("node")
            .x_label_formatter(&|v| significant(*v, 3))
            .y_label_formatter(&row_label)
            .x_labels(6)
            .axis_desc_style((FONT, LABEL))
            .label_style((FONT, TEXT))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(plot_err)?;
        for activity in Activity::ALL {
            let color = activity_color(activity);
            let rects: Vec<_> = timeline.nodes[..rows]
                .iter()
                .enumerate()
                .flat_map(|(i, node)| {
                    activity_rects(node, rows - 1 - i, activity, shown.supersteps, per_s)
                })
                .map(|corners| {
                    let mut r = Rectangle::new(corners, color.plotters().filled());
                    r.set_margin(2, 2, 0, 0);
                    r
                })
                .collect();
            chart.draw_series(rects).map_err(plot_err)?;
        }
        if shown.messages {
            draw_messages(&mut chart, timeline, shown, per_s)?;
        }
        draw_key(&key, &entries)
    })
}

/// A key entry per activity some drawn node spends time in, and one for messages if drawn.
fn spacetime_key(timeline: &Timeline, shown: &Shown) -> Vec<(&'static str, Glyph)> {
    let mut entries: Vec<(&str, Glyph)> = Activity::ALL
        .into_iter()
        .filter(|&activity| {
            timeline.nodes[..shown.nodes].iter().any(|node| {
                node.slices.iter().any(|s| {
                    s.activity == activity && s.superstep < shown.supersteps && s.duration_s > 0.0
                })
            })
        })
        .map(|activity| (activity.name(), Glyph::Box(activity_color(activity))))
        .collect();
    if shown.messages {
        entries.push(("message", Glyph::Thin(MESSAGE_COLOR)));
    }
    entries
}

/// Message lines: dark grey, so they read over every activity colour.
const MESSAGE_COLOR: Rgb = Rgb(60, 60, 60);

type Corners = [(f64, SegmentValue<usize>); 2];

fn activity_rects(
    node: &NodeTimeline,
    row: usize,
    activity: Activity,
    supersteps: u64,
    per_s: f64,
) -> Vec<Corners> {
    node.slices
        .iter()
        .filter(|s| s.activity == activity && s.superstep < supersteps && s.duration_s > 0.0)
        .map(|s| {
            [
                (s.start_s * per_s, SegmentValue::Exact(row)),
                (s.end_s() * per_s, SegmentValue::Exact(row + 1)),
            ]
        })
        .collect()
}

fn draw_messages<'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>,
    >,
    timeline: &Timeline,
    shown: &Shown,
    per_s: f64,
) -> Drawn {
    let rows = shown.nodes;
    let line = MESSAGE_COLOR.plotters().mix(0.6).stroke_width(1);
    let paths: Vec<_> = timeline
        .messages
        .iter()
        .filter(|m| m.superstep < shown.supersteps && m.from < rows && m.to < rows)
        .map(|m| {
            PathElement::new(
                vec![
                    (m.sent_s * per_s, SegmentValue::CenterOf(rows - 1 - m.from)),
                    (
                        m.received_s * per_s,
                        SegmentValue::CenterOf(rows - 1 - m.to),
                    ),
                ],
                line,
            )
        })
        .collect();
    chart.draw_series(paths).map_err(plot_err)?;
    Ok(())
}

/// The average speed chart: each node's achieved speed (declared work over compute time) in
/// every superstep, coloured by its marked speed, with a per-node table.
pub fn average_speed_section(trace: &Trace, options: &TraceOptions) -> Result<Section> {
    let unit = achieved_speed_unit(&options.speed_unit);
    let section = Section::new(ids::AVERAGE_SPEED, "Average speed").text(format!(
        "Speed each node achieved while computing: the work it declared over its compute time, superstep by superstep, in {unit}. Lines are coloured by marked speed C_j (dark: slow, light: fast); a node far below its marked speed is losing time to something other than its share of the work."
    ));
    let series = speed_series(trace, &options.speed_unit);
    if series.is_empty() {
        return Ok(section.text(
            "No node declared work (ctx.compute or ctx.charge_work), so no speed can be shown.",
        ));
    }
    let title = format!("Achieved speed per superstep on {}", trace.platform);
    // From zero, so equal speeds do not look different through a magnified axis.
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        * 1.15;
    let axes = Axes::new(
        Axis::new("superstep").integers(),
        Axis::new("achieved speed").unit(unit).range(0.0, top),
    );
    let svg = line_chart(&title, &axes, &series)?;
    let drawn = trace.nodes.len().min(MAX_NODES_DRAWN);
    let mut caption =
        "One line per node; the legend groups nodes of equal marked speed.".to_owned();
    if drawn < trace.nodes.len() {
        caption += &format!(
            " Only the first {drawn} of {} nodes are drawn; the table has all.",
            trace.nodes.len()
        );
    }
    Ok(section
        .figure(Figure::new(
            format!("{}-figure", ids::AVERAGE_SPEED),
            caption,
            svg,
        ))
        .table(speed_table(trace, options)?))
}

/// One series per drawn node; only the first node of each marked speed is named in the legend.
fn speed_series(trace: &Trace, speed_unit: &str) -> Vec<Series> {
    let nodes = &trace.nodes[..trace.nodes.len().min(MAX_NODES_DRAWN)];
    let (lo, hi) = nodes
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), n| {
            (lo.min(n.marked_speed), hi.max(n.marked_speed))
        });
    // The top of viridis is a pale yellow that vanishes on white: stop short of it.
    let top = hi + (hi - lo) * 0.25;
    let mut groups: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for n in nodes {
        groups
            .entry(n.marked_speed.to_bits())
            .or_default()
            .push(&n.name);
    }
    let mut labelled = std::collections::HashSet::new();
    nodes
        .iter()
        .filter_map(|node| {
            let points: Vec<(f64, f64)> = node
                .supersteps
                .iter()
                .filter_map(|s| achieved_speed(s, speed_unit).map(|v| (s.index as f64, v)))
                .collect();
            if points.is_empty() {
                return None;
            }
            let key = node.marked_speed.to_bits();
            let label = if labelled.insert(key) {
                format!(
                    "C = {} {speed_unit}: {}",
                    significant(node.marked_speed, 4),
                    short_list(&groups[&key], 3)
                )
            } else {
                String::new()
            };
            Some(Series::line(label, points).color(viridis(node.marked_speed, lo, top)))
        })
        .collect()
}

fn speed_table(trace: &Trace, options: &TraceOptions) -> Result<Table> {
    let unit = achieved_speed_unit(&options.speed_unit).to_owned();
    let mut table = Table::new(
        ids::AVERAGE_SPEED,
        "Average speed per node",
        vec![
            Column::new("node"),
            Column::new("pid"),
            Column::with_unit("marked speed", options.speed_unit.clone()),
            Column::with_unit("work", "op"),
            Column::with_unit("compute time", "s"),
            Column::with_unit("average speed", unit),
        ],
    );
    for node in &trace.nodes {
        let work: f64 = node.supersteps.iter().map(|s| s.work_ops).sum();
        let compute: f64 = node
            .supersteps
            .iter()
            .filter(|s| s.work_ops > 0.0)
            .map(|s| s.compute_s)
            .sum();
        let total = hbsp::trace::SuperstepTrace {
            work_ops: work,
            compute_s: compute,
            ..Default::default()
        };
        table.push_row(vec![
            node.name.as_str().into(),
            node.pid.into(),
            node.marked_speed.into(),
            work.into(),
            compute.into(),
            achieved_speed(&total, &options.speed_unit).into(),
        ])?;
    }
    Ok(table)
}

/// The task summary: each node's time split into computing, communicating and waiting, as
/// stacked bars and a table (with the time in each user-named phase).
pub fn task_summary_section(trace: &Trace, options: &TraceOptions) -> Result<Section> {
    let timeline = Timeline::from_trace(trace, options.network.as_ref())?;
    let totals = timeline.totals();
    let longest = totals.iter().map(|t| t.total_s()).fold(0.0, f64::max);
    let (unit, per_s) = time_unit(longest);
    let drawn = timeline.nodes.len().min(MAX_BARS_DRAWN);
    let categories: Vec<String> = timeline.nodes[..drawn]
        .iter()
        .map(|n| n.name.clone())
        .collect();
    let stacks: Vec<BarStack> = Activity::ALL
        .iter()
        .map(|&a| BarStack {
            label: a.name().into(),
            values: totals[..drawn].iter().map(|t| per_s * t.of(a)).collect(),
            color: Some(activity_color(a)),
        })
        .collect();
    let title = format!("Time per node on {}", trace.platform);
    let value_axis = Axis::new(options.time_label()).unit(unit);
    let svg = stacked_bar_chart(&title, "node", &categories, &stacks, &value_axis)?;
    let mut caption = format!("Colours: {COLOURS}.");
    if drawn < timeline.nodes.len() {
        caption += &format!(
            " Only the first {drawn} of {} nodes are drawn; the table has all.",
            timeline.nodes.len()
        );
    }
    Ok(Section::new(ids::TASK_SUMMARY, "Task summary")
        .text("Where each node's time went. Equal bars with little grey mean a balanced distribution; long grey bars on fast nodes mean they wait for slow ones.")
        .figure(Figure::new(format!("{}-figure", ids::TASK_SUMMARY), caption, svg))
        .table(task_table(&timeline, &totals)?))
}

fn task_table(timeline: &Timeline, totals: &[crate::timeline::ActivityTotals]) -> Result<Table> {
    let phase_names: Vec<String> = {
        let mut names: Vec<String> = timeline
            .nodes
            .iter()
            .flat_map(|n| n.phases.iter().map(|p| p.name.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let mut columns = vec![
        Column::new("node"),
        Column::new("pid"),
        Column::with_unit("compute", "s"),
        Column::with_unit("communication", "s"),
        Column::with_unit("wait", "s"),
        Column::with_unit("barrier", "s"),
        Column::with_unit("total", "s"),
        Column::with_unit("computing", "%"),
    ];
    columns.extend(
        phase_names
            .iter()
            .map(|name| Column::with_unit(format!("phase {name}"), "s")),
    );
    let mut table = Table::new(ids::TASK_SUMMARY, "Time per node by activity", columns);
    for (node, t) in timeline.nodes.iter().zip(totals) {
        let share = if t.total_s() > 0.0 {
            Some(100.0 * t.compute_s / t.total_s())
        } else {
            None
        };
        let mut row: Vec<Cell> = vec![
            node.name.as_str().into(),
            node.pid.into(),
            t.compute_s.into(),
            t.communication_s.into(),
            t.wait_s.into(),
            t.barrier_s.into(),
            t.total_s().into(),
            share.into(),
        ];
        row.extend(phase_names.iter().map(|name| {
            let time: f64 = node
                .phases
                .iter()
                .filter(|p| &p.name == name)
                .map(|p| p.duration_s)
                .sum();
            Cell::from(time)
        }));
        table.push_row(row)?;
    }
    Ok(table)
}
