//! Line and scatter charts: series with markers, error bars and a legend, on linear or log
//! axes.

use super::base::*;
use super::key::{Glyph, draw_key, key_height};
use super::marker::{LINE_MARKER, SCATTER_MARKER, marker_element};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::error::Result;
use crate::typeset::typeset;

/// A line or scatter chart of `series` on `axes`. Fails if there is no point, if a value is
/// not finite, or if a log axis gets a value <= 0.
pub fn line_chart(title: &str, axes: &Axes, series: &[Series]) -> Result<Svg> {
    check_points(title, axes, series)?;
    let x = data_range(title, &axes.x, series.iter().flat_map(Series::xs))?;
    let y = data_range(title, &axes.y, series.iter().flat_map(Series::ys))?;
    let (xs, ys) = (x.0..x.1, y.0..y.1);
    let entries: Vec<(String, Glyph)> = if axes.legend == LegendPosition::Below {
        series
            .iter()
            .enumerate()
            .filter(|(_, s)| s.in_legend())
            .map(|(i, s)| (typeset(&s.label), series_glyph(s, i)))
            .collect()
    } else {
        Vec::new()
    };
    let key_height = key_height(&entries);
    render(title, (CHART_SIZE.0, CHART_SIZE.1 + key_height), |root| {
        let (plot, key) = root.split_vertically(CHART_SIZE.1);
        match (axes.x.scale, axes.y.scale) {
            (Scale::Linear, Scale::Linear) => draw_lines(&plot, title, axes, series, xs, ys),
            (Scale::Log, Scale::Linear) => {
                draw_lines(&plot, title, axes, series, log_range(xs), ys)
            }
            (Scale::Linear, Scale::Log) => {
                draw_lines(&plot, title, axes, series, xs, log_range(ys))
            }
            (Scale::Log, Scale::Log) => {
                draw_lines(&plot, title, axes, series, log_range(xs), log_range(ys))
            }
        }?;
        draw_key(&key, &entries)
    })
}

/// A log coordinate with ticks every reader can place (plotters' own labels only powers of
/// 10 and crowds the decade above them): see [`log_ticks`].
fn log_range(range: std::ops::Range<f64>) -> WithKeyPoints<LogCoord<f64>> {
    let (lo, hi) = (range.start, range.end);
    let light = log_ticks(lo, hi, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let coord: LogCoord<f64> = range.log_scale().into();
    coord
        .with_key_points(log_ticks(lo, hi, &[]))
        .with_light_points(light)
}

/// Tick values in `[lo, hi]` on a log axis: powers of 2 for sizes and node counts spanning
/// less than three decades (p = 2, 4, ..., 32; N = 256, 512, ...), else 1, 2, 5 times powers
/// of 10 over at most three decades and powers of 10 beyond. `mantissas`, when given,
/// replaces that choice (the faint grid lines use 1..9).
pub(super) fn log_ticks(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let decades = (hi / lo).log10();
    if mantissas.is_empty() && lo >= 1.0 && decades < 3.0 {
        let powers: Vec<f64> = (lo.log2().ceil() as i32..=hi.log2().floor() as i32)
            .map(|k| 2f64.powi(k))
            .collect();
        if powers.len() >= 2 {
            return powers;
        }
    }
    let mantissas = match mantissas {
        [] if decades <= 3.0 => &[1.0, 2.0, 5.0][..],
        [] => &[1.0][..],
        given => given,
    };
    // Every decade up to 10 labels; beyond, every other one (or fewer), 1 among them.
    let step = (decades / 10.0).ceil().max(1.0) as i32;
    let ticks: Vec<f64> = (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
        .filter(|k| k.rem_euclid(step) == 0)
        .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
        .filter(|v| (lo..=hi).contains(v))
        .collect();
    if ticks.len() >= 2 || !mantissas.starts_with(&[1.0, 2.0, 5.0]) {
        return ticks;
    }
    // A range too narrow for any 1-2-5 mark (N from 28 to 40): round steps, as a linear axis.
    round_steps(lo, hi)
}

/// Multiples of the largest 1, 2 or 5 times a power of ten that puts at least 3 in `lo..=hi`
/// (the ends alone where the range is below what an f64 step resolves).
fn round_steps(lo: f64, hi: f64) -> Vec<f64> {
    let top = (hi - lo).log10().floor() as i32;
    for exponent in (top - 2..=top).rev() {
        for mantissa in [5.0, 2.0, 1.0] {
            // Whole multiples of 10^exponent are exact where the exponent is >= 0; below,
            // dividing by 10^-exponent rounds as the labels print.
            let step = mantissa * 10f64.powi(exponent);
            let (first, last) = ((lo / step).ceil(), (hi / step).floor());
            if (2.0..=20.0).contains(&(last - first)) {
                let scale = 10f64.powi(-exponent.min(0));
                let ticks = (first as i64..=last as i64)
                    .map(|k| (k as f64 * mantissa * 10f64.powi(exponent.max(0))) / scale)
                    .collect();
                return ticks;
            }
        }
    }
    vec![lo, hi]
}

fn series_glyph(s: &Series, i: usize) -> Glyph {
    let color = s.color.unwrap_or_else(|| palette(i));
    match s.line {
        Line::Solid => Glyph::Line(color, s.markers.then_some(s.marker)),
        Line::Dashed => Glyph::Dashed(color),
        Line::None => Glyph::Marker(color, s.marker),
    }
}

/// Beyond this many points a line's markers merge into a smear: the line alone reads better.
pub const MAX_MARKED_POINTS: usize = 60;

fn draw_lines<X, Y>(
    root: &Root<'_>,
    title: &str,
    axes: &Axes,
    series: &[Series],
    x: X,
    y: Y,
) -> Drawn
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(typeset(title), (FONT, TITLE))
        .margin(10)
        .x_label_area_size(56)
        .y_label_area_size(78)
        .build_cartesian_2d(x, y)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(typeset(&axes.x.description()))
        .y_desc(typeset(&axes.y.description()))
        .x_label_formatter(&|v| axes.x.tick(*v))
        .y_label_formatter(&|v| axes.y.tick(*v))
        .x_labels(6)
        .y_labels(6)
        .axis_desc_style((FONT, LABEL))
        .label_style((FONT, TEXT))
        .light_line_style(RGBColor(243, 243, 243))
        .draw()
        .map_err(plot_err)?;
    for (i, s) in series.iter().enumerate() {
        let color = s.color.unwrap_or_else(|| palette(i));
        let style = stroke(color);
        let points = s.points.iter().copied();
        draw_error_bars(&mut chart, s, color)?;
        // With the key in its own strip, plotters' in-plot legend stays empty.
        let named = s.in_legend() && axes.legend != LegendPosition::Below;
        let label = typeset(&s.label);
        match s.line {
            Line::Solid => {
                let anno = chart
                    .draw_series(LineSeries::new(points.clone(), style))
                    .map_err(plot_err)?;
                if named {
                    anno.label(label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                }
            }
            Line::Dashed => {
                let anno = chart
                    .draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
                    .map_err(plot_err)?;
                if named {
                    anno.label(label).legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (8, 0)], style)
                            + PathElement::new(vec![(12, 0), (20, 0)], style)
                    });
                }
            }
            Line::None => {
                let (shape, offset) = (s.marker, s.offset);
                let anno =
                    chart
                        .draw_series(points.clone().map(|p| {
                            marker_element(p, shape, SCATTER_MARKER, color).shifted(offset)
                        }))
                        .map_err(plot_err)?;
                if named {
                    anno.label(label).legend(move |(x, y)| {
                        marker_element((x + 10, y), shape, SCATTER_MARKER, color)
                    });
                }
            }
        }
        if s.markers && s.line != Line::None && s.points.len() <= MAX_MARKED_POINTS {
            chart
                .draw_series(
                    points
                        .map(|p| marker_element(p, s.marker, LINE_MARKER, color).shifted(s.offset)),
                )
                .map_err(plot_err)?;
        }
    }
    if axes.legend == LegendPosition::Below {
        return Ok(());
    }
    draw_legend(&mut chart, axes.legend)
}

