//! Heat maps: a labelled matrix of coloured cells with their values and a colour bar.

use super::base::*;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{ReportError, Result};
use crate::typeset::typeset;
use hetscale_model::numbers::significant;

/// A matrix drawn as coloured cells with their values, e.g. the psi matrix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeatMap {
    /// Chart title.
    pub title: String,
    /// What the columns are (label and unit; scale and range are ignored).
    pub x: Axis,
    /// What the rows are.
    pub y: Axis,
    /// One label per column.
    pub column_labels: Vec<String>,
    /// One label per row; row 0 is drawn at the top, as in a printed matrix.
    pub row_labels: Vec<String>,
    /// `values[row][column]`; `None` leaves a cell blank (e.g. below the diagonal).
    pub values: Vec<Vec<Option<f64>>>,
    /// What the colour means, with its unit (e.g. `psi`).
    pub value_label: String,
    /// Values mapped to the ends of the colour scale; `None` takes the data's range (give
    /// `Some((0.0, 1.0))` for efficiencies and psi, so colours compare across reports).
    pub value_range: Option<(f64, f64)>,
    /// How values map to colours.
    pub colors: ColorScale,
}

/// How a heat map's values map to colours.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorScale {
    /// [`viridis`] from the low end to the high end (default).
    #[default]
    Viridis,
    /// [`diverging`]: white at 0, blue below, vermillion above, over a range symmetric
    /// about 0 (differences).
    Diverging,
}

