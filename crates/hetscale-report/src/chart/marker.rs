//! Markers drawn as an element of their own: the shapes a series' points and its key entry
//! share.

use super::base::*;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

/// Marker radius of a scatter series, px.
pub(super) const SCATTER_MARKER: i32 = 4;
/// Marker radius on a line, px: smaller, so the line stays visible between markers.
pub(super) const LINE_MARKER: i32 = 3;

/// A marker of `shape` centred on `at`, `r` px from its centre to its edge; hollow shapes are
/// drawn a little larger so one drawn over a filled disc rings it. (An element of its own:
/// plotters' boxed elements need a `'static` backend, which the SVG string backend is not.)
pub(super) fn marker_element<C>(at: C, shape: Marker, r: i32, color: Rgb) -> MarkerElement<C> {
    MarkerElement {
        at,
        shape,
        r,
        color,
        offset: (0, 0),
    }
}

pub(super) struct MarkerElement<C> {
    at: C,
    shape: Marker,
    r: i32,
    color: Rgb,
    /// Pixels right and down of `at`.
    offset: (i32, i32),
}

impl<C> MarkerElement<C> {
    pub(super) fn shifted(mut self, offset: (i32, i32)) -> Self {
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
