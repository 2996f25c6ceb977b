//! Reusable charts, drawn with plotters as inline SVG: [`line_chart`] (lines and scatter, linear
//! or log axes), [`heat_map`] (a labelled matrix with a colour bar) and [`stacked_bar_chart`]
//! (horizontal bars split into parts). Every axis carries a label and a unit, every series a
//! legend entry, so a chart reads at a glance.

mod bars;
mod base;
mod heat_map;
mod key;
mod line;
mod marker;

pub use bars::{BarStack, stacked_bar_chart};
// The shared items, for the crate and the tests (the children take them from `base`).
pub use base::*;
pub(crate) use heat_map::segments;
pub use heat_map::{ColorScale, HeatMap, diverging, heat_map};
pub(crate) use key::{Glyph, draw_key, key_height};
pub use line::line_chart;

#[cfg(test)]
mod tests;
