//! The status page's charts as geometry: bars (stacked), lines with gaps, a dashed threshold,
//! axes with labelled ticks, in a fixed SVG coordinate space that the page scales to its
//! width. The template draws them; colours come from the stylesheet by class (`s0`…`s7`), so
//! the charts follow the light and dark schemes and need no inline style (the pages' CSP).

/// The SVG coordinate space: the chart is scaled to the page's width.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 240.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 28.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 34.0;

/// How many series colours the stylesheet has.
const CLASSES: usize = 8;

/// A chart ready to draw.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Unique on the page: the SVG's title and description are referred to by it.
    pub id: String,
    pub title: String,
    pub description: String,
    pub y_ticks: Vec<Tick>,
    pub x_ticks: Vec<Tick>,
    pub bars: Vec<Bar>,
    pub lines: Vec<Line>,
    pub threshold: Option<Threshold>,
    pub legend: Vec<Legend>,
    /// The plot area, for the axes.
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

#[derive(Debug, Clone)]
pub struct Tick {
    /// Where the tick is on its axis.
    pub at: f64,
    pub label: String,
}

#[derive(Debug, Clone)]
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub class: &'static str,
}

/// A line: its segments (`points` of an SVG polyline) between gaps, and a dot for each value
/// alone between two gaps.
#[derive(Debug, Clone)]
pub struct Line {
    pub segments: Vec<String>,
    pub dots: Vec<(f64, f64)>,
    pub class: &'static str,
}

#[derive(Debug, Clone)]
pub struct Threshold {
    pub y: f64,
    pub label: String,
}

#[derive(Debug, Clone)]
pub struct Legend {
    pub class: &'static str,
    pub label: String,
    /// Drawn as a dashed line rather than a swatch.
    pub dashed: bool,
}

/// The class of the `index`th series.
pub fn class(index: usize) -> &'static str {
    ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"][index % CLASSES]
}

/// One series of a chart.
#[derive(Debug, Clone)]
pub struct Series<'a, T> {
    pub label: String,
    pub class: &'static str,
    pub values: &'a [T],
}

/// How the y axis labels its values.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Count,
    Percent,
    Seconds,
}

impl Unit {
    pub fn format(self, value: f64) -> String {
        match self {
            Self::Count => format!("{value:.0}"),
            Self::Percent => format!("{:.0}%", value * 100.0),
            Self::Seconds => seconds(value),
        }
    }
}

/// A duration in its largest whole unit, for an axis.
fn seconds(value: f64) -> String {
    match value {
        v if v >= 86_400.0 => format!("{:.0} d", v / 86_400.0),
        v if v >= 3_600.0 => format!("{:.0} h", v / 3_600.0),
        v if v >= 60.0 => format!("{:.0} min", v / 60.0),
        v => format!("{v:.0} s"),
    }
}

/// The frame every chart shares: its identity, its x axis.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: String,
    pub title: String,
    pub description: String,
    /// One label per bucket; shown every `label_every`.
    pub labels: Vec<String>,
    pub label_every: usize,
}

impl Frame {
    fn slot(&self) -> f64 {
        (WIDTH - LEFT - RIGHT) / self.labels.len().max(1) as f64
    }

    fn center(&self, index: usize) -> f64 {
        LEFT + self.slot() * (index as f64 + 0.5)
    }

    fn x_ticks(&self) -> Vec<Tick> {
        let every = self.label_every.max(1);
        // Counted from the newest bucket, so the current hour or day is always labelled.
        let last = self.labels.len().saturating_sub(1);
        self.labels
            .iter()
            .enumerate()
            .filter(|(index, _)| (last - index).is_multiple_of(every))
            .map(|(index, label)| Tick { at: self.center(index), label: label.clone() })
            .collect()
    }

    fn chart(self, top_value: f64, unit: Unit) -> Chart {
        let x_ticks = self.x_ticks();
        let y_ticks = (0..=4)
            .map(|step| {
                let value = top_value * f64::from(step) / 4.0;
                Tick { at: y_of(value, top_value), label: unit.format(value) }
            })
            .collect();
        Chart {
            id: self.id,
            title: self.title,
            description: self.description,
            y_ticks,
            x_ticks,
            bars: Vec::new(),
            lines: Vec::new(),
            threshold: None,
            legend: Vec::new(),
            left: LEFT,
            right: WIDTH - RIGHT,
            top: TOP,
            bottom: HEIGHT - BOTTOM,
        }
    }
}

/// The y coordinate of `value` on an axis from 0 to `top_value`.
fn y_of(value: f64, top_value: f64) -> f64 {
    let plot = HEIGHT - TOP - BOTTOM;
    HEIGHT - BOTTOM - plot * (value / top_value).clamp(0.0, 1.0)
}

/// The top of an axis that holds `max` in four equal, round steps (1, 2, 2.5 or 5 times a power
/// of ten; whole numbers for counts).
pub fn axis_top(max: f64, whole: bool) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return if whole { 4.0 } else { 1.0 };
    }
    let rough = max / 4.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * power)
        .find(|step| *step >= rough && (!whole || step.fract() == 0.0))
        .unwrap_or(10.0 * power);
    let step = if whole { step.max(1.0).ceil() } else { step };
    step * 4.0
}

