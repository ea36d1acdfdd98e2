//! Figure selection on synthetic campaigns, SVG well-formedness, PNG content.

mod common;

use common::*;
use raidlab_report::chart::{Figure, Source};
use raidlab_report::png::{decode_png, ink, Rasterizer};
use raidlab_report::select_figures;
use resvg::usvg::roxmltree;

fn kinds(rows: &[raidlab_report::RunRow], conv: &[raidlab_report::ConvergenceStep]) -> Vec<String> {
    select_figures(rows, conv)
        .into_iter()
        .map(|f| f.kind)
        .collect()
}

#[test]
fn block_size_sweep_gives_log_log_rate_curves_per_rw_with_simulated_overlay() {
    let figs = select_figures(&bs_sweep(), &[]);
    assert_eq!(
        figs.len(),
        1,
        "{:?}",
        figs.iter().map(|f| &f.kind).collect::<Vec<_>>()
    );
    let Figure::Line(c) = &figs[0].figure else {
        panic!("expected a line chart")
    };
    assert_eq!(figs[0].kind, "rate-vs-bs");
    assert_eq!(figs[0].id, "fig-01-rate-vs-bs");
    assert_eq!(c.x.scale, raidlab_report::axis::Scale::Log);
    assert_eq!(c.y.scale, raidlab_report::axis::Scale::Log);
    let labels: Vec<&str> = c.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "rw=read (measured)",
            "rw=read (simulated)",
            "rw=write (measured)",
            "rw=write (simulated)"
        ]
    );
    // Same configuration, same colour; different sources, different style.
    assert_eq!(c.series[0].color, c.series[1].color);
    assert_ne!(c.series[0].color, c.series[2].color);
    assert_eq!(
        (c.series[0].source, c.series[1].source),
        (Source::Measured, Source::Predicted)
    );
    // 13 block sizes, error bars from the 3 repetitions on measured points only.
    assert_eq!(c.series[0].points.len(), 13);
    assert!(c.series[0]
        .points
        .iter()
        .all(|p| p.lo.is_some() && p.hi.is_some() && p.lo <= Some(p.y) && p.hi >= Some(p.y)));
    assert!(c.series[1].points.iter().all(|p| p.lo.is_none()));
    assert!(
        figs[0].caption.contains("log–log") && figs[0].caption.contains("3 repetitions"),
        "{}",
        figs[0].caption
    );
}

#[test]
fn read_percentage_by_queue_depth_gives_iops_and_latency_curves_per_depth() {
    let figs = select_figures(&mix_grid(), &[]);
    let k: Vec<&str> = figs.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(k, ["iops-vs-read", "latency-vs-read"]);
    let Figure::Line(c) = &figs[0].figure else {
        panic!()
    };
    let labels: Vec<&str> = c.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        ["iodepth=1", "iodepth=16", "iodepth=256"],
        "numeric order, not text order"
    );
    assert_eq!(c.x.unit, raidlab_report::axis::Unit::Percent);
    assert_eq!(c.series[0].points.len(), 5);
}

/// Seed 001/003 recipes sweep simulated systems: the target follows from `system`, so the
/// bars are grouped by system with one series per remaining parameter (rw), not one series
/// per system and rw, and the systems come in the order of the numbers in their names.
#[test]
fn a_system_sweep_gives_one_bar_series_per_rw_grouped_by_system() {
    let mut rows = Vec::new();
    let systems = [
        "raid5-4d-c1024",
        "raid0-4d-c16",
        "raid5-4d-c64",
        "raid10-4d-c16",
    ];
    for (i, sys) in systems.iter().enumerate() {
        for (j, rw) in ["read", "write"].iter().enumerate() {
            rows.push(row(
                "chunks-sim",
                "simulated",
                &format!("sim:../systems/linuxraid2010/{sys}.toml"),
                (2 * i + j) as u64,
                0,
                &[("system", sys.to_string()), ("rw", rw.to_string())],
                &[("mb_s", 100.0 + (10 * i + j) as f64)],
            ));
        }
    }
    let figs = select_figures(&rows, &[]);
    assert_eq!(figs.len(), 1);
    let Figure::Bars(b) = &figs[0].figure else {
        panic!("expected bars")
    };
    assert_eq!(
        b.categories,
        [
            "raid0-4d-c16",
            "raid5-4d-c64",
            "raid5-4d-c1024",
            "raid10-4d-c16"
        ]
    );
    let labels: Vec<&str> = b.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["rw=read (simulated)", "rw=write (simulated)"]);
    // Every bar is drawn: each series has a value in every group.
    assert!(b
        .series
        .iter()
        .all(|s| s.values.iter().all(|v| v.is_some())));
    assert_eq!(b.series[1].values[2].unwrap().0, 101.0);
}

