//! Reusable charts, drawn with plotters as inline SVG: [`line_chart`] (lines and scatter, linear
//! or log axes), [`heat_map`] (a labelled matrix with a colour bar) and [`stacked_bar_chart`]
//! (horizontal bars split into parts). Every axis carries a label and a unit, every series a
//! legend entry, so a chart reads at a glance.

use plotters::coord::Shift;
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, SegmentValue, ValueFormatter};
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::error::{ReportError, Result};
use crate::numbers::{format_number, scientific};
use crate::typeset::typeset;

/// Pixel size of a chart's plot (a key below it adds to the height). The width is every
/// figure's: printed at one-column width ([`COLUMN_WIDTH_PT`]) a pixel is half a point, so
/// [`TEXT`] prints at [`MIN_TEXT_PT`].
pub const CHART_SIZE: (u32, u32) = (504, 360);
/// One column of a two-column paper, pt (3.5 in).
pub const COLUMN_WIDTH_PT: f64 = 252.0;
/// The smallest text a figure may print at one-column width, pt.
pub const MIN_TEXT_PT: f64 = 8.0;
/// Font of titles and labels: a generic family, so the report needs no font files.
pub(crate) const FONT: &str = "sans-serif";
/// plotters writes a font of size `s` as `font-size` `s / 1.24`.
const PLOTTERS_EM: f64 = 1.24;
/// Tick labels, keys, cell values: the smallest text, just above [`MIN_TEXT_PT`] at one
/// column (plotters draws some text at whole sizes, so this is one).
pub(crate) const TEXT: f64 = 20.0;
/// Axis descriptions.
pub(crate) const LABEL: f64 = TEXT + 1.0;
/// Chart titles.
pub(crate) const TITLE: f64 = TEXT + 3.0;

pub(crate) type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// plotters' errors carry the backend's type; charts only need their message.
pub(crate) type Drawn = std::result::Result<(), String>;

pub(crate) fn plot_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// An SVG document as text, ready to inline in HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Svg(pub(crate) String);

impl Svg {
    /// The SVG markup.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The size in pt of the figure's smallest text when the figure is printed at one-column
    /// width ([`COLUMN_WIDTH_PT`]); `None` for a figure without text or width.
    pub fn smallest_text_pt(&self) -> Option<f64> {
        let width = attribute_values(&self.0, "width").next()?;
        attribute_values(&self.0, "font-size")
            .map(|size| size * COLUMN_WIDTH_PT / width)
            .reduce(f64::min)
    }

    /// Takes the markup.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// Every numeric value of attribute `name` in `svg`, in order.
fn attribute_values(svg: &str, name: &str) -> std::vec::IntoIter<f64> {
    let key = format!(" {name}=\"");
    let values: Vec<f64> = svg
        .match_indices(&key)
        .filter_map(|(at, _)| {
            let rest = &svg[at + key.len()..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect();
    values.into_iter()
}

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub(crate) fn plotters(self) -> RGBColor {
        RGBColor(self.0, self.1, self.2)
    }

    /// Whether dark text reads better than light text on this colour.
    pub(crate) fn is_light(self) -> bool {
        let luma =
            0.299 * f64::from(self.0) + 0.587 * f64::from(self.1) + 0.114 * f64::from(self.2);
        luma > 140.0
    }
}

/// The Okabe–Ito palette: eight colours that colour-blind readers can tell apart.
pub const PALETTE: [Rgb; 8] = [
    Rgb(0, 114, 178),
    Rgb(230, 159, 0),
    Rgb(0, 158, 115),
    Rgb(213, 94, 0),
    Rgb(86, 180, 233),
    Rgb(204, 121, 167),
    Rgb(240, 228, 66),
    Rgb(0, 0, 0),
];

/// The `i`-th colour of [`PALETTE`], cycling.
pub fn palette(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

/// The colour of `value` on the viridis scale between `lo` and `hi` (perceptually uniform,
/// readable in grey and by colour-blind readers).
pub fn viridis(value: f64, lo: f64, hi: f64) -> Rgb {
    let t = if hi > lo {
        ((value - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let c = ViridisRGB::get_color_normalized(t, 0.0, 1.0);
    Rgb(c.0, c.1, c.2)
}

/// Linear or logarithmic axis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Evenly spaced powers of ten; every value must be > 0.
    Log,
}

/// An axis: what it shows, in which unit, on which scale, over which range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Axis {
    /// What the axis shows, e.g. `problem size N`.
    pub label: String,
    /// Unit, e.g. `s`; `None` for counts and ratios.
    pub unit: Option<String>,
    /// Linear or log.
    pub scale: Scale,
    /// Fixed range; `None` fits the data.
    pub range: Option<(f64, f64)>,
    /// Counts (supersteps, nodes): ticks between whole numbers get no label.
    pub integers: bool,
}

impl Axis {
    /// A linear axis fitted to the data.
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            ..Self::default()
        }
    }

    /// Sets the unit.
    pub fn unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = Some(unit.into());
        self
    }

    /// Makes the axis logarithmic.
    pub fn log(mut self) -> Self {
        self.scale = Scale::Log;
        self
    }

    /// Fixes the range.
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }

    /// Marks the axis as counting whole things (supersteps, nodes).
    pub fn integers(mut self) -> Self {
        self.integers = true;
        self
    }

    /// A tick label: three significant digits (scientific from a million), none between whole
    /// numbers on a count axis.
    fn tick(&self, v: f64) -> String {
        if self.integers && (v - v.round()).abs() > 1e-9 {
            String::new()
        } else if v.abs() >= 1e6 {
            // 1e7 reads at a glance; 10000000 needs counting.
            scientific(v, 3)
        } else {
            format_number(v, 3)
        }
    }

    /// `label (unit)`, as printed beside the axis.
    pub fn description(&self) -> String {
        match &self.unit {
            Some(unit) => format!("{} ({unit})", self.label),
            None => self.label.clone(),
        }
    }
}

/// Where the legend sits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LegendPosition {
    /// In a strip below the plot, where it hides no data and leaves the plot the figure's
    /// whole width (default).
    #[default]
    Below,
    /// Inside the plot, top right.
    UpperRight,
    /// Top left.
    UpperLeft,
    /// Bottom right.
    LowerRight,
    /// Bottom left.
    LowerLeft,
}

