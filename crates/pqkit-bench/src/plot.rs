//! SVG plots of the measurements (plotters' SVG backend; the text is left to the viewer's
//! sans-serif font): bars on a log axis (handshake time per combination, ops/s per
//! algorithm, connections/s), stacked bars (bytes on the wire by message type) and a log-log
//! chart (sign time versus message size).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{boundary, crypto, handshake, tls};

const WIDTH: u32 = 1000;
const BAR: u32 = 20;
const FONT: &str = "sans-serif";

/// A plot file: its name in the output directory and its SVG text.
#[derive(Clone, Debug)]
pub struct Plot {
    /// File name, e.g. "handshake-time.svg".
    pub file: &'static str,
    /// The SVG document.
    pub svg: String,
}

fn e(err: impl std::fmt::Display) -> String {
    format!("plot: {err}")
}

/// Width of the label area for these labels, in pixels (about 7 px per character at 12 px).
fn label_width<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    let chars = labels.map(|l| l.chars().count()).max().unwrap_or(0);
    u32::try_from(chars).unwrap_or(60).min(60) * 7 + 10
}

/// Powers of ten around the positive values (1 and 10 when there are none).
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (1.0, 10.0);
    }
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    (lo, if hi > lo { hi } else { lo * 10.0 })
}

/// Tick labels of a log axis: 1, 2 and 5 times a power of ten, compact ("20k", "1M");
/// the other ticks unlabelled.
fn log_tick(v: &f64) -> String {
    if *v <= 0.0 {
        return String::new();
    }
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0].iter().all(|m| (mantissa - m).abs() > 0.01) {
        return String::new();
    }
    match *v {
        v if v >= 1e6 => format!("{}M", v / 1e6),
        v if v >= 1e3 => format!("{}k", v / 1e3),
        v => format!("{v}"),
    }
}

fn linear_tick(v: &f64) -> String {
    format!("{v:.0}")
}

fn short(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// Horizontal bars on a log axis, the first bar on top, each labelled with its value.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn bars(title: &str, x_desc: &str, bars: &[(String, f64)]) -> Result<String, String> {
    let n = bars.len();
    let (lo, hi) = decades(bars.iter().map(|b| b.1));
    let height = 110 + BAR * u32::try_from(n).map_err(e)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(label_width(bars.iter().map(|b| b.0.as_str())))
            .build_cartesian_2d(
                (lo..hi).log_scale(),
                (0..n.saturating_sub(1)).into_segmented(),
            )
            .map_err(e)?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) if *i < n => bars[n - 1 - i].0.clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .x_label_formatter(&log_tick)
            .x_desc(x_desc)
            .label_style((FONT, 12))
            .draw()
            .map_err(e)?;
        let rows = bars.iter().enumerate().filter(|(_, b)| b.1 > 0.0);
        chart
            .draw_series(rows.clone().map(|(i, b)| {
                let y = n - 1 - i;
                let mut r = Rectangle::new(
                    [
                        (lo, SegmentValue::Exact(y)),
                        (b.1, SegmentValue::Exact(y + 1)),
                    ],
                    BLUE.mix(0.55).filled(),
                );
                r.set_margin(2, 2, 0, 0);
                r
            }))
            .map_err(e)?;
        chart
            .draw_series(rows.map(|(i, b)| {
                Text::new(
                    format!(" {}", short(b.1)),
                    (b.1, SegmentValue::CenterOf(n - 1 - i)),
                    TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
                )
            }))
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// One stacked bar: its label and its (category, value) parts.
pub type Stack = (String, Vec<(String, f64)>);

/// Horizontal stacked bars on a linear axis, one colour per category, with a legend.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn stacked(title: &str, x_desc: &str, stacks: &[Stack]) -> Result<String, String> {
    let n = stacks.len();
    let mut categories: Vec<&str> = Vec::new();
    for (_, parts) in stacks {
        for (c, _) in parts {
            if !categories.contains(&c.as_str()) {
                categories.push(c);
            }
        }
    }
    let max = stacks
        .iter()
        .map(|(_, p)| p.iter().map(|x| x.1).sum::<f64>())
        .fold(1.0, f64::max);
    let height = 130 + BAR * u32::try_from(n + categories.len()).map_err(e)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(label_width(stacks.iter().map(|s| s.0.as_str())))
            .build_cartesian_2d(0.0..max * 1.5, (0..n.saturating_sub(1)).into_segmented())
            .map_err(e)?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) if *i < n => stacks[n - 1 - i].0.clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .x_label_formatter(&linear_tick)
            .x_desc(x_desc)
            .label_style((FONT, 12))
            .draw()
            .map_err(e)?;
        for (k, category) in categories.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let mut rects = Vec::new();
            for (i, (_, parts)) in stacks.iter().enumerate() {
                let y = n - 1 - i;
                let mut start = 0.0;
                for (c, v) in parts {
                    if c == category {
                        let mut r = Rectangle::new(
                            [
                                (start, SegmentValue::Exact(y)),
                                (start + v, SegmentValue::Exact(y + 1)),
                            ],
                            color.filled(),
                        );
                        r.set_margin(2, 2, 0, 0);
                        rects.push(r);
                    }
                    start += v;
                }
            }
            chart
                .draw_series(rects)
                .map_err(e)?
                .label(*category)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// Draws the series' legend at `position`.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 11))
        .draw()
        .map_err(e)
}