/// Seed 004's recipe over simulated systems: one chart per system, titled by the system
/// alone (its target follows from it and is not a second facet).
#[test]
fn per_system_charts_are_titled_by_the_system_alone() {
    let mut rows = Vec::new();
    let mut point = 0;
    for sys in ["raid5-4d", "raid10-4d"] {
        for mix in ["0", "50", "100"] {
            for depth in ["1", "2", "4", "8", "16", "32", "64", "128", "256"] {
                rows.push(row(
                    "iometer-sim",
                    "simulated",
                    &format!("sim:../systems/iometer2008/{sys}.toml"),
                    point,
                    0,
                    &[
                        ("system", sys.to_string()),
                        ("rwmixread", mix.to_string()),
                        ("iodepth", depth.to_string()),
                    ],
                    &[("iops", 100.0 + point as f64), ("mb_s", 1.0)],
                ));
                point += 1;
            }
        }
    }
    let figs = select_figures(&rows, &[]);
    let titles: Vec<String> = figs
        .iter()
        .filter(|f| f.kind == "iops-vs-read")
        .map(|f| match &f.figure {
            Figure::Line(c) => c.title.clone(),
            _ => panic!("expected lines"),
        })
        .collect();
    assert_eq!(
        titles,
        [
            "IOPS against read percentage (system=raid5-4d)",
            "IOPS against read percentage (system=raid10-4d)"
        ]
    );
}

#[test]
fn level_by_chunk_gives_grouped_bars_with_error_bars() {
    let figs = select_figures(&level_chunk(), &[]);
    assert_eq!(figs.len(), 1);
    let Figure::Bars(b) = &figs[0].figure else {
        panic!("expected bars")
    };
    assert_eq!(b.categories, ["4 KiB", "64 KiB", "256 KiB", "1 MiB"]);
    let labels: Vec<&str> = b.series.iter().map(|s| s.label.as_str()).collect();
    // Levels in the order of their numbers, not their text.
    assert_eq!(
        labels,
        ["level=raid0", "level=raid5", "level=raid6", "level=raid10"]
    );
    let (v, err) = b.series[0].values[0].unwrap();
    assert_eq!(v, 302.0, "median of 300, 301, 302, 303, 304");
    assert_eq!(err, Some((300.0, 304.0)));
}

#[test]
fn two_numeric_axes_give_a_heatmap_besides_the_rate_curves() {
    let figs = select_figures(&threads_buffer(), &[]);
    let k: Vec<&str> = figs.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(k, ["rate-vs-bs", "heatmap"]);
    let Figure::Heatmap(h) = &figs[1].figure else {
        panic!()
    };
    assert_eq!(
        h.x_values,
        ["64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB"]
    );
    assert_eq!(h.y_values, ["1", "2", "4", "8", "16"]);
    assert!(h.cells.iter().flatten().all(Option::is_some));
    // Cell (numjobs=16, bs=64k): 100 + 30·4 + 3.
    assert_eq!(h.cells[4][0], Some(223.0));
}

#[test]
fn convergence_steps_give_a_curve_with_the_sustained_rate_marked() {
    let figs = select_figures(&bs_sweep(), &convergence());
    let k: Vec<&str> = figs.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(k, ["rate-vs-bs", "convergence"]);
    let Figure::Line(c) = &figs[1].figure else {
        panic!()
    };
    assert_eq!(c.series.len(), 1);
    assert_eq!(c.series[0].points.len(), 6);
    assert_eq!(
        c.series[0].label, "rw=read, bs=2 MiB",
        "named after the point's parameters"
    );
    assert_eq!(c.hlines.len(), 1);
    assert!(
        c.hlines[0].label.contains("42.0 MB/s"),
        "{}",
        c.hlines[0].label
    );
    assert_eq!(c.series[0].source, Source::Measured);
    // Convergence without run rows still gets its figure.
    assert_eq!(kinds(&[], &convergence()), ["convergence"]);
    // A simulated point's search is drawn as a prediction, as its runs are.
    let mut sim = bs_sweep();
    for r in &mut sim {
        r.source = "simulated".into();
    }
    let figs = select_figures(&sim, &convergence());
    let Figure::Line(c) = &figs[1].figure else {
        panic!()
    };
    assert_eq!(c.series[0].source, Source::Predicted);
}