impl LegendPosition {
    fn plotters(self) -> SeriesLabelPosition {
        match self {
            Self::UpperRight | Self::Below => SeriesLabelPosition::UpperRight,
            Self::UpperLeft => SeriesLabelPosition::UpperLeft,
            Self::LowerRight => SeriesLabelPosition::LowerRight,
            Self::LowerLeft => SeriesLabelPosition::LowerLeft,
        }
    }
}

/// The two axes of a chart and where its legend goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Axes {
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Legend placement.
    pub legend: LegendPosition,
}

impl Axes {
    /// Axes with the legend below the plot.
    pub fn new(x: Axis, y: Axis) -> Self {
        Self {
            x,
            y,
            legend: LegendPosition::default(),
        }
    }

    /// Moves the legend.
    pub fn legend(mut self, position: LegendPosition) -> Self {
        self.legend = position;
        self
    }
}

/// How a series' points are joined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Line {
    /// A solid line (measurements, fits).
    #[default]
    Solid,
    /// A dashed line (predictions, targets, references).
    Dashed,
    /// No line: a scatter of markers.
    None,
}

/// The shape of a series' markers. Distinct shapes tell apart series that share a colour or
/// sit on top of each other (e.g. the sizes three approaches found for one configuration):
/// the hollow ones and the cross leave what lies under them visible.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Marker {
    /// A filled disc (default).
    #[default]
    Circle,
    /// A hollow circle.
    Ring,
    /// A hollow square.
    Square,
    /// A filled triangle, point up.
    Triangle,
    /// A diagonal cross.
    Cross,
}

/// A named sequence of `(x, y)` points, each with an optional 95% interval along x or y drawn
/// as an error bar. A series with an empty label or no point gets no legend entry (e.g. all
/// but one of a group of lines of one colour).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// How points are joined.
    pub line: Line,
    /// Whether each point gets a marker (lines of more than [`MAX_MARKED_POINTS`] get none).
    pub markers: bool,
    /// Colour; `None` takes the palette colour of the series' position.
    pub color: Option<Rgb>,
    /// Shape of the markers.
    pub marker: Marker,
    /// Per point (in order; missing or `None` for none), the interval `(lo, hi)` of its x.
    pub x_intervals: Vec<Option<(f64, f64)>>,
    /// Per point, the interval `(lo, hi)` of its y.
    pub y_intervals: Vec<Option<(f64, f64)>>,
    /// Pixels `(right, down)` the markers and error bars are drawn off their place (the
    /// values are unchanged), so series whose points coincide stay apart.
    pub offset: (i32, i32),
}

