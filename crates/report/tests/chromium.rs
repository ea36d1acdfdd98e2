//! The report in a real browser: headless Chromium (Debian package `chromium`) loads the page
//! with no console message and its screenshot shows the figures. Fails when chromium is
//! missing: the test script installs it.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use raidlab_report::png::{decode_png, ink};
use raidlab_report::write_report;

struct Shot {
    console: Vec<String>,
    png: Vec<u8>,
}

fn screenshot(page: &Path, work: &Path) -> Shot {
    if let Err(e) = Command::new("chromium").arg("--version").output() {
        panic!("chromium cannot be run ({e}): install the Debian package chromium");
    }
    let shot = work.join("shot.png");
    let profile = work.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1200,2400",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running timeout/chromium");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        shot.exists(),
        "chromium wrote no screenshot (status {:?}): {stderr}",
        out.status
    );
    // Console messages of the page (errors, warnings, failed loads) are logged as CONSOLE.
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Failed to load resource"))
        .map(str::to_string)
        .collect();
    Shot {
        console,
        png: std::fs::read(&shot).unwrap(),
    }
}

#[test]
fn report_loads_in_headless_chromium_without_console_errors_and_renders_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let files = write_report(&all_rows(), &convergence(), &[], &out).unwrap();
    let shot = screenshot(&files.index, dir.path());
    assert!(
        shot.console.is_empty(),
        "console messages: {:?}",
        shot.console
    );
    let (w, h, px) = decode_png(&shot.png).unwrap();
    assert_eq!((w, h), (1200, 2400));
    let i = ink(&px);
    assert!(i.distinct_colors > 100, "{i:?}");
    assert!(i.non_white_fraction > 0.03, "{i:?}");
    // The first figure's curves are on screen: pixels of the palette's blue and vermillion.
    let near = |rgb: [i32; 3]| {
        px.chunks_exact(4)
            .filter(|p| (0..3).all(|c| (p[c] as i32 - rgb[c]).abs() <= 12))
            .count()
    };
    assert!(
        near([0x00, 0x72, 0xB2]) > 200,
        "blue curve pixels: {}",
        near([0x00, 0x72, 0xB2])
    );
    assert!(
        near([0xD5, 0x5E, 0x00]) > 200,
        "vermillion curve pixels: {}",
        near([0xD5, 0x5E, 0x00])
    );
}

#[test]
fn the_console_check_sees_errors_and_the_blank_check_sees_blank_pages() {
    // The same checks on a broken, empty page must fail, or they prove nothing.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><script>console.error('deliberate');</script></body></html>",
    )
    .unwrap();
    let shot = screenshot(&page, dir.path());
    assert!(
        shot.console.iter().any(|l| l.contains("deliberate")),
        "console error not seen: {:?}",
        shot.console
    );
    let (_, _, px) = decode_png(&shot.png).unwrap();
    let i = ink(&px);
    assert!(
        i.distinct_colors <= 2 && i.non_white_fraction < 0.001,
        "{i:?}"
    );
}