#[test]
fn many_configurations_are_split_into_several_charts() {
    // bs × rw × numjobs(6) × iodepth(2) = 24 curves per chart would be unreadable.
    let mut rows = Vec::new();
    for (i, (nj, qd)) in [1, 2, 3, 4, 5, 6]
        .iter()
        .flat_map(|n| [1, 8].map(move |q| (*n, q)))
        .enumerate()
    {
        for rw in ["read", "write"] {
            for bs in ["4k", "64k", "1m"] {
                rows.push(row(
                    "wide",
                    "measured",
                    "/dev/x",
                    i as u64,
                    0,
                    &[
                        ("bs", bs.into()),
                        ("rw", rw.into()),
                        ("numjobs", nj.to_string()),
                        ("iodepth", qd.to_string()),
                    ],
                    &[("mb_s", 10.0 + i as f64)],
                ));
            }
        }
    }
    let figs = select_figures(&rows, &[]);
    let lines: Vec<_> = figs.iter().filter(|f| f.kind == "rate-vs-bs").collect();
    assert!(lines.len() >= 2, "split into facets");
    for f in &lines {
        let Figure::Line(c) = &f.figure else { panic!() };
        assert!(c.series.len() <= 10, "{} curves", c.series.len());
        assert!(
            c.title.contains('('),
            "facet named in the title: {}",
            c.title
        );
    }
}

#[test]
fn a_single_configuration_gets_a_bar_per_source() {
    let rows = vec![
        row(
            "one",
            "measured",
            "/dev/x",
            0,
            0,
            &[("bs", "1m".into())],
            &[("mb_s", 100.0)],
        ),
        row(
            "one",
            "simulated",
            "sim:s.toml",
            0,
            0,
            &[("bs", "1m".into())],
            &[("mb_s", 110.0)],
        ),
    ];
    let figs = select_figures(&rows, &[]);
    assert_eq!(figs.len(), 1);
    let Figure::Bars(b) = &figs[0].figure else {
        panic!()
    };
    let labels: Vec<&str> = b.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["measured", "simulated"]);
}

fn check_svg(svg: &str) -> roxmltree::Document<'_> {
    let doc = roxmltree::Document::parse(svg)
        .unwrap_or_else(|e| panic!("SVG not well-formed: {e}\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc
}

#[test]
fn every_figure_is_well_formed_svg_with_labelled_axes() {
    let rows = all_rows();
    let figs = select_figures(&rows, &convergence());
    assert!(figs.len() >= 7);
    for f in &figs {
        let standalone = f.figure.to_svg(&f.id, true);
        let doc = check_svg(&standalone);
        assert_eq!(
            doc.root_element().tag_name().namespace(),
            Some("http://www.w3.org/2000/svg")
        );
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name(("http://www.w3.org/2000/svg", "text")))
            .filter_map(|n| n.text().map(str::to_string))
            .collect();
        assert!(
            texts.iter().any(|t| t == f.figure.title()),
            "{}: title drawn",
            f.id
        );
        match &f.figure {
            Figure::Line(c) => {
                assert!(
                    texts.contains(&c.y.label) && texts.contains(&c.x.label),
                    "{}: axis labels",
                    f.id
                );
                if c.x.unit == raidlab_report::axis::Unit::Bytes {
                    assert!(
                        texts
                            .iter()
                            .any(|t| t.ends_with("KiB") || t.ends_with("MiB")),
                        "{}: binary byte ticks: {texts:?}",
                        f.id
                    );
                }
                let lines = doc
                    .descendants()
                    .filter(|n| n.has_tag_name(("http://www.w3.org/2000/svg", "polyline")))
                    .count();
                let drawn_lines = c
                    .series
                    .iter()
                    .filter(|s| s.source != Source::Reference && s.points.len() > 1)
                    .count();
                assert_eq!(lines, drawn_lines, "{}: one polyline per curve", f.id);
            }
            Figure::Heatmap(h) => {
                assert!(
                    texts.contains(&h.value_label),
                    "{}: colour scale labelled",
                    f.id
                );
            }
            Figure::Bars(b) => {
                assert!(texts.iter().any(|t| t.contains("MB/s")), "{}", f.id);
                assert!(
                    b.series.iter().all(|s| texts.contains(&s.label)),
                    "{}: legend",
                    f.id
                );
            }
        }
        // Inline variant: same drawing without the namespace, still well-formed.
        let inline = f.figure.to_svg(&f.id, false);
        check_svg(&inline);
        assert!(!inline.contains("http"));
    }
}

