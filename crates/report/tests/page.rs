//! The written report: files on disk, a self-contained page, the limits table, bad output dirs.

mod common;

use common::*;
use raidlab_report::{
    write_report, write_report_with, CampaignMeta, ComponentLimit, LimitsInput, ReportMeta,
};

fn limits() -> Vec<LimitsInput> {
    vec![LimitsInput {
        campaign: Some("osc-full".into()),
        target: None,
        origin: "declared in test".into(),
        components: vec![
            ComponentLimit {
                name: "disks".into(),
                kind: "disk".into(),
                bound_bytes_s: 1242e6,
                note: "36 × 34.5 MB/s".into(),
            },
            ComponentLimit {
                name: "FC links".into(),
                kind: "link".into(),
                bound_bytes_s: 425e6,
                note: "2 × 212.5 MB/s".into(),
            },
        ],
    }]
}

/// Every href/src value in the page.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find('"').unwrap();
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn report_is_one_self_contained_page_with_figures_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let files = write_report(&all_rows(), &convergence(), &limits(), &out).unwrap();
    assert_eq!(files.index, out.join("index.html"));
    assert!(files.svgs.len() >= 7);
    assert_eq!(
        files.pngs.len(),
        files.svgs.len(),
        "a PNG per figure: {:?}",
        files.warnings
    );
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
    let html = std::fs::read_to_string(&files.index).unwrap();

    // Nothing outside the folder: no scheme anywhere, no script, no CSS import/url().
    assert!(!html.contains("://"), "an absolute URL in the page");
    for bad in [
        "<script", "@import", "<iframe", "<link", "<img", "<object", "<embed",
    ] {
        assert!(!html.contains(bad), "page contains {bad}");
    }
    // url() only for clip paths within the page.
    for (i, _) in html.match_indices("url(") {
        let target = &html[i + 4..];
        let id = &target[1..target.find(')').unwrap()];
        assert!(
            target.starts_with('#') && html.contains(&format!("id=\"{id}\"")),
            "url() leaves the page: {}",
            &target[..20]
        );
    }
    let refs = references(&html);
    assert!(!refs.is_empty());
    for r in &refs {
        if let Some(anchor) = r.strip_prefix('#') {
            assert!(
                html.contains(&format!("id=\"{anchor}\"")),
                "dangling anchor {r}"
            );
        } else {
            assert!(
                !r.contains('/') && !r.contains(".."),
                "reference leaves the folder: {r}"
            );
            assert!(out.join(r).is_file(), "referenced file missing: {r}");
        }
    }
    // Figures inline, numbered, captioned; tables of points; the limits table.
    assert_eq!(html.matches("<svg").count(), files.svgs.len());
    assert!(html.contains("<b>Figure 1.</b>"));
    assert!(html.contains("MB/s median") && html.contains("95% CI of mean"));
    assert!(html.contains("FC links — bounds the path"));
    // Units are spelled out.
    assert!(html.contains("MB/s is decimal"));
    assert!(!out.join(".raidlab-report-probe").exists());
}

#[test]
fn page_carries_description_environment_and_commands() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = ReportMeta {
        title: Some("Chain <study>".into()),
        command: Some("raidlab report lab.db --out r".into()),
        ..Default::default()
    };
    meta.campaigns.insert(
        "chain".into(),
        CampaignMeta {
            description: "One RAID-5 chain, block sizes 512 B to 2 MiB.".into(),
            command: "raidlab sweep recipes/seed-000.toml".into(),
            environment: vec![
                ("kernel".into(), "6.1.0".into()),
                ("device".into(), "/dev/sdb: QEMU HARDDISK".into()),
            ],
        },
    );
    write_report_with(&bs_sweep(), &[], &[], &meta, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("<title>Chain &lt;study&gt;</title>"));
    assert!(html.contains("One RAID-5 chain"));
    assert!(html.contains("<dt>kernel</dt><dd>6.1.0</dd>"));
    assert!(html.contains("data from <code>raidlab sweep recipes/seed-000.toml</code>"));
    assert!(html.contains("figure by <code>raidlab report lab.db --out r</code>"));
}

#[test]
fn imprecise_points_are_flagged() {
    let mut rows = level_chunk();
    // One point with 20% spread.
    rows.push(row(
        "chunks",
        "measured",
        "array:m0,m1,m2,m3",
        0,
        5,
        &[
            ("level", "raid0".into()),
            ("chunk", "4k".into()),
            ("rw", "read".into()),
            ("bs", "1m".into()),
        ],
        &[("mb_s", 360.0)],
    ));
    let dir = tempfile::tempdir().unwrap();
    write_report(&rows, &[], &[], dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert_eq!(html.matches("<tr class=\"flag\">").count(), 1);
    assert!(html.contains("1 point(s) spread more than 5%"));
}

#[test]
fn empty_database_still_gives_a_page_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_report(&[], &[], &[], dir.path()).unwrap();
    assert!(files.svgs.is_empty());
    let html = std::fs::read_to_string(files.index).unwrap();
    assert!(html.contains("holds no runs yet"));
}

#[test]
fn unwritable_or_file_output_is_a_usage_error_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"keep me").unwrap();
    let e = write_report(&bs_sweep(), &[], &[], &file).unwrap_err();
    assert!(e.is_usage());
    assert!(e.to_string().contains("is a file"), "{e}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"keep me",
        "never overwritten"
    );
    let e = write_report(&bs_sweep(), &[], &[], &file.join("sub")).unwrap_err();
    assert!(e.is_usage() && !e.to_string().contains('\n'), "{e}");
    assert!(
        e.to_string().contains("cannot create report directory"),
        "{e}"
    );
}