impl Series {
    /// A solid line with markers.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            points,
            line: Line::Solid,
            markers: true,
            color: None,
            marker: Marker::Circle,
            x_intervals: Vec::new(),
            y_intervals: Vec::new(),
            offset: (0, 0),
        }
    }

    /// Markers only.
    pub fn scatter(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            line: Line::None,
            ..Self::line(label, points)
        }
    }

    /// A dashed line without markers (a target or a prediction).
    pub fn dashed(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            line: Line::Dashed,
            markers: false,
            ..Self::line(label, points)
        }
    }

    /// A horizontal reference line at `y` from `x0` to `x1` (e.g. the target `E_s`).
    pub fn horizontal(label: impl Into<String>, y: f64, x0: f64, x1: f64) -> Self {
        Self::dashed(label, vec![(x0, y), (x1, y)])
    }

    /// Sets the colour.
    pub fn color(mut self, color: Rgb) -> Self {
        self.color = Some(color);
        self
    }

    /// Turns markers on or off.
    pub fn markers(mut self, on: bool) -> Self {
        self.markers = on;
        self
    }

    /// Sets the markers' shape.
    pub fn shape(mut self, marker: Marker) -> Self {
        self.marker = marker;
        self
    }

    /// Draws the markers and error bars `right` and `down` pixels off their place: where
    /// several series mark the same point (three approaches finding one size), each is
    /// shifted its own way so none hides another.
    pub fn offset(mut self, right: i32, down: i32) -> Self {
        self.offset = (right, down);
        self
    }

    /// Sets each point's x interval (error bars along x), in the order of the points.
    pub fn x_intervals(mut self, intervals: Vec<Option<(f64, f64)>>) -> Self {
        self.x_intervals = intervals;
        self
    }

    /// Sets each point's y interval (error bars along y), in the order of the points.
    pub fn y_intervals(mut self, intervals: Vec<Option<(f64, f64)>>) -> Self {
        self.y_intervals = intervals;
        self
    }

    /// Every x the chart must show: the points' and their intervals' ends.
    fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let ends = self
            .x_intervals
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]);
        self.points.iter().map(|p| p.0).chain(ends)
    }

    /// Every y the chart must show.
    fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        let ends = self
            .y_intervals
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]);
        self.points.iter().map(|p| p.1).chain(ends)
    }

    /// Whether the series gets a legend entry: it has a name and something drawn.
    fn in_legend(&self) -> bool {
        !self.label.is_empty() && !self.points.is_empty()
    }
}

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
fn log_ticks(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
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

/// Marker radius of a scatter series, px.
const SCATTER_MARKER: i32 = 4;
/// Marker radius on a line, px: smaller, so the line stays visible between markers.
const LINE_MARKER: i32 = 3;

/// A marker of `shape` centred on `at`, `r` px from its centre to its edge; hollow shapes are
/// drawn a little larger so one drawn over a filled disc rings it. (An element of its own:
/// plotters' boxed elements need a `'static` backend, which the SVG string backend is not.)
fn marker_element<C>(at: C, shape: Marker, r: i32, color: Rgb) -> MarkerElement<C> {
    MarkerElement {
        at,
        shape,
        r,
        color,
        offset: (0, 0),
    }
}

struct MarkerElement<C> {
    at: C,
    shape: Marker,
    r: i32,
    color: Rgb,
    /// Pixels right and down of `at`.
    offset: (i32, i32),
}

impl<C> MarkerElement<C> {
    fn shifted(mut self, offset: (i32, i32)) -> Self {
        self.offset = offset;
        self
    }
}

impl<'a, C> PointCollection<'a, C> for &'a MarkerElement<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> std::iter::Once<&'a C> {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for MarkerElement<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> std::result::Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let (x, y) = (x + self.offset.0, y + self.offset.1);
        let fill = self.color.plotters().filled();
        let line = stroke(self.color);
        let (r, big) = (self.r, self.r + 2);
        match self.shape {
            Marker::Circle => backend.draw_circle((x, y), r as u32, &fill, true),
            Marker::Ring => backend.draw_circle((x, y), big as u32, &line, false),
            Marker::Square => {
                let h = big - 1;
                backend.draw_rect((x - h, y - h), (x + h, y + h), &line, false)
            }
            Marker::Triangle => {
                let h = r + 1;
                backend.fill_polygon([(x, y - h), (x + h, y + h - 1), (x - h, y + h - 1)], &fill)
            }
            Marker::Cross => {
                backend.draw_line((x - big, y - big), (x + big, y + big), &line)?;
                backend.draw_line((x - big, y + big), (x + big, y - big), &line)
            }
        }
    }
}

/// Draws into an SVG string of `size` pixels on a white background.
pub(crate) fn render(
    title: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Root<'_>) -> Drawn,
) -> Result<Svg> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let failed = |reason: String| ReportError::Plot {
            chart: title.to_owned(),
            reason,
        };
        root.fill(&WHITE).map_err(plot_err).map_err(failed)?;
        draw(&root).map_err(failed)?;
        root.present().map_err(plot_err).map_err(failed)?;
    }
    Ok(Svg(powers_of_ten(&svg)))
}