#[test]
fn labels_with_markup_characters_are_escaped() {
    let rows = vec![
        row(
            "c<&>",
            "measured",
            "/dev/x",
            0,
            0,
            &[("rw", "read\"<b>".into())],
            &[("mb_s", 1.0)],
        ),
        row(
            "c<&>",
            "measured",
            "/dev/x",
            1,
            0,
            &[("rw", "write&".into())],
            &[("mb_s", 2.0)],
        ),
    ];
    for f in select_figures(&rows, &[]) {
        check_svg(&f.figure.to_svg(&f.id, true));
    }
}

#[test]
fn png_rendering_of_a_figure_is_not_blank() {
    let figs = select_figures(&bs_sweep(), &[]);
    let svg = figs[0].figure.to_svg(&figs[0].id, true);
    let r = Rasterizer::new();
    assert!(
        r.font_count() > 0,
        "system fonts are needed for PNG text (Debian: fonts-dejavu-core)"
    );
    let png = r.png(&svg, 1.0).unwrap();
    let (w, h, px) = decode_png(&png).unwrap();
    assert_eq!((w, h), (760, 460));
    let i = ink(&px);
    assert!(i.distinct_colors > 20, "{i:?}");
    assert!(
        i.non_white_fraction > 0.02 && i.non_white_fraction < 0.6,
        "{i:?}"
    );
    // The curves' colours are in the picture: the palette's blue (read) and vermillion.
    let has = |rgb: [u8; 3]| px.chunks_exact(4).any(|p| p[..3] == rgb);
    assert!(has([0x00, 0x72, 0xB2]) && has([0xD5, 0x5E, 0x00]));
}

#[test]
fn a_third_parameter_gives_one_heatmap_per_value() {
    // Seed 002: threads × buffer for each file size.
    let mut rows = Vec::new();
    for (i, file) in ["1g", "64g"].iter().enumerate() {
        for threads in [1u32, 2, 4, 8] {
            for buf in ["1m", "4m", "16m"] {
                rows.push(row(
                    "series",
                    "measured",
                    "/mnt/x",
                    i as u64,
                    0,
                    &[
                        ("threads", threads.to_string()),
                        ("buffer", buf.into()),
                        ("file_size", file.to_string()),
                    ],
                    &[("mb_s", 50.0 * threads as f64)],
                ));
            }
        }
    }
    let figs = select_figures(&rows, &[]);
    let heat: Vec<_> = figs.iter().filter(|f| f.kind == "heatmap").collect();
    assert_eq!(
        heat.len(),
        2,
        "{:?}",
        figs.iter().map(|f| &f.kind).collect::<Vec<_>>()
    );
    let Figure::Heatmap(h) = &heat[1].figure else {
        panic!()
    };
    assert!(
        h.title.contains("file_size=64 GiB") || h.title.contains("file_size=64g"),
        "{}",
        h.title
    );
    assert_eq!(h.x_values, ["1 MiB", "4 MiB", "16 MiB"]);
    assert_eq!(h.y_values, ["1", "2", "4", "8"]);
}

