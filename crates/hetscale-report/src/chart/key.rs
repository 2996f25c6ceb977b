//! A chart's key in its own strip below the plot, where it hides no data.

use super::base::*;
use super::marker::{LINE_MARKER, SCATTER_MARKER, marker_element};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::typeset::typeset;

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