/// One line of a log-log chart: its label and its (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// Lines on log-log axes, with a legend.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn log_log(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<String, String> {
    let points = || series.iter().flat_map(|s| s.1.iter());
    let (x_lo, x_hi) = decades(points().map(|p| p.0));
    let (y_lo, y_hi) = decades(points().map(|p| p.1));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 640)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_label_formatter(&log_tick)
            .y_label_formatter(&log_tick)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 12))
            .draw()
            .map_err(e)?;
        for (k, (label, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let pts: Vec<(f64, f64)> = pts
                .iter()
                .copied()
                .filter(|p| p.0 > 0.0 && p.1 > 0.0)
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)).point_size(3))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

fn mutual(m: bool) -> &'static str {
    if m { ", mutual" } else { "" }
}

/// `bench crypto`: ops/s per algorithm and operation (and implementation, when peers ran).
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn crypto(rows: &[crypto::Row]) -> Result<Vec<Plot>, String> {
    // Name the implementation only when peers ran (several for one operation).
    let peers = rows.iter().any(|r| {
        rows.iter().any(|o| {
            o.algorithm == r.algorithm
                && o.operation == r.operation
                && o.implementation != r.implementation
        })
    });
    let data: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            let who = if peers {
                format!(" [{}]", r.implementation)
            } else {
                String::new()
            };
            (
                format!("{} {}{who}", r.algorithm, r.operation),
                r.timing.ops_per_sec,
            )
        })
        .collect();
    Ok(vec![Plot {
        file: "crypto-ops.svg",
        svg: bars(
            "Operations per second (single thread, log scale)",
            "ops/s",
            &data,
        )?,
    }])
}

/// `bench handshake`: handshake time per combination, and bytes on the wire by message type.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn handshake(rows: &[handshake::Row]) -> Result<Vec<Plot>, String> {
    let name = |r: &handshake::Row| format!("{} × {}{}", r.signature, r.group, mutual(r.mutual));
    let times: Vec<(String, f64)> = rows
        .iter()
        .flat_map(|r| {
            [
                (format!("{} client", name(r)), r.client_handshake_ms),
                (format!("{} server", name(r)), r.server_handshake_ms),
            ]
        })
        .collect();
    let bytes: Vec<Stack> = rows
        .iter()
        .map(|r| {
            let parts = r
                .breakdown
                .iter()
                .map(|p| (p.kind.clone(), p.bytes as f64))
                .collect();
            (name(r), parts)
        })
        .collect();
    Ok(vec![
        Plot {
            file: "handshake-time.svg",
            svg: bars("TLS 1.3 handshake time (median, log scale)", "ms", &times)?,
        },
        Plot {
            file: "handshake-bytes.svg",
            svg: stacked(
                "Bytes on the wire by message type (both directions)",
                "bytes",
                &bytes,
            )?,
        },
    ])
}

/// `bench tls`: connections per second per combination.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn tls(rows: &[tls::Row]) -> Result<Vec<Plot>, String> {
    let data: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            (
                format!(
                    "{} × {}{}{}",
                    r.signature,
                    r.group,
                    mutual(r.mutual),
                    if r.server_key == tls::FILE_KEY {
                        String::new()
                    } else {
                        format!(" [{}]", r.server_key)
                    }
                ),
                r.connections_per_sec,
            )
        })
        .collect();
    Ok(vec![Plot {
        file: "tls-connections.svg",
        svg: bars(
            "Full TLS 1.3 connections per second (log scale)",
            "connections/s",
            &data,
        )?,
    }])
}

/// `bench boundary`: sign time (outside + inside) versus message size, log-log.
///
/// # Errors
/// plotters' drawing errors, as text.
pub fn boundary(rows: &[boundary::Row]) -> Result<Vec<Plot>, String> {
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let place = if r.signer == boundary::IN_PROCESS {
            String::new()
        } else {
            format!(" [{}]", r.signer)
        };
        let label = format!(
            "{} {} (type {}){place}",
            r.algorithm, r.mode, r.boundary_type
        );
        let point = (r.message_bytes as f64, r.total_ns / 1e6);
        match series.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.1.push(point),
            None => series.push((label, vec![point])),
        }
    }
    Ok(vec![Plot {
        file: "boundary.svg",
        svg: log_log(
            "Sign time vs message size (hashing outside + signing inside)",
            "message bytes",
            "ms",
            &series,
        )?,
    }])
}
