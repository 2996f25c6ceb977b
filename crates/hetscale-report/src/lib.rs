//! # hetscale-report
//!
//! Tables, SVG charts, the self-contained HTML report and Perfetto trace export for hetscale.
//! It draws and writes; it runs nothing.
//!
//! ```
//! use hetscale_report::{Axes, Axis, Column, Figure, Report, Section, Series, Table, line_chart};
//!
//! // E_s versus N for one configuration, with the target as a dashed line.
//! let points = vec![(100.0, 0.12), (200.0, 0.21), (400.0, 0.29), (800.0, 0.34)];
//! let axes = Axes::new(Axis::new("problem size N").log(), Axis::new("speed-efficiency E_s"));
//! let chart = line_chart(
//!     "E_s versus N",
//!     &axes,
//!     &[Series::line("4 nodes", points.clone()), Series::horizontal("target", 0.3, 100.0, 800.0)],
//! )?;
//! let mut table = Table::new("es-vs-n", "Measured E_s", vec![Column::new("N"), Column::new("E_s")]);
//! for (n, e) in points {
//!     table.push_row(vec![n.into(), e.into()])?;
//! }
//! let report = Report::new("A study").section(
//!     Section::new("es-vs-n", "E_s versus N")
//!         .text("Speed-efficiency grows with N and crosses the target near N = 400.")
//!         .figure(Figure::new("es-vs-n-figure", "E_s versus N on 4 nodes.", chart))
//!         .table(table),
//! );
//! let dir = std::env::temp_dir().join("hetscale-report-doc-example");
//! let written = report.write(&dir)?;
//! assert!(written.index.ends_with("index.html"));
//! assert!(dir.join("tables/es-vs-n.csv").exists());
//! # Ok::<(), hetscale_report::ReportError>(())
//! ```
//!
//! ## Pieces
//!
//! - [`Report`] of [`Section`]s of text, [`Figure`]s (inline SVG) and [`Table`]s;
//!   [`Report::write`] writes `index.html` (no scripts, no network: it opens from disk) and
//!   `tables/<name>.{md,csv,json}`.
//! - Charts: [`line_chart`] (lines, scatter, dashed predictions and targets; linear or log
//!   axes), [`heat_map`] (a labelled matrix such as psi), [`stacked_bar_chart`].
//! - Views after the papers' figures, in [`views`]: the spacetime diagram, average speed chart
//!   and task summary of one run's [`hbsp::Trace`]; collective improvement factors, actual
//!   versus predicted; SUMMA strategies' efficiency versus p; and a study's views
//!   ([`views::study::study_report`]): E_s versus N with the fits and the target, psi matrices
//!   and psi curves, isospeed-e contours, the three approaches side by side with the held-out
//!   check.
//! - [`chrome_trace`] / [`write_chrome_trace`]: a trace as Chrome trace event JSON for
//!   ui.perfetto.dev.
//! - [`text`]: the terminal text of each command's result, one module per command.
//! - [`Timeline`]: a trace laid out as compute / communication / wait slices and messages, the
//!   one layout the trace views and the export share.

mod chart;
mod error;
mod html;
mod markup;
mod perfetto;
mod table;
pub mod text;
mod timeline;
mod typeset;
pub mod views;

pub use chart::{
    Axes, Axis, BarStack, CHART_SIZE, COLUMN_WIDTH_PT, ColorScale, HeatMap, LegendPosition, Line,
    MIN_TEXT_PT, Marker, PALETTE, Rgb, Scale, Series, Svg, diverging, heat_map, line_chart,
    palette, stacked_bar_chart, viridis,
};
pub use error::{ReportError, Result};
pub use html::{Block, Figure, Lead, Report, Section, Written};
pub use markup::escape;
pub use perfetto::{EXPORT_BYTES_PER_TRACE_BYTE, chrome_trace, write_chrome_trace};
pub use table::{Cell, Column, Table};
pub use timeline::{
    Activity, ActivityTotals, Message, NetworkModel, NodeTimeline, Slice, Timeline, TraceOptions,
    achieved_speed, achieved_speed_unit,
};
pub use typeset::typeset;