/// `svg` with every text that is a number in e-notation (`1e10`, `2.5e-7`: tick labels from
/// a million, tiny cell values) printed as a paper prints it, `10` with the exponent raised
/// (`2.5×10⁻⁷` as markup). The raised exponent keeps the text's size, so it stays legible.
fn powers_of_ten(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    // plotters writes a text as `<text ...>\nCONTENT\n</text>`.
    while let Some(start) = rest.find("<text") {
        let Some(open) = rest[start..].find(">\n").map(|at| start + at + 2) else {
            break;
        };
        let Some(end) = rest[open..].find("\n</text>").map(|at| open + at) else {
            break;
        };
        out.push_str(&rest[..open]);
        let content = &rest[open..end];
        out.push_str(&raised_power(content).unwrap_or_else(|| content.to_owned()));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `1e10` -> `10<tspan ...>10</tspan>`, `-2.5e-7` -> `-2.5×10<tspan ...>−7</tspan>`;
/// `None` for any other text.
fn raised_power(text: &str) -> Option<String> {
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    mantissa.parse::<f64>().ok()?;
    let factor = match mantissa {
        "1" => String::new(),
        "-1" => "−".to_owned(),
        m => format!("{}×", m.replacen('-', "−", 1)),
    };
    let exponent = exponent.to_string().replacen('-', "−", 1);
    Some(format!(
        "{factor}10<tspan dy=\"-0.45em\">{exponent}</tspan>"
    ))
}

fn check_points(title: &str, axes: &Axes, series: &[Series]) -> Result<()> {
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(ReportError::NoData {
            what: format!("chart \"{title}\""),
            hint: "give at least one series with a point",
        });
    }
    for s in series {
        for &(x, y) in &s.points {
            check_value(title, &s.label, &axes.x, x)?;
            check_value(title, &s.label, &axes.y, y)?;
        }
        check_intervals(title, s, &axes.x, &s.x_intervals)?;
        check_intervals(title, s, &axes.y, &s.y_intervals)?;
    }
    Ok(())
}

fn check_intervals(
    title: &str,
    s: &Series,
    axis: &Axis,
    intervals: &[Option<(f64, f64)>],
) -> Result<()> {
    if intervals.len() > s.points.len() {
        return Err(ReportError::BadValue(format!(
            "chart \"{title}\", series \"{}\": {} intervals of {} for {} points; give at most one per point",
            s.label,
            intervals.len(),
            axis.label,
            s.points.len()
        )));
    }
    for &(lo, hi) in intervals.iter().flatten() {
        check_value(title, &s.label, axis, lo)?;
        check_value(title, &s.label, axis, hi)?;
        if lo > hi {
            return Err(ReportError::BadValue(format!(
                "chart \"{title}\", series \"{}\": interval of {} from {lo} to {hi} is reversed; give (low, high)",
                s.label, axis.label
            )));
        }
    }
    Ok(())
}

fn check_value(title: &str, series: &str, axis: &Axis, v: f64) -> Result<()> {
    if !v.is_finite() {
        return Err(ReportError::BadValue(format!(
            "chart \"{title}\", series \"{series}\": {} = {v} is not a finite number; drop the point",
            axis.label
        )));
    }
    if axis.scale == Scale::Log && v <= 0.0 {
        return Err(ReportError::BadValue(format!(
            "chart \"{title}\", series \"{series}\": {} = {v} cannot be shown on a log axis; use a linear axis or drop the point",
            axis.label
        )));
    }
    Ok(())
}

/// The axis' fixed range, or the data's with a margin so no point sits on the frame. Fails
/// on a range plotters cannot divide into ticks (a span beyond f64, or below it).
pub(crate) fn data_range(
    title: &str,
    axis: &Axis,
    values: impl Iterator<Item = f64>,
) -> Result<(f64, f64)> {
    let range = match axis.range.filter(|(lo, hi)| hi > lo) {
        Some(fixed) => fixed,
        None => padded_range(axis.scale, values),
    };
    check_range(title, &axis.label, axis.scale, range)
}

/// `range` if plotters can divide it into ticks, else an error naming the chart and axis.
pub(crate) fn check_range(
    title: &str,
    axis: &str,
    scale: Scale,
    range: (f64, f64),
) -> Result<(f64, f64)> {
    if drawable_range(scale, range) {
        return Ok(range);
    }
    Err(ReportError::BadValue(format!(
        "chart \"{title}\": {axis} spans {:e} to {:e}, beyond what an axis can divide into ticks; {}",
        range.0,
        range.1,
        match scale {
            Scale::Linear => "use a log axis or drop the outlying values",
            Scale::Log => "drop the outlying values",
        }
    )))
}

fn padded_range(scale: Scale, values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return if scale == Scale::Log {
            (1.0, 10.0)
        } else {
            (0.0, 1.0)
        };
    }
    match scale {
        Scale::Log => {
            let pad = if hi > lo { (hi / lo).powf(0.05) } else { 2.0 };
            (lo / pad, hi * pad)
        }
        Scale::Linear => {
            // A span too small to tick (below 1e-12 of the values, or subnormal) is a flat line.
            let magnitude = lo.abs().max(hi.abs());
            let span = if hi - lo > (magnitude * 1e-12).max(1e-290) {
                hi - lo
            } else {
                magnitude.max(1.0)
            };
            (lo - 0.05 * span, hi + 0.05 * span)
        }
    }
}

/// Whether plotters can tick `(lo, hi)`: its tick search divides the span by powers of ten,
/// which overflow beyond about 1e300 and underflow below about 1e-300.
fn drawable_range(scale: Scale, (lo, hi): (f64, f64)) -> bool {
    const LIMIT: f64 = 1e300;
    match scale {
        Scale::Linear => {
            let span = hi - lo;
            span.is_finite() && span > 0.0 && span < LIMIT && span > lo.abs().max(hi.abs()) * 1e-13
        }
        Scale::Log => lo > 1.0 / LIMIT && hi < LIMIT && hi > lo,
    }
}

/// Line style of a series.
fn stroke(color: Rgb) -> ShapeStyle {
    ShapeStyle {
        color: color.plotters().to_rgba(),
        filled: false,
        stroke_width: 2,
    }
}

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

/// A legend entry's symbol.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Glyph {
    /// A filled square (bars, slices).
    Box(Rgb),
    /// A solid line, with a marker or not.
    Line(Rgb, Option<Marker>),
    /// A dashed line.
    Dashed(Rgb),
    /// A marker alone.
    Marker(Rgb, Marker),
    /// A thin slanted line (messages).
    Thin(Rgb),
}

/// Height of a row of a key, px.
const KEY_ROW: i32 = 24;
/// Space for an entry's symbol and the gap after its label, px.
const KEY_ENTRY_EXTRA: i32 = 46;

