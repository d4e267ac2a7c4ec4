//! Line charts as inline SVG, drawn here rather than by a script, so a report opens anywhere,
//! offline, with nothing to load and nothing to fail in the browser.

use std::fmt::Write;

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// How the x axis is laid out.
#[derive(Clone, Copy, PartialEq)]
pub enum XAxis {
    Linear,
    /// Percentiles from 0 to 100 spread as HdrHistogram does: 90, 99, 99.9 ... equally apart.
    Percentile,
}

pub struct Chart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_axis: XAxis,
    pub series: Vec<Series>,
}

/// The drawing's own coordinates: the page scales it to the column's width (about 1170 px in a
/// 1280 px window), so these are also roughly its on-screen pixels there.
const WIDTH: f64 = 1100.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 170.0;
/// Legend entries longer than this are cut (with an ellipsis) so they stay inside the drawing.
const LEGEND_CHARS: usize = 24;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 42.0;
const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
/// The tail the percentile axis reaches: 99.9999 %.
const MAX_NINES: f64 = 6.0;

/// A number as people read it on an axis: 950, 12.5k, 1.2M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        let n = format!("{:.2}", v / 1e6);
        format!("{}M", n.trim_end_matches('0').trim_end_matches('.'))
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        let n = format!("{:.1}", v / 1e3);
        format!("{}k", n.trim_end_matches(".0"))
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn percentile_x(p: f64) -> f64 {
    let tail = (1.0 - p / 100.0).max(10f64.powf(-MAX_NINES));
    -tail.log10()
}

/// A round step for about `n` ticks over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The chart as an `<svg>` element. Every series carries `data-points` (its point count).
pub fn svg(chart: &Chart) -> String {
    let xs = |x: f64| if chart.x_axis == XAxis::Percentile { percentile_x(x) } else { x };
    let all = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_max) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in all {
        x_min = x_min.min(xs(x));
        x_max = x_max.max(xs(x));
        y_max = y_max.max(y);
    }
    if x_min > x_max {
        (x_min, x_max) = (0.0, 1.0);
    }
    match chart.x_axis {
        XAxis::Percentile => (x_min, x_max) = (0.0, x_max.max(3.0).ceil()),
        // Time starts at zero even though points sit at the end of their interval.
        XAxis::Linear => x_min = x_min.min(0.0),
    }
    if y_max <= 0.0 {
        y_max = 1.0; // an all-zero series (no errors) still gets a readable axis
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let y_step = tick_step(y_max.max(1e-9), 4.0);
    let y_top = (y_max / y_step).ceil().max(1.0) * y_step;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + (xs(x) - x_min) / (x_max - x_min) * plot_w;
    let py = |y: f64| TOP + plot_h - y / y_top * plot_h;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg id="{}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-label="{}">"##,
        escape(chart.id),
        escape(chart.title)
    );
    let _ = write!(out, r##"<text x="{LEFT}" y="18" class="title">{}</text>"##, escape(chart.title));
    // Horizontal grid and y ticks.
    let mut y = 0.0;
    while y <= y_top + y_step / 2.0 {
        let yy = py(y);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="tick" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0,
            tick(y, y_step)
        );
        y += y_step;
    }
    // X ticks.
    let x_ticks: Vec<(f64, String)> = if chart.x_axis == XAxis::Percentile {
        (0..=x_max as i32)
            .map(|n| {
                let p = 100.0 * (1.0 - 10f64.powi(-n));
                let label = if n == 0 { "0%".to_string() } else { format!("{}%", short_percent(p)) };
                (p, label)
            })
            .collect()
    } else {
        let step = tick_step(x_max - x_min, 6.0);
        let mut v = (x_min / step).ceil() * step;
        let mut ticks = Vec::new();
        while v <= x_max + step / 1e6 {
            ticks.push((v, tick(v, step)));
            v += step;
        }
        ticks
    };
    for (x, label) in x_ticks {
        let xx = px(x);
        let _ = write!(
            out,
            r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" class="grid"/><text x="{xx:.1}" y="{:.1}" class="tick" text-anchor="middle">{label}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 16.0
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="frame"/><text x="{:.1}" y="{:.1}" class="label" text-anchor="middle">{}</text><text x="14" y="{:.1}" class="label" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
        escape(chart.x_label),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        escape(chart.y_label)
    );
    for (i, s) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
        let _ = write!(
            out,
            r##"<polyline class="series" data-series="{}" data-points="{}" fill="none" stroke="{color}" stroke-width="2" points="{}"/>"##,
            escape(&s.name),
            s.points.len(),
            points.join(" ")
        );
        if s.points.len() == 1 {
            let (x, y) = s.points[0];
            let _ = write!(out, r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"##, px(x), py(y));
        }
        let ly = TOP + 14.0 + 18.0 * i as f64;
        let lx = LEFT + plot_w + 12.0;
        let _ = write!(
            out,
            r##"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{ly:.1}" class="legend">{}</text>"##,
            ly - 4.0,
            lx + 16.0,
            ly - 4.0,
            lx + 20.0,
            escape(&legend(&s.name))
        );
    }
    out.push_str("</svg>");
    out
}

/// A tick label with as many decimals as the step needs: 0.5 rather than 0.500.
fn tick(v: f64, step: f64) -> String {
    if step >= 1.0 || v == 0.0 {
        return short(v);
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}

/// A series name short enough for the legend.
fn legend(name: &str) -> String {
    if name.chars().count() <= LEGEND_CHARS {
        return name.to_string();
    }
    let mut cut: String = name.chars().take(LEGEND_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn short_percent(p: f64) -> String {
    let s = format!("{p:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(short(950.0), "950");
        assert_eq!(short(1_500_000.0), "1.5M");
        assert_eq!(short(12_500.0), "12k");
        assert_eq!(short(1_500.0), "1.5k");
        assert_eq!(short(5_000.0), "5k");
        assert_eq!(short(0.25), "0.250");
        assert_eq!(short_percent(99.9), "99.9");
        assert_eq!(tick(0.5, 0.5), "0.5");
        assert_eq!(tick(0.6, 0.2), "0.6");
        assert_eq!(tick(0.05, 0.05), "0.05");
        assert_eq!(legend("a-rather-long-result-name-from-a-file"), "a-rather-long-result-na…");
    }

    #[test]
    fn every_series_is_drawn_with_its_point_count() {
        let chart = Chart {
            id: "t",
            title: "T <1>",
            x_label: "s",
            y_label: "ops",
            x_axis: XAxis::Linear,
            series: vec![
                Series { name: "a".into(), points: vec![(0.0, 1.0), (1.0, 3.0)] },
                Series { name: "b".into(), points: vec![(0.5, 2.0)] },
            ],
        };
        let svg = svg(&chart);
        assert!(svg.contains(r#"data-points="2""#) && svg.contains(r#"data-points="1""#));
        assert!(svg.contains("T &lt;1&gt;"));
        let spectrum = Chart { x_axis: XAxis::Percentile, id: "p", ..chart };
        assert!(super::svg(&spectrum).contains("99.9%"));
    }
}
