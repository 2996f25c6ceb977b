//! End to end: the report with every view opens in headless Chromium without a console
//! message, a broken image, a missing view or an empty chart.
//!
//! Needs Debian's `chromium` (`apt-get install -y chromium`); without it each test is skipped,
//! saying so (a failure under `HETSCALE_STRICT_TESTS=1`).

mod common;

use hetscale_report::views::study::{VIEWS, study_prefixes, study_report};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one page may take to render before the test gives up on Chromium.
const RENDER_TIMEOUT: Duration = Duration::from_secs(120);

/// Run inside a copy of the page after it loads: reports, as console errors, images that did
/// not load, charts that were not laid out or are empty, and views that are missing; then
/// appends `OK` or `FAILED` to the page for `--dump-dom` to show.
const CHECKER: &str = r#"
window.addEventListener('load', function () {
  var problems = [];
  document.querySelectorAll('img').forEach(function (img) {
    if (!img.complete || img.naturalWidth === 0) problems.push('broken image ' + img.getAttribute('src'));
  });
  document.querySelectorAll('svg').forEach(function (svg, i) {
    var box = svg.getBoundingClientRect();
    if (box.width < 50 || box.height < 50) problems.push('svg ' + i + ' is not laid out');
    if (svg.querySelectorAll('*').length < 10) problems.push('svg ' + i + ' is empty');
    // A figure grows with a column wider than its drawing (it is drawn for one paper column).
    var drawn = svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0;
    var column = svg.parentElement.getBoundingClientRect().width;
    if (svg.closest('figure') && column > drawn * 1.1 && box.width <= drawn) problems.push('svg ' + i + ' keeps its drawn width ' + drawn + ' px in a ' + column + ' px column');
  });
  EXPECTED_IDS.forEach(function (id) {
    if (!document.getElementById(id)) problems.push('view ' + id + ' is missing');
  });
  problems.forEach(function (p) { console.error('e2e: ' + p); });
  var out = document.createElement('pre');
  out.id = 'e2e-result';
  out.textContent = problems.length ? 'FAILED' : 'OK';
  document.body.appendChild(out);
});
"#;

/// Chromium, or `None` (the test skipped, saying so) where it is missing.
fn chromium_or_skip() -> Option<PathBuf> {
    if !hetscale_testkit::require(hetscale_testkit::Need::Chromium) {
        return None;
    }
    hetscale_testkit::chromium()
}

/// What Chromium made of a page.
struct Rendered {
    /// The DOM after load.
    dom: String,
    /// Console messages Chromium logged (the report has no script, so any is a fault).
    console: Vec<String>,
}

fn render(chromium: &Path, page: &Path) -> Rendered {
    let work = tempfile::tempdir().unwrap();
    let (out, err) = (work.path().join("dom.html"), work.path().join("log.txt"));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.path().join("profile").display()
        ))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RENDER_TIMEOUT {
            let _ = child.kill();
            panic!(
                "chromium did not finish rendering {} within {RENDER_TIMEOUT:?}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        status.success(),
        "chromium failed on {}: {status}\n{log}",
        page.display()
    );
    Rendered {
        dom: std::fs::read_to_string(&out).unwrap(),
        console: log
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_owned)
            .collect(),
    }
}

/// A copy of `index` beside it (so relative links resolve alike) with [`CHECKER`] added.
fn checked_copy(index: &Path, ids: &[&str]) -> PathBuf {
    let html = std::fs::read_to_string(index).unwrap();
    let ids_js = serde_json::to_string(ids).unwrap();
    let script = format!("<script>var EXPECTED_IDS = {ids_js};{CHECKER}</script>\n</body>");
    let copy = index.with_file_name("index-checked.html");
    std::fs::write(&copy, html.replacen("</body>", &script, 1)).unwrap();
    copy
}

/// The `<svg>...</svg>` elements of a DOM.
fn svgs(dom: &str) -> Vec<&str> {
    dom.split("<svg")
        .skip(1)
        .map(|rest| rest.split("</svg>").next().unwrap_or(""))
        .collect()
}

#[test]
fn the_report_renders_every_view_without_errors() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let written = common::sample_report().write(dir.path()).unwrap();
    // One chart per view at least.
    let views = common::VIEW_IDS.len();
    assert_renders_cleanly(&chromium, &written.index, &common::VIEW_IDS, views);
}

#[test]
fn the_example_study_report_renders_every_study_view_without_errors() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let results = common::example_study_results();
    let dir = tempfile::tempdir().unwrap();
    let written = study_report(&results).unwrap().write(dir.path()).unwrap();
    let mut ids = Vec::new();
    for (result, prefix) in results.iter().zip(study_prefixes(&results)) {
        ids.extend(VIEWS.iter().map(|view| format!("{prefix}-{view}")));
        ids.extend(
            [
                "es-vs-n-figure",
                "psi-curves",
                "contours-figure",
                "approaches-figure",
            ]
            .map(|figure| format!("{prefix}-{figure}")),
        );
        // The first approach's psi; the others only as differences where they differ.
        assert!(common::approaches_with_psi(result) > 0);
        ids.push(format!("{prefix}-psi-figure-1"));
    }
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let figures = ids
        .iter()
        .filter(|id| !VIEWS.iter().any(|v| id.ends_with(v)))
        .count();
    assert_renders_cleanly(&chromium, &written.index, &ids, figures);
}

/// Renders `index` and fails on scripts or network use in the page, a console message, a
/// missing id, fewer than `min_charts` charts or an empty one, or a problem the in-page
/// [`CHECKER`] finds.
fn assert_renders_cleanly(chromium: &Path, index: &Path, ids: &[&str], min_charts: usize) {
    let html = std::fs::read_to_string(index).unwrap();
    assert!(
        !html.contains("<script"),
        "the report must not need scripts"
    );
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("url("),
        "the report must not load anything from the network"
    );

    let page = render(chromium, index);
    assert!(
        page.console.is_empty(),
        "console messages: {:#?}",
        page.console
    );
    for id in ids {
        assert!(
            page.dom.contains(&format!("id=\"{id}\"")),
            "view {id} is missing from the DOM"
        );
    }
    let charts = svgs(&page.dom);
    assert!(
        charts.len() >= min_charts,
        "{} charts, expected {min_charts} at least",
        charts.len()
    );
    for (i, svg) in charts.iter().enumerate() {
        let shapes = ["<rect", "<path", "<polyline", "<circle", "<line"]
            .iter()
            .map(|tag| svg.matches(tag).count())
            .sum::<usize>();
        assert!(shapes >= 5 && svg.contains("<text"), "chart {i} is empty");
    }

    let checked = render(chromium, &checked_copy(index, ids));
    assert!(
        checked.console.is_empty(),
        "problems in the browser: {:#?}",
        checked.console
    );
    assert!(
        checked.dom.contains("<pre id=\"e2e-result\">OK</pre>"),
        "the checker did not run"
    );
}

#[test]
fn the_harness_catches_broken_images_and_missing_views() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index.html");
    std::fs::write(
        &index,
        "<!DOCTYPE html><html><body><img src=\"missing.png\"><svg width=\"10\" height=\"10\"></svg></body></html>",
    )
    .unwrap();
    let page = render(&chromium, &checked_copy(&index, &["spacetime"]));
    assert!(page.dom.contains("<pre id=\"e2e-result\">FAILED</pre>"));
    let all = page.console.join("\n");
    for problem in [
        "broken image missing.png",
        "svg 0 is empty",
        "view spacetime is missing",
    ] {
        assert!(all.contains(problem), "not caught: {problem}\n{all}");
    }
}