/// The colour of `value` on a scale from blue at `-limit` through white at 0 to vermillion
/// at `limit` (the Okabe–Ito pair colour-blind readers tell apart), for signed differences.
pub fn diverging(value: f64, limit: f64) -> Rgb {
    let t = if limit > 0.0 {
        (value / limit).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let end = if t < 0.0 { PALETTE[0] } else { PALETTE[3] };
    let mix = |c: u8| (255.0 + (f64::from(c) - 255.0) * t.abs()).round() as u8;
    Rgb(mix(end.0), mix(end.1), mix(end.2))
}

impl ColorScale {
    fn color(self, value: f64, lo: f64, hi: f64) -> Rgb {
        match self {
            Self::Viridis => viridis(value, lo, hi),
            Self::Diverging => diverging(value, hi),
        }
    }

    /// The scale's ends for values from `lo` to `hi`.
    fn ends(self, lo: f64, hi: f64) -> (f64, f64) {
        match self {
            Self::Viridis => (lo, hi),
            Self::Diverging => {
                let limit = lo.abs().max(hi.abs());
                (-limit, limit)
            }
        }
    }
}

/// Width of the colour bar beside a heat map, px.
const COLOR_BAR_WIDTH: u32 = 125;
/// The most characters a heat map cell's value may take: what fits a cell at the smallest
/// legible size (the tables keep every digit).
const CELL_CHARS: usize = 6;
/// The most decimal places a heat map cell's value shows.
const CELL_DECIMALS: usize = 3;
/// Significant digits of the colour bar's tick labels.
const BAR_DIGITS: usize = 2;

/// Draws `map` with its colour scale, each cell labelled with its value.
pub fn heat_map(map: &HeatMap) -> Result<Svg> {
    let (lo, hi) = check_heat_map(map)?;
    let (lo, hi) = map.colors.ends(lo, hi);
    if hi > lo {
        check_range(&map.title, &map.value_label, Scale::Linear, (lo, hi))?;
    }
    render(&map.title, CHART_SIZE, |root| {
        let (cells, bar) = root.split_horizontally(CHART_SIZE.0 - COLOR_BAR_WIDTH);
        draw_cells(&cells, map, lo, hi)?;
        draw_color_bar(&bar, map, lo, hi)
    })
}

/// Checks the matrix' shape and values; returns the range of its values.
fn check_heat_map(map: &HeatMap) -> Result<(f64, f64)> {
    let (rows, cols) = (map.row_labels.len(), map.column_labels.len());
    if rows == 0 || cols == 0 {
        return Err(ReportError::NoData {
            what: format!("heat map \"{}\"", map.title),
            hint: "give at least one row and one column label",
        });
    }
    if map.values.len() != rows || map.values.iter().any(|r| r.len() != cols) {
        return Err(ReportError::BadValue(format!(
            "heat map \"{}\": values must be {rows} rows of {cols} (one per label)",
            map.title
        )));
    }
    let finite: Vec<f64> = map.values.iter().flatten().flatten().copied().collect();
    if finite.iter().any(|v| !v.is_finite()) {
        return Err(ReportError::BadValue(format!(
            "heat map \"{}\" has a value that is not finite: use None for a blank cell",
            map.title
        )));
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return Err(ReportError::NoData {
            what: format!("heat map \"{}\"", map.title),
            hint: "give at least one value",
        });
    }
    match map.value_range {
        Some((a, b)) if a.is_finite() && b.is_finite() && b > a => Ok((a.min(lo), b.max(hi))),
        Some((a, b)) => Err(ReportError::BadValue(format!(
            "heat map \"{}\": value range {a}..{b} is empty; give lo < hi or None",
            map.title
        ))),
        None => Ok((lo, hi)),
    }
}

fn draw_cells(area: &Root<'_>, map: &HeatMap, lo: f64, hi: f64) -> Drawn {
    let (rows, cols) = (map.row_labels.len(), map.column_labels.len());
    let mut chart = ChartBuilder::on(area)
        .caption(typeset(&map.title), (FONT, TITLE))
        .margin(10)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(segments(cols), segments(rows))
        .map_err(plot_err)?;
    let column_labels: Vec<String> = map.column_labels.iter().map(|l| typeset(l)).collect();
    let row_labels: Vec<String> = map.row_labels.iter().map(|l| typeset(l)).collect();
    let column_label = |v: &SegmentValue<usize>| segment_label(v, &column_labels, false);
    let row_label = |v: &SegmentValue<usize>| segment_label(v, &row_labels, true);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(cols)
        .y_labels(rows)
        .x_desc(typeset(&map.x.description()))
        .y_desc(typeset(&map.y.description()))
        .x_label_formatter(&column_label)
        .y_label_formatter(&row_label)
        .axis_desc_style((FONT, LABEL))
        .label_style((FONT, TEXT))
        .draw()
        .map_err(plot_err)?;
    let cell_font = |color: Rgb| {
        let text = if color.is_light() { BLACK } else { WHITE };
        (FONT, TEXT)
            .into_font()
            .color(&text)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    let cell_text = cell_formatter(map);
    for (r, row) in map.values.iter().enumerate() {
        let y = rows - 1 - r;
        for (c, value) in row.iter().enumerate() {
            let Some(v) = value else { continue };
            let color = map.colors.color(*v, lo, hi);
            let corners = [
                (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
            ];
            let mut cell = Rectangle::new(corners, color.plotters().filled());
            // A white seam keeps neighbouring cells of close colours apart.
            cell.set_margin(1, 1, 1, 1);
            chart.draw_series(std::iter::once(cell)).map_err(plot_err)?;
            let centre = (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y));
            chart
                .draw_series(std::iter::once(Text::new(
                    cell_text(*v),
                    centre,
                    cell_font(color),
                )))
                .map_err(plot_err)?;
        }
    }
    Ok(())
}

/// How a heat map's cells print their values: every cell with the same decimal places, as
/// many (up to [`CELL_DECIMALS`]) as keep the widest value within [`CELL_CHARS`]; whole
/// numbers without any. Where nothing fits, or the values are too small for fixed decimals,
/// each value takes [`significant`]'s significant digits.
pub(super) fn cell_formatter(map: &HeatMap) -> impl Fn(f64) -> String {
    let values: Vec<f64> = map
        .values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let largest = values.iter().map(|v| v.abs()).fold(0.0, f64::max);
    let widest = |decimals: usize| {
        values
            .iter()
            .map(|v| fixed_decimals(*v, decimals).len())
            .max()
            .unwrap_or(0)
    };
    let decimals = if values.iter().all(|v| v.fract() == 0.0) {
        Some(0)
    } else if largest < 1e-3 {
        None
    } else {
        (0..=CELL_DECIMALS).rev().find(|&d| widest(d) <= CELL_CHARS)
    };
    move |v: f64| match decimals {
        Some(d) if v.is_finite() => fixed_decimals(v, d),
        _ => significant(v, 2),
    }
}

/// `v` with `decimals` places; a tiny negative value that rounds to zero prints unsigned.
fn fixed_decimals(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    match text.strip_prefix('-') {
        Some(digits) if digits.chars().all(|c| c == '0' || c == '.') => digits.to_owned(),
        _ => text,
    }
}

/// `n` equal segments, indices `0..n` (plotters' integer ranges include their end).
pub(crate) fn segments(
    n: usize,
) -> plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordusize> {
    (0..n.saturating_sub(1)).into_segmented()
}

/// The label of a segment's centre; rows count from the top.
pub(super) fn segment_label(v: &SegmentValue<usize>, labels: &[String], from_top: bool) -> String {
    match v {
        SegmentValue::CenterOf(i) if *i < labels.len() => {
            let index = if from_top { labels.len() - 1 - i } else { *i };
            labels[index].clone()
        }
        _ => String::new(),
    }
}

/// `v`, or 0 where it is rounding noise on an axis spanning `span` (a tick computed as
/// `-0.05 + 5 x 0.01` prints 6.9e-18, not 0).
pub(super) fn snap_to_zero(v: f64, span: f64) -> f64 {
    if v.abs() <= 1e-9 * span.abs() { 0.0 } else { v }
}

fn draw_color_bar(area: &Root<'_>, map: &HeatMap, lo: f64, hi: f64) -> Drawn {
    let (lo_axis, hi_axis) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, hi + 0.5)
    };
    let mut chart = ChartBuilder::on(area)
        .margin_top(60)
        .margin_bottom(64)
        .margin_right(8)
        .y_label_area_size(85)
        .build_cartesian_2d(0.0..1.0, lo_axis..hi_axis)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(typeset(&map.value_label))
        .y_labels(5)
        // Ticks long enough that a label stands clear of the bar.
        .set_tick_mark_size(LabelAreaPosition::Left, 10)
        .y_label_formatter(&|v| significant(snap_to_zero(*v, hi_axis - lo_axis), BAR_DIGITS))
        .axis_desc_style((FONT, LABEL))
        .label_style((FONT, TEXT))
        .draw()
        .map_err(plot_err)?;
    const STEPS: usize = 64;
    let step = (hi_axis - lo_axis) / STEPS as f64;
    chart
        .draw_series((0..STEPS).map(|i| {
            let v0 = lo_axis + i as f64 * step;
            let color = map.colors.color(v0 + step / 2.0, lo, hi);
            Rectangle::new([(0.0, v0), (1.0, v0 + step)], color.plotters().filled())
        }))
        .map_err(plot_err)?;
    Ok(())
}
