//! A tiny SVG writer: elements appended to a string, every attribute and text escaped.
//! Enough for charts; not a general SVG library.

use std::fmt::Write as _;

/// Fonts tried in order by browsers and by the PNG rasterizer (which loads system fonts).
pub const FONT_FAMILY: &str = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

/// An SVG document being built.
pub struct Svg {
    pub width: f64,
    pub height: f64,
    body: String,
}

/// Escape text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A number as an SVG coordinate: two decimals at most, no exponent.
pub fn n(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Text anchoring.
#[derive(Clone, Copy)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

impl Svg {
    pub fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    /// Raw markup (already escaped by the caller).
    pub fn raw(&mut self, s: &str) {
        self.body.push_str(s);
        self.body.push('\n');
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: Option<&str>) {
        let _ = write!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}""#,
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            esc(fill)
        );
        if let Some(s) = stroke {
            let _ = write!(self.body, r#" stroke="{}" stroke-width="1""#, esc(s));
        }
        self.body.push_str("/>\n");
    }

    #[allow(clippy::too_many_arguments)] // an SVG line's own attributes
    pub fn line(
        &mut self,
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        stroke: &str,
        width: f64,
        dash: Option<&str>,
    ) {
        let _ = write!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}""#,
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            esc(stroke),
            n(width)
        );
        if let Some(d) = dash {
            let _ = write!(self.body, r#" stroke-dasharray="{}""#, esc(d));
        }
        self.body.push_str("/>\n");
    }

    /// An open polyline through the points.
    pub fn polyline(
        &mut self,
        pts: &[(f64, f64)],
        stroke: &str,
        width: f64,
        dash: Option<&str>,
        clip: Option<&str>,
    ) {
        if pts.len() < 2 {
            return;
        }
        let coords: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        let _ = write!(
            self.body,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round""#,
            coords.join(" "),
            esc(stroke),
            n(width)
        );
        if let Some(d) = dash {
            let _ = write!(self.body, r#" stroke-dasharray="{}""#, esc(d));
        }
        if let Some(c) = clip {
            let _ = write!(self.body, r#" clip-path="url(#{})""#, esc(c));
        }
        self.body.push_str("/>\n");
    }

    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        x: f64,
        y: f64,
        s: &str,
        size: f64,
        anchor: Anchor,
        fill: &str,
        extra: &str,
    ) {
        let _ = write!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}"{}{}>{}</text>"#,
            n(x),
            n(y),
            n(size),
            anchor.name(),
            esc(fill),
            if extra.is_empty() { "" } else { " " },
            extra,
            esc(s)
        );
        self.body.push('\n');
    }

    /// A marker of the given shape centred on (x, y). Hollow markers are drawn with a white fill.
    pub fn marker(&mut self, shape: Marker, x: f64, y: f64, r: f64, color: &str, hollow: bool) {
        let fill = if hollow { "#ffffff" } else { color };
        let (fill, color) = (esc(fill), esc(color));
        let common = format!(r#"fill="{fill}" stroke="{color}" stroke-width="1.5""#);
        let _ = match shape {
            Marker::Circle => writeln!(
                self.body,
                r#"<circle cx="{}" cy="{}" r="{}" {common}/>"#,
                n(x),
                n(y),
                n(r)
            ),
            Marker::Square => {
                writeln!(
                    self.body,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" {common}/>"#,
                    n(x - r),
                    n(y - r),
                    n(2.0 * r),
                    n(2.0 * r)
                )
            }
            Marker::Triangle => writeln!(
                self.body,
                r#"<polygon points="{},{} {},{} {},{}" {common}/>"#,
                n(x),
                n(y - r * 1.2),
                n(x - r * 1.1),
                n(y + r * 0.8),
                n(x + r * 1.1),
                n(y + r * 0.8)
            ),
            Marker::Diamond => writeln!(
                self.body,
                r#"<polygon points="{},{} {},{} {},{} {},{}" {common}/>"#,
                n(x),
                n(y - r * 1.3),
                n(x + r * 1.1),
                n(y),
                n(x),
                n(y + r * 1.3),
                n(x - r * 1.1),
                n(y)
            ),
            Marker::Cross => writeln!(
                self.body,
                r#"<path d="M{} {} L{} {} M{} {} L{} {}" stroke="{color}" stroke-width="2" fill="none"/>"#,
                n(x - r),
                n(y - r),
                n(x + r),
                n(y + r),
                n(x - r),
                n(y + r),
                n(x + r),
                n(y - r)
            ),
        };
    }

    /// The finished document. `standalone` adds the XML namespace a separate .svg file needs;
    /// inline SVG in HTML does not need it.
    pub fn finish(self, title: &str, standalone: bool) -> String {
        let ns = if standalone {
            r#" xmlns="http://www.w3.org/2000/svg""#
        } else {
            ""
        };
        format!(
            "<svg{ns} width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"{font}\" role=\"img\" aria-label=\"{t}\">\n<title>{t}</title>\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n{body}</svg>\n",
            w = n(self.width),
            h = n(self.height),
            font = esc(FONT_FAMILY),
            t = esc(title),
            body = self.body
        )
    }
}

/// Marker shapes, cycled through series so curves stay apart in grey print too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

pub const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
];

/// Colours that stay distinct for colour-blind readers (Okabe and Ito's palette, with a brown
/// in place of its yellow, which is unreadable on white).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B",
];

/// Rough width of a text in pixels for layout (DejaVu Sans averages ~0.6 em per character).
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_in_text_and_attributes() {
        assert_eq!(
            esc(r#"a<b & "c" 'd'>"#),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
        let mut s = Svg::new(10.0, 10.0);
        s.text(1.0, 2.0, "<script>", 10.0, Anchor::Start, "#000", "");
        let doc = s.finish("t&t", true);
        assert!(doc.contains("&lt;script&gt;") && !doc.contains("<script>"));
        assert!(doc.contains("<title>t&amp;t</title>"));
    }

    #[test]
    fn coordinates_are_short_and_never_exponents() {
        assert_eq!(n(1.0), "1");
        assert_eq!(n(1.005e-9), "0");
        assert_eq!(n(-0.001), "0");
        assert_eq!(n(12.346), "12.35");
        assert_eq!(n(f64::NAN), "0");
    }
}