/// Where each entry of a key sits in a strip [`CHART_SIZE`]`.0` px wide: left to right,
/// wrapping to a new row when the next one would not fit.
fn key_positions<S: AsRef<str>>(entries: &[(S, Glyph)]) -> Vec<(i32, i32)> {
    // Sans-serif letters average a little over half their font size in width.
    let char_width = TEXT / PLOTTERS_EM * 0.6;
    let (left, width) = (12, CHART_SIZE.0 as i32 - 12);
    let (mut x, mut row) = (left, 0);
    entries
        .iter()
        .map(|(label, _)| {
            let w = KEY_ENTRY_EXTRA + (label.as_ref().chars().count() as f64 * char_width) as i32;
            if x > left && x + w > width {
                (x, row) = (left, row + 1);
            }
            let at = (x, KEY_ROW / 2 + 4 + KEY_ROW * row);
            x += w;
            at
        })
        .collect()
}

/// The height of the key of `entries` below a plot, px (0 without entries).
pub(crate) fn key_height<S: AsRef<str>>(entries: &[(S, Glyph)]) -> u32 {
    key_positions(entries)
        .last()
        .map_or(0, |&(_, y)| (y + KEY_ROW / 2 + 6) as u32)
}

/// A legend in its own strip below the plot, where it hides nothing; labels are typeset.
pub(crate) fn draw_key<S: AsRef<str>>(area: &Root<'_>, entries: &[(S, Glyph)]) -> Drawn {
    let font = (FONT, TEXT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for ((label, glyph), (x, y)) in entries.iter().zip(key_positions(entries)) {
        draw_glyph(area, *glyph, x, y).map_err(plot_err)?;
        let text = typeset(label.as_ref());
        area.draw(&Text::new(text, (x + 30, y), font.clone()))
            .map_err(plot_err)?;
    }
    Ok(())
}

fn draw_glyph(
    area: &Root<'_>,
    glyph: Glyph,
    x: i32,
    y: i32,
) -> std::result::Result<(), impl std::fmt::Display> {
    let area = area.clone().shrink((x, 0), area.dim_in_pixel());
    let area = &area;
    let (x0, x1) = (4, 26);
    match glyph {
        Glyph::Box(c) => area.draw(&Rectangle::new(
            [(8, y - 6), (22, y + 6)],
            c.plotters().filled(),
        )),
        Glyph::Line(c, marker) => {
            area.draw(&PathElement::new(vec![(x0, y), (x1, y)], stroke(c)))?;
            if let Some(shape) = marker {
                area.draw(&marker_element((15, y), shape, LINE_MARKER, c))?;
            }
            Ok(())
        }
        Glyph::Dashed(c) => {
            area.draw(&PathElement::new(vec![(x0, y), (x0 + 8, y)], stroke(c)))?;
            area.draw(&PathElement::new(vec![(x1 - 8, y), (x1, y)], stroke(c)))
        }
        Glyph::Marker(c, shape) => area.draw(&marker_element((15, y), shape, SCATTER_MARKER, c)),
        Glyph::Thin(c) => area.draw(&PathElement::new(
            vec![(8, y + 6), (22, y - 6)],
            c.plotters().stroke_width(1),
        )),
    }
}

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
/// each value takes [`format_number`]'s significant digits.
fn cell_formatter(map: &HeatMap) -> impl Fn(f64) -> String {
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
        _ => format_number(v, 2),
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
fn segment_label(v: &SegmentValue<usize>, labels: &[String], from_top: bool) -> String {
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
fn snap_to_zero(v: f64, span: f64) -> f64 {
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
        .y_label_formatter(&|v| format_number(snap_to_zero(*v, hi_axis - lo_axis), BAR_DIGITS))
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
            .x_label_formatter(&|v| format_number(*v, 3))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_map_cells_share_the_decimals_of_their_largest_value() {
        let map = |values: Vec<f64>| HeatMap {
            values: vec![values.into_iter().map(Some).collect()],
            ..HeatMap::default()
        };
        let texts = |values: Vec<f64>| {
            let map = map(values.clone());
            let text = cell_formatter(&map);
            values.into_iter().map(text).collect::<Vec<_>>()
        };
        // A psi difference map: small values no longer than the large ones.
        assert_eq!(
            texts(vec![-0.055, -0.0021, 0.108, -1e-18]),
            ["-0.055", "-0.002", "0.108", "0.000"]
        );
        // psi with its diagonal: 0.014 keeps its digits beside 1.
        assert_eq!(texts(vec![1.0, 0.0142, 0.41]), ["1.000", "0.014", "0.410"]);
        assert_eq!(texts(vec![480.0, 3200.0]), ["480", "3200"]);
        assert_eq!(texts(vec![-123.45, 3200.5]), ["-123.5", "3200.5"]);
        // Beyond fixed notation, each value keeps its own digits.
        assert_eq!(texts(vec![2.5e-5, 1e-4]), ["2.5e-5", "1e-4"]);
    }

    #[test]
    fn log_ticks_label_doublings_decades_and_fractions() {
        assert_eq!(log_ticks(1.7, 37.0, &[]), [2.0, 4.0, 8.0, 16.0, 32.0]);
        assert_eq!(log_ticks(0.02, 1.05, &[]), [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]);
        assert_eq!(log_ticks(8e5, 4e10, &[]), [1e6, 1e7, 1e8, 1e9, 1e10]);
        let wide = log_ticks(1e-10, 1e15, &[]);
        assert!(wide.len() <= 13 && wide.contains(&1.0), "{wide:?}");
        assert_eq!(snap_to_zero(6.9e-18, 0.1), 0.0);
        assert_eq!(snap_to_zero(-0.02, 0.1), -0.02);
        // Too narrow for 1-2-5 marks or doublings: round steps.
        assert_eq!(log_ticks(26.0, 42.0, &[]), [30.0, 35.0, 40.0]);
        assert_eq!(log_ticks(0.31, 0.38, &[]), [0.32, 0.34, 0.36, 0.38]);
        assert!(log_ticks(0.0, 1.0, &[]).is_empty());
        assert!(log_ticks(5.0, 1.0, &[]).is_empty());
    }

    #[test]
    fn log_tick_labels_print_powers_of_ten_with_raised_exponents() {
        let axes = Axes::new(Axis::new("N").log(), Axis::new("y"));
        let series = [Series::line("s", vec![(1e6, 1.0), (1e10, 2.0)])];
        let svg = line_chart("c", &axes, &series).unwrap().into_string();
        assert!(
            svg.contains("\n10<tspan dy=\"-0.45em\">10</tspan>\n"),
            "1e10 reads 10 to the 10: {svg}"
        );
        assert!(
            !svg.contains("\n1e10\n") && !svg.contains("\n1e7\n"),
            "{svg}"
        );
        assert_eq!(
            raised_power("-2.5e-7").unwrap(),
            "−2.5×10<tspan dy=\"-0.45em\">−7</tspan>"
        );
        for plain in ["0.5", "1200", "e5", "1e", "node"] {
            assert_eq!(raised_power(plain), None, "{plain}");
        }
    }

    #[test]
    fn an_offset_moves_markers_and_error_bars_apart_but_not_the_values() {
        let axes = Axes::new(
            Axis::new("x").range(0.0, 2.0),
            Axis::new("y").range(0.0, 2.0),
        );
        let at = |offset: (i32, i32)| {
            let s = Series::scatter("s", vec![(1.0, 1.0)])
                .x_intervals(vec![Some((0.5, 1.5))])
                .offset(offset.0, offset.1);
            line_chart("c", &axes, &[s]).unwrap().into_string()
        };
        let centre = |svg: &str| {
            let circle = &svg[svg.find("<circle").unwrap()..];
            let value = |name: &str| -> i32 {
                let rest = &circle[circle.find(&format!(" {name}=\"")).unwrap() + name.len() + 3..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            };
            (value("cx"), value("cy"))
        };
        let (plain, moved) = (at((0, 0)), at((3, 9)));
        let ((x0, y0), (x1, y1)) = (centre(&plain), centre(&moved));
        assert_eq!((x1 - x0, y1 - y0), (3, 9));
        // The error bar moves with its marker.
        let bar = |svg: &str| -> Vec<i32> {
            let line = &svg[svg
                .find("stroke=\"#0072B2\" stroke-width=\"1\" points=\"")
                .unwrap()..];
            let points = &line[line.find("points=\"").unwrap() + 8..];
            points[..points.find('"').unwrap()]
                .split([',', ' '])
                .filter(|v| !v.is_empty())
                .map(|v| v.parse().unwrap())
                .collect()
        };
        let shifted: Vec<i32> = bar(&plain)
            .iter()
            .zip([3, 9, 3, 9])
            .map(|(v, d)| v + d)
            .collect();
        assert_eq!(bar(&moved), shifted);
    }

    #[test]
    fn every_marker_shape_draws_in_chart_and_legend() {
        let series: Vec<Series> = [
            Marker::Circle,
            Marker::Ring,
            Marker::Square,
            Marker::Triangle,
            Marker::Cross,
        ]
        .into_iter()
        .enumerate()
        .map(|(i, m)| Series::scatter(format!("{m:?}"), vec![(1.0 + i as f64, 1.0)]).shape(m))
        .collect();
        let svg = line_chart(
            "markers",
            &Axes::new(Axis::new("x"), Axis::new("y")),
            &series,
        )
        .unwrap()
        .into_string();
        assert!(svg.contains("<circle") && svg.contains("<polygon") && svg.contains("<rect"));
        assert!(svg.contains("Cross"), "the legend names every series");
    }

    fn axes() -> Axes {
        Axes::new(
            Axis::new("problem size N").log(),
            Axis::new("time T").unit("s"),
        )
    }

    #[test]
    fn line_charts_label_axes_with_units_and_name_every_series() {
        let series = [
            Series::line("measured", vec![(10.0, 1.0), (100.0, 3.0)]),
            Series::dashed("predicted", vec![(10.0, 1.2), (100.0, 2.5)]),
            Series::scatter("held out", vec![(1000.0, 9.0)]),
            Series::line("", vec![(10.0, 2.0), (100.0, 4.0)]),
        ];
        let svg = line_chart("T versus N", &axes(), &series).unwrap();
        let text = svg.as_str();
        assert!(text.starts_with("<svg"));
        for label in [
            "T versus N",
            "problem size N",
            "time T (s)",
            "measured",
            "predicted",
            "held out",
        ] {
            assert!(text.contains(label), "{label} missing");
        }
    }

    #[test]
    fn bad_points_are_refused_with_what_to_do() {
        let zero = [Series::line("a", vec![(0.0, 1.0)])];
        let err = line_chart("c", &axes(), &zero).unwrap_err().to_string();
        assert!(err.contains("cannot be shown on a log axis"), "{err}");
        let nan = [Series::line("a", vec![(1.0, f64::NAN)])];
        assert!(
            line_chart("c", &axes(), &nan)
                .unwrap_err()
                .to_string()
                .contains("not a finite number")
        );
        let err = line_chart("c", &axes(), &[]).unwrap_err().to_string();
        assert!(err.contains("has no data"), "{err}");
    }

    #[test]
    fn a_flat_series_still_gets_a_range() {
        let flat = [Series::line("a", vec![(1.0, 5.0), (2.0, 5.0)])];
        let linear = Axes::new(Axis::new("x"), Axis::new("y"));
        assert!(line_chart("c", &linear, &flat).is_ok());
        let single = [Series::scatter("a", vec![(3.0, 3.0)])];
        assert!(line_chart("c", &axes(), &single).is_ok());
    }

    fn psi() -> HeatMap {
        HeatMap {
            title: "psi".into(),
            x: Axis::new("C'"),
            y: Axis::new("C"),
            column_labels: vec!["2".into(), "4".into()],
            row_labels: vec!["2".into(), "4".into()],
            values: vec![vec![None, Some(0.9)], vec![None, None]],
            value_label: "psi".into(),
            value_range: Some((0.0, 1.0)),
            colors: ColorScale::Viridis,
        }
    }

    #[test]
    fn heat_maps_print_their_values_and_check_their_shape() {
        assert!(heat_map(&psi()).unwrap().as_str().contains("\n0.900\n"));
        let mut ragged = psi();
        ragged.values[1].pop();
        assert!(
            heat_map(&ragged)
                .unwrap_err()
                .to_string()
                .contains("must be 2 rows of 2")
        );
        let mut blank = psi();
        blank.values[0][1] = None;
        assert!(
            heat_map(&blank)
                .unwrap_err()
                .to_string()
                .contains("has no data")
        );
    }

    fn gallery() -> Vec<Svg> {
        let series = [
            Series::line("measured E_s", vec![(10.0, 1.0), (100.0, 3.0)]),
            Series::dashed("predicted", vec![(10.0, 1.2), (100.0, 2.5)]),
        ];
        let bars = BarStack {
            label: "compute".into(),
            values: vec![1.0, 2.0],
            color: None,
        };
        vec![
            line_chart("T versus N", &axes(), &series).unwrap(),
            heat_map(&psi()).unwrap(),
            stacked_bar_chart(
                "t",
                "node",
                &["a".into(), "b".into()],
                &[bars],
                &Axis::new("time").unit("s"),
            )
            .unwrap(),
        ]
    }

    #[test]
    fn every_text_prints_at_8_pt_or_more_at_one_column_width() {
        for svg in gallery() {
            let smallest = svg.smallest_text_pt().unwrap();
            assert!(
                smallest >= MIN_TEXT_PT,
                "{smallest} pt in {}",
                &svg.as_str()[..200]
            );
        }
        // The measure itself: 13 px text on a 760 px figure prints at 3.5 pt.
        let small =
            Svg("<svg width=\"760\" height=\"1\"><text font-size=\"10.5\">x</text></svg>".into());
        assert!((small.smallest_text_pt().unwrap() - 3.48).abs() < 0.01);
    }

    #[test]
    fn symbols_are_typeset_in_titles_axes_keys_and_cells() {
        let axes = Axes::new(
            Axis::new("configuration C_i"),
            Axis::new("speed-efficiency E_s"),
        );
        let series = [Series::line("psi from C'_1", vec![(1.0, 0.5), (2.0, 0.4)])];
        let svg = line_chart("E_s and psi", &axes, &series)
            .unwrap()
            .into_string();
        for typeset in [
            "Eₛ and ψ",
            "configuration Cᵢ",
            "speed-efficiency Eₛ",
            "ψ from C′₁",
        ] {
            assert!(svg.contains(typeset), "{typeset} missing");
        }
        assert!(!svg.contains("E_s"), "an untypeset symbol is left");
        assert!(heat_map(&psi()).unwrap().as_str().contains("\nψ\n"));
    }

    #[test]
    fn the_key_lists_only_series_that_are_drawn() {
        let series = [
            Series::line("drawn", vec![(1.0, 1.0), (2.0, 2.0)]),
            Series::scatter("nothing to draw", Vec::new()),
        ];
        let svg = line_chart("c", &Axes::default(), &series)
            .unwrap()
            .into_string();
        assert!(svg.contains("drawn"));
        assert!(
            !svg.contains("nothing to draw"),
            "a series without points has no key entry"
        );
        let bars = |label: &str, values: Vec<f64>| BarStack {
            label: label.into(),
            values,
            color: None,
        };
        let svg = stacked_bar_chart(
            "t",
            "node",
            &["a".into()],
            &[bars("compute", vec![1.0]), bars("barrier", vec![0.0])],
            &Axis::new("time"),
        )
        .unwrap()
        .into_string();
        assert!(
            svg.contains("compute") && !svg.contains("barrier"),
            "an empty part has no key entry"
        );
    }

    #[test]
    fn intervals_draw_as_error_bars_and_widen_the_range() {
        // Fixed ranges: the same ticks with and without the bars.
        let fixed = Axes::new(
            Axis::new("x").range(0.0, 3.0),
            Axis::new("y").range(0.0, 10.0),
        );
        let plain = Series::scatter("s", vec![(1.0, 1.0), (2.0, 2.0)]);
        let lines = |svg: &Svg| svg.as_str().matches("<polyline").count();
        let without = line_chart("c", &fixed, std::slice::from_ref(&plain)).unwrap();
        let with = plain
            .clone()
            .y_intervals(vec![Some((0.5, 9.0)), None])
            .x_intervals(vec![None, Some((1.5, 2.5))]);
        let drawn = line_chart("c", &fixed, std::slice::from_ref(&with)).unwrap();
        // Each bar: its line and a cap at either end.
        assert_eq!(lines(&drawn), lines(&without) + 6);
        let axes = Axes::new(Axis::new("x"), Axis::new("y"));
        let fitted = line_chart("c", &axes, &[with]).unwrap();
        assert!(
            fitted.as_str().contains("\n8\n"),
            "the y axis reaches the interval's top"
        );
        let reversed = plain.clone().y_intervals(vec![Some((2.0, 1.0))]);
        let err = line_chart("c", &axes, &[reversed]).unwrap_err().to_string();
        assert!(err.contains("is reversed; give (low, high)"), "{err}");
        let extra = plain.y_intervals(vec![None, None, None]);
        let err = line_chart("c", &axes, &[extra]).unwrap_err().to_string();
        assert!(err.contains("3 intervals of y for 2 points"), "{err}");
    }

    #[test]
    fn extreme_ranges_draw_or_say_what_to_do_without_overflow() {
        let linear = Axes::new(Axis::new("x"), Axis::new("y"));
        let log = Axes::new(Axis::new("x"), Axis::new("y").log());
        // Spans plotters' tick search cannot divide: they overflow or never end.
        for (axes, ys) in [
            (&linear, [-1e308, 1e308]),
            (&linear, [0.0, f64::MAX]),
            (&log, [1e-320, 1.0]),
            (&log, [1.0, 1e305]),
        ] {
            let series = [Series::scatter("s", vec![(1.0, ys[0]), (2.0, ys[1])])];
            let err = line_chart("c", axes, &series).unwrap_err().to_string();
            assert!(
                err.contains("beyond what an axis can divide into ticks"),
                "{ys:?}: {err}"
            );
        }
        // Spans too small to tick are drawn as a flat line.
        for ys in [[0.0, 5e-324], [1e15, 1e15 + 0.125], [1e-300, 1e-300]] {
            let series = [Series::scatter("s", vec![(1.0, ys[0]), (2.0, ys[1])])];
            assert!(line_chart("c", &linear, &series).is_ok(), "{ys:?}");
        }
        let huge = [BarStack {
            label: "compute".into(),
            values: vec![f64::MAX],
            color: None,
        }];
        let err = stacked_bar_chart("t", "node", &["a".into()], &huge, &Axis::new("time"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("beyond what an axis can divide into ticks"),
            "{err}"
        );
    }

    #[test]
    fn differences_colour_white_at_zero_and_apart_either_side() {
        assert_eq!(diverging(0.0, 1.0), Rgb(255, 255, 255));
        assert_eq!(diverging(-1.0, 1.0), PALETTE[0]);
        assert_eq!(diverging(2.0, 1.0), PALETTE[3]);
        let mut map = psi();
        map.values = vec![vec![None, Some(-0.02)], vec![None, None]];
        map.value_range = None;
        map.colors = ColorScale::Diverging;
        let svg = heat_map(&map).unwrap().into_string();
        assert!(
            svg.contains("\n-0.02\n") && svg.contains("\n0.02\n"),
            "the colour bar runs from -0.02 to 0.02"
        );
    }

    #[test]
    fn stacked_bars_need_one_value_per_category() {
        let stack = |values: Vec<f64>| BarStack {
            label: "compute".into(),
            values,
            color: None,
        };
        let cats = vec!["a".to_string(), "b".to_string()];
        let axis = Axis::new("time").unit("s");
        assert!(stacked_bar_chart("t", "node", &cats, &[stack(vec![1.0, 2.0])], &axis).is_ok());
        let err = stacked_bar_chart("t", "node", &cats, &[stack(vec![1.0])], &axis).unwrap_err();
        assert!(err.to_string().contains("1 values for 2 categories"));
        let err =
            stacked_bar_chart("t", "node", &cats, &[stack(vec![1.0, -1.0])], &axis).unwrap_err();
        assert!(err.to_string().contains(">= 0"));
    }
}