/// Bars of `series` stacked in each bucket, the first at the bottom; a dashed line at
/// `threshold` (its value and label) when given, the axis tall enough to show it.
pub fn stacked_bars(frame: Frame, series: &[Series<'_, i64>], threshold: Option<(i64, String)>) -> Chart {
    let buckets = frame.labels.len();
    let totals: Vec<i64> =
        (0..buckets).map(|i| series.iter().map(|s| s.values.get(i).copied().unwrap_or(0)).sum()).collect();
    let highest = totals.iter().copied().max().unwrap_or(0).max(threshold.as_ref().map_or(0, |(value, _)| *value));
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let top_value = axis_top(highest as f64, true);
    let slot = frame.slot();
    let width = (slot * 0.7).max(1.0);
    let centers: Vec<f64> = (0..buckets).map(|i| frame.center(i)).collect();
    let mut chart = frame.chart(top_value, Unit::Count);
    for (index, center) in centers.iter().enumerate() {
        let mut below = 0i64;
        for s in series {
            let value = s.values.get(index).copied().unwrap_or(0);
            if value <= 0 {
                continue;
            }
            #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
            let (bottom, top) = (y_of(below as f64, top_value), y_of((below + value) as f64, top_value));
            chart.bars.push(Bar { x: center - width / 2.0, y: top, width, height: bottom - top, class: s.class });
            below += value;
        }
    }
    chart.legend = series.iter().map(|s| Legend { class: s.class, label: s.label.clone(), dashed: false }).collect();
    if let Some((value, label)) = threshold {
        #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
        let y = y_of(value as f64, top_value);
        chart.legend.push(Legend { class: "threshold", label: label.clone(), dashed: true });
        chart.threshold = Some(Threshold { y, label });
    }
    chart
}

/// One line per series; a bucket without a value (`None`) leaves a gap.
pub fn lines(frame: Frame, series: &[Series<'_, Option<f64>>], unit: Unit, at_least: f64) -> Chart {
    let highest = series.iter().flat_map(|s| s.values.iter().flatten().copied()).fold(at_least, f64::max);
    let top_value = axis_top(highest, matches!(unit, Unit::Count | Unit::Seconds));
    let centers: Vec<f64> = (0..frame.labels.len()).map(|i| frame.center(i)).collect();
    let mut chart = frame.chart(top_value, unit);
    for s in series {
        let mut line = Line { segments: Vec::new(), dots: Vec::new(), class: s.class };
        // A value between two gaps would be a line of no length: it gets a dot instead.
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let close = |segment: &mut Vec<(f64, f64)>, line: &mut Line| match segment.as_slice() {
            [] => {}
            [alone] => {
                line.dots.push(*alone);
                segment.clear();
            }
            points => {
                line.segments.push(points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" "));
                segment.clear();
            }
        };
        for (index, value) in s.values.iter().enumerate() {
            match value {
                Some(value) => segment.push((centers[index], y_of(*value, top_value))),
                None => close(&mut segment, &mut line),
            }
        }
        close(&mut segment, &mut line);
        chart.lines.push(line);
    }
    chart.legend = series.iter().map(|s| Legend { class: s.class, label: s.label.clone(), dashed: false }).collect();
    chart
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(buckets: usize) -> Frame {
        Frame {
            id: "c".into(),
            title: "t".into(),
            description: "d".into(),
            labels: (0..buckets).map(|i| i.to_string()).collect(),
            label_every: 6,
        }
    }

    #[test]
    fn axes_end_on_round_steps_that_hold_the_largest_value() {
        assert_eq!(axis_top(0.0, true), 4.0);
        assert_eq!(axis_top(3.0, true), 4.0);
        assert_eq!(axis_top(7.0, true), 8.0);
        assert_eq!(axis_top(1000.0, true), 1000.0);
        assert_eq!(axis_top(1001.0, true), 2000.0);
        assert_eq!(axis_top(1.0, false), 1.0);
        assert_eq!(axis_top(1.3, false), 2.0);
    }

    #[test]
    fn stacked_bars_sit_on_each_other_and_the_threshold_raises_the_axis() {
        let accepted = [1, 0, 2];
        let refused = [1, 0, 0];
        let series = [
            Series { label: "accepted".into(), class: "s0", values: &accepted[..] },
            Series { label: "refused".into(), class: "s1", values: &refused[..] },
        ];
        let chart = stacked_bars(frame(3), &series, Some((10, "budget".into())));
        assert_eq!(chart.bars.len(), 3, "no bar for a zero");
        let (first, second) = (&chart.bars[0], &chart.bars[1]);
        assert!((first.y - (second.y + second.height)).abs() < 1e-9, "the second sits on the first");
        assert_eq!(chart.y_ticks.last().map(|tick| tick.label.as_str()), Some("20"));
        assert!(chart.threshold.is_some());
        assert_eq!(chart.x_ticks.len(), 1, "every sixth label, counted from the newest");
    }

    #[test]
    fn a_line_breaks_where_a_bucket_has_no_value() {
        let values = [Some(0.5), None, Some(1.0), Some(0.25), None, Some(0.5), Some(0.5)];
        let series = [Series { label: "rate".into(), class: "s0", values: &values[..] }];
        let chart = lines(frame(7), &series, Unit::Percent, 1.0);
        assert_eq!(chart.lines[0].segments.len(), 2);
        assert_eq!(chart.lines[0].dots.len(), 1, "the first value stands alone");
        assert_eq!(chart.y_ticks.last().map(|tick| tick.label.as_str()), Some("100%"));
    }
}