/// Jobs × where they run (two values) with a reference table that lacks the second column:
/// lines against jobs, one per layout, the reference overlaid, rather than a heatmap whose
/// second axis has two rows (and a third, empty one for the reference).
#[test]
fn a_two_valued_parameter_makes_lines_not_a_heatmap_axis() {
    let mut rows = Vec::new();
    let mut point = 0;
    for layout in ["0", "2147483648"] {
        for jobs in [1u32, 2, 4, 8] {
            let rate = if layout == "0" {
                19.0 * jobs.min(2) as f64
            } else {
                19.0
            };
            rows.push(row(
                "ronnie",
                "simulated",
                "sim:fig11.toml",
                point,
                0,
                &[
                    ("numjobs", jobs.to_string()),
                    ("offset_increment", layout.to_string()),
                ],
                &[("mb_s", rate)],
            ));
            point += 1;
        }
    }
    for (jobs, rate) in [(1u32, 14.6), (2, 29.7), (4, 24.5), (8, 23.0)] {
        rows.push(row(
            "ronnie",
            "reference",
            "",
            point,
            0,
            &[("numjobs", jobs.to_string())],
            &[("mb_s", rate)],
        ));
        point += 1;
    }
    let figs = select_figures(&rows, &[]);
    assert_eq!(
        figs.iter().map(|f| f.kind.as_str()).collect::<Vec<_>>(),
        ["rate-vs-numjobs"]
    );
    let Figure::Line(c) = &figs[0].figure else {
        panic!("expected a line chart")
    };
    let labels: Vec<&str> = c.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "offset_increment=0 B (simulated)",
            "offset_increment=2 GiB (simulated)",
            "reference"
        ]
    );
}

/// The simulated points of [`bs_sweep`], each followed by a reference row of the same
/// parameters (as a seed's table gives them), which `edit` may change.
fn simulated_with_reference(
    edit: impl Fn(&mut raidlab_report::RunRow),
) -> Vec<raidlab_report::RunRow> {
    bs_sweep()
        .into_iter()
        .filter(|r| r.source == "simulated")
        .flat_map(|r| {
            let mut reference = r.clone();
            reference.source = "reference".into();
            reference.target = "seed 000 measured".into();
            edit(&mut reference);
            [r, reference]
        })
        .collect()
}

/// A simulated sweep with reference rows and no measurement: the caption names the two
/// sources drawn, not a "solid lines: measured" that no curve is.
#[test]
fn caption_names_only_the_sources_a_figure_draws() {
    let rows = simulated_with_reference(|_| {});
    let figs = select_figures(&rows, &[]);
    assert_eq!(figs.len(), 1);
    let caption = &figs[0].caption;
    assert!(
        caption.contains("Dashed: simulated; open markers: reference."),
        "{caption}"
    );
    assert!(!caption.contains("measured"), "{caption}");

    // Bars (one configuration, two sources) are told apart by their labels, not line styles.
    let one: Vec<_> = rows
        .iter()
        .filter(|r| r.params["bs"] == "65536" && r.params["rw"] == "read")
        .cloned()
        .collect();
    let figs = select_figures(&one, &[]);
    assert_eq!(figs[0].kind, "bars-sources");
    assert!(
        figs[0]
            .caption
            .contains("Each bar's label names its source (simulated, reference)."),
        "{}",
        figs[0].caption
    );
    assert!(!figs[0].caption.contains("Solid"), "{}", figs[0].caption);
}

/// Reference rows measured with another amount than the sweep's points (seed 000's 8 GiB per
/// point beside `--set size=256m`) keep their size: the caption says so, and the size draws
/// no curves of its own.
#[test]
fn caption_names_a_reference_measured_at_another_size() {
    let rows = simulated_with_reference(|reference| {
        reference
            .params
            .insert("size".into(), (8u64 << 30).to_string());
    });
    let figs = select_figures(&rows, &[]);
    assert_eq!(figs.len(), 1);
    let Figure::Line(c) = &figs[0].figure else {
        panic!("expected a line chart")
    };
    let labels: Vec<&str> = c.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "rw=read (simulated)",
            "rw=read (reference)",
            "rw=write (simulated)",
            "rw=write (reference)"
        ]
    );
    assert!(
        figs[0]
            .caption
            .contains("Reference values were measured at total size (size) 8 GiB per point"),
        "{}",
        figs[0].caption
    );
    // The same size on every point is no note.
    let same: Vec<_> = rows
        .into_iter()
        .map(|mut r| {
            r.params.insert("size".into(), (8u64 << 30).to_string());
            r
        })
        .collect();
    let figs = select_figures(&same, &[]);
    assert!(
        !figs[0].caption.contains("Reference values"),
        "{}",
        figs[0].caption
    );
}