/// Half the width of an error bar's end caps, px.
const CAP: i32 = 4;

/// The series' intervals as error bars in its colour: a thin line across the interval with a
/// cap at each end.
fn draw_error_bars<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    s: &Series,
    color: Rgb,
) -> Drawn
where
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    let style = color.plotters().stroke_width(1);
    let along_x = s
        .x_intervals
        .iter()
        .zip(&s.points)
        .filter_map(|(i, &(_, y))| i.map(|(lo, hi)| ((lo, y), (hi, y), [(0, -CAP), (0, CAP)])));
    let along_y = s
        .y_intervals
        .iter()
        .zip(&s.points)
        .filter_map(|(i, &(x, _))| i.map(|(lo, hi)| ((x, lo), (x, hi), [(-CAP, 0), (CAP, 0)])));
    let (dx, dy) = s.offset;
    // A zero-width interval (a single run) has no bar to draw.
    for (from, to, cap) in along_x.chain(along_y).filter(|(from, to, _)| from != to) {
        // Drawn in pixels from `from`, so the bar moves with the series' offset.
        let (x0, y0) = chart.as_coord_spec().translate(&from);
        let (x1, y1) = chart.as_coord_spec().translate(&to);
        let bar = EmptyElement::at(from)
            + PathElement::new(vec![(dx, dy), (x1 - x0 + dx, y1 - y0 + dy)], style);
        chart.draw_series(std::iter::once(bar)).map_err(plot_err)?;
        for end in [from, to] {
            let shifted = cap.map(|(x, y)| (x + dx, y + dy)).to_vec();
            let capped = EmptyElement::at(end) + PathElement::new(shifted, style);
            chart
                .draw_series(std::iter::once(capped))
                .map_err(plot_err)?;
        }
    }
    Ok(())
}

pub(crate) fn draw_legend<'a, 'b: 'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: LegendPosition,
) -> Drawn
where
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position.plotters())
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, TEXT))
        .draw()
        .map_err(plot_err)
}
