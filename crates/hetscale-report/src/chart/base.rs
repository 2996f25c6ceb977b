//! What every chart shares: sizes and text, the SVG it makes, colours, axes, series and their
//! checks, and rendering with a key.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{ReportError, Result};
use hetscale_model::numbers::{scientific, significant};
/// Pixel size of a chart's plot (a key below it adds to the height). The width is every
/// figure's: printed at one-column width ([`COLUMN_WIDTH_PT`]) a pixel is half a point, so
/// `TEXT` prints at [`MIN_TEXT_PT`].
pub const CHART_SIZE: (u32, u32) = (504, 360);
/// One column of a two-column paper, pt (3.5 in).
pub const COLUMN_WIDTH_PT: f64 = 252.0;
/// The smallest text a figure may print at one-column width, pt.
pub const MIN_TEXT_PT: f64 = 8.0;
/// Font of titles and labels: a generic family, so the report needs no font files.
pub(crate) const FONT: &str = "sans-serif";
/// plotters writes a font of size `s` as `font-size` `s / 1.24`.
pub(super) const PLOTTERS_EM: f64 = 1.24;
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
pub(super) fn attribute_values(svg: &str, name: &str) -> std::vec::IntoIter<f64> {
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
    pub(super) fn tick(&self, v: f64) -> String {
        if self.integers && (v - v.round()).abs() > 1e-9 {
            String::new()
        } else if v.abs() >= 1e6 {
            // 1e7 reads at a glance; 10000000 needs counting.
            scientific(v, 3)
        } else {
            significant(v, 3)
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
    pub(super) fn plotters(self) -> SeriesLabelPosition {
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
    /// Whether each point gets a marker (lines of more than `MAX_MARKED_POINTS` get none).
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
    pub(super) fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        let ends = self
            .x_intervals
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]);
        self.points.iter().map(|p| p.0).chain(ends)
    }

    /// Every y the chart must show.
    pub(super) fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        let ends = self
            .y_intervals
            .iter()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]);
        self.points.iter().map(|p| p.1).chain(ends)
    }

    /// Whether the series gets a legend entry: it has a name and something drawn.
    pub(super) fn in_legend(&self) -> bool {
        !self.label.is_empty() && !self.points.is_empty()
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
pub(super) fn powers_of_ten(svg: &str) -> String {
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
pub(super) fn raised_power(text: &str) -> Option<String> {
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

pub(super) fn check_points(title: &str, axes: &Axes, series: &[Series]) -> Result<()> {
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

pub(super) fn check_intervals(
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

pub(super) fn check_value(title: &str, series: &str, axis: &Axis, v: f64) -> Result<()> {
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

pub(super) fn padded_range(scale: Scale, values: impl Iterator<Item = f64>) -> (f64, f64) {
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
pub(super) fn drawable_range(scale: Scale, (lo, hi): (f64, f64)) -> bool {
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
pub(super) fn stroke(color: Rgb) -> ShapeStyle {
    ShapeStyle {
        color: color.plotters().to_rgba(),
        filled: false,
        stroke_width: 2,
    }
}
