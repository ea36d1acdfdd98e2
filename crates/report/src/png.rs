//! PNG copies of the figures, rasterized from the same SVG with resvg (pure Rust). Text needs
//! a font: the system's fonts are loaded once (on Debian, `fonts-dejavu-core` provides
//! DejaVu Sans, the figures' first choice).

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

/// Rasterizes SVG documents; holds the loaded font database.
pub struct Rasterizer {
    options: usvg::Options<'static>,
    fonts: usize,
}

impl Rasterizer {
    /// Load the system fonts.
    pub fn new() -> Rasterizer {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        let fonts = db.len();
        let mut options = usvg::Options {
            font_family: "DejaVu Sans".to_string(),
            ..Default::default()
        };
        options.fontdb = Arc::new(db);
        Rasterizer { options, fonts }
    }

    /// How many font faces were found; 0 means PNG figures would have no text.
    pub fn font_count(&self) -> usize {
        self.fonts
    }

    /// Render `svg` at `scale` (2.0 gives sharp text on high-density screens) to PNG bytes.
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, String> {
        let tree = usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| format!("SVG not understood: {e}"))?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(scale)
            .ok_or("figure has no size")?;
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or("figure too large to rasterize")?;
        pixmap.fill(tiny_skia::Color::WHITE);
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| format!("PNG encoding failed: {e}"))
    }
}

impl Default for Rasterizer {
    fn default() -> Self {
        Rasterizer::new()
    }
}

/// Decode a PNG into (width, height, RGBA pixels) — for checking pictures in tests.
pub fn decode_png(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    let p = tiny_skia::Pixmap::decode_png(bytes).map_err(|e| format!("not a PNG: {e}"))?;
    Ok((p.width(), p.height(), p.data().to_vec()))
}

/// What a picture holds, roughly: how many distinct colours and what fraction of pixels are
/// not (near) white. A blank page has one colour and no ink.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ink {
    pub distinct_colors: usize,
    pub non_white_fraction: f64,
}

pub fn ink(rgba: &[u8]) -> Ink {
    let mut colors = std::collections::HashSet::new();
    let mut inked = 0usize;
    let px = rgba.len() / 4;
    for p in rgba.chunks_exact(4) {
        colors.insert([p[0], p[1], p[2]]);
        if p[0] < 235 || p[1] < 235 || p[2] < 235 {
            inked += 1;
        }
    }
    Ink {
        distinct_colors: colors.len(),
        non_white_fraction: if px == 0 {
            0.0
        } else {
            inked as f64 / px as f64
        },
    }
}
