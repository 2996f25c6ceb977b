//! Stacked horizontal bar charts.

use super::base::*;
use super::heat_map::{segment_label, segments};
use super::key::{Glyph, draw_key, key_height};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::error::{ReportError, Result};
use crate::typeset::typeset;
use hetscale_model::numbers::significant;

/// One part of every bar of a [`stacked_bar_chart`] (e.g. compute time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BarStack {
    /// Legend text.
    pub label: String,
    /// One value per category, >= 0.
    pub values: Vec<f64>,
    /// Colour; `None` takes the palette colour of the stack's position.
    pub color: Option<Rgb>,
}

/// Horizontal bars, one per category (first at the top), each split into `stacks`.
pub fn stacked_bar_chart(
    title: &str,
    category_axis: &str,
    categories: &[String],
    stacks: &[BarStack],
    value_axis: &Axis,
) -> Result<Svg> {
    check_stacks(title, categories, stacks)?;
    let totals: Vec<f64> = (0..categories.len())
        .map(|i| stacks.iter().map(|s| s.values[i]).sum())
        .collect();
    let max = totals.iter().copied().fold(0.0, f64::max);
    let range = value_axis
        .range
        .unwrap_or((0.0, if max > 0.0 { max * 1.05 } else { 1.0 }));
    let range = check_range(title, &value_axis.label, Scale::Linear, range)?;
    // Only the parts some bar shows get a key entry.
    let entries: Vec<(&str, Glyph)> = stacks
        .iter()
        .enumerate()
        .filter(|(_, stack)| stack.values.iter().any(|v| *v > 0.0))
        .map(|(k, stack)| (stack.label.as_str(), Glyph::Box(stack_color(stack, k))))
        .collect();
    let plot_height = (CHART_SIZE.1)
        .max(120 + 26 * categories.len() as u32)
        .min(4000);
    let height = plot_height + key_height(&entries);
    render(title, (CHART_SIZE.0, height), |root| {
        let (plot, key) = root.split_vertically(plot_height);
        let n = categories.len();
        let mut chart = ChartBuilder::on(&plot)
            .caption(typeset(title), (FONT, TITLE))
            .margin(10)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(range.0..range.1, segments(n))
            .map_err(plot_err)?;
        let categories: Vec<String> = categories.iter().map(|c| typeset(c)).collect();
        let label = |v: &SegmentValue<usize>| segment_label(v, &categories, true);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .x_labels(6)
            .x_desc(typeset(&value_axis.description()))
            .y_desc(typeset(category_axis))
            .x_label_formatter(&|v| significant(*v, 3))
            .y_label_formatter(&label)
            .axis_desc_style((FONT, LABEL))
            .label_style((FONT, TEXT))
            .light_line_style(RGBColor(243, 243, 243))
            .draw()
            .map_err(plot_err)?;
        let mut offsets = vec![0.0; n];
        for (k, stack) in stacks.iter().enumerate() {
            let color = stack_color(stack, k);
            let bars: Vec<_> = (0..n)
                .map(|i| {
                    let y = n - 1 - i;
                    let (x0, x1) = (offsets[i], offsets[i] + stack.values[i]);
                    offsets[i] = x1;
                    let mut bar = Rectangle::new(
                        [
                            (x0, SegmentValue::Exact(y)),
                            (x1, SegmentValue::Exact(y + 1)),
                        ],
                        color.plotters().filled(),
                    );
                    bar.set_margin(3, 3, 0, 0);
                    bar
                })
                .collect();
            chart.draw_series(bars).map_err(plot_err)?;
        }
        draw_key(&key, &entries)
    })
}

fn stack_color(stack: &BarStack, k: usize) -> Rgb {
    stack.color.unwrap_or_else(|| palette(k))
}

fn check_stacks(title: &str, categories: &[String], stacks: &[BarStack]) -> Result<()> {
    if categories.is_empty() || stacks.is_empty() {
        return Err(ReportError::NoData {
            what: format!("bar chart \"{title}\""),
            hint: "give at least one category and one stack",
        });
    }
    for stack in stacks {
        if stack.values.len() != categories.len() {
            return Err(ReportError::BadValue(format!(
                "bar chart \"{title}\": stack \"{}\" has {} values for {} categories; give one per category",
                stack.label,
                stack.values.len(),
                categories.len()
            )));
        }
        if let Some(v) = stack.values.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(ReportError::BadValue(format!(
                "bar chart \"{title}\": stack \"{}\" has value {v}; bars need finite values >= 0",
                stack.label
            )));
        }
    }
    Ok(())
}
