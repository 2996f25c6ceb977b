//! The charts' unit tests: ticks, markers, keys, heat maps, bars and their checks.

use super::heat_map::{cell_formatter, snap_to_zero};
use super::line::log_ticks;
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
    let err = stacked_bar_chart("t", "node", &cats, &[stack(vec![1.0, -1.0])], &axis).unwrap_err();
    assert!(err.to_string().contains(">= 0"));
}
