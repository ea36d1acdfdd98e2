//! Layout tables pinned to md (drivers/md/raid5.c raid5_compute_sector, raid10.c), computed by
//! hand from md's formulas.

use raidlab_geometry::{Geometry, Layout, Level, Location};

const K: u64 = 64 * 1024;

fn g(level: Level, layout: Layout, members: u32) -> Geometry {
    Geometry::new(level, layout, K, members, 16 * K).unwrap()
}

/// Row per stripe: for each member, 'P', 'Q' or the data chunk number (as a string).
fn table(geom: &Geometry, stripes: u64) -> Vec<Vec<String>> {
    (0..stripes)
        .map(|s| {
            let sl = geom.stripe_layout(s).unwrap();
            (0..geom.members)
                .map(|m| {
                    if sl.p == Some(m) {
                        "P".to_string()
                    } else if sl.q == Some(m) {
                        "Q".to_string()
                    } else {
                        let k = sl.data_index(m).unwrap() as u64;
                        (s * geom.data_disks() as u64 + k).to_string()
                    }
                })
                .collect()
        })
        .collect()
}

fn rows(s: &[&str]) -> Vec<Vec<String>> {
    s.iter()
        .map(|r| r.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn raid5_left_symmetric_4_members() {
    let t = table(&g(Level::Raid5, Layout::LeftSymmetric, 4), 5);
    assert_eq!(
        t,
        rows(&["0 1 2 P", "4 5 P 3", "8 P 6 7", "P 9 10 11", "12 13 14 P"])
    );
}

#[test]
fn raid5_other_layouts_4_members() {
    assert_eq!(
        table(&g(Level::Raid5, Layout::LeftAsymmetric, 4), 4),
        rows(&["0 1 2 P", "3 4 P 5", "6 P 7 8", "P 9 10 11"])
    );
    assert_eq!(
        table(&g(Level::Raid5, Layout::RightAsymmetric, 4), 4),
        rows(&["P 0 1 2", "3 P 4 5", "6 7 P 8", "9 10 11 P"])
    );
    assert_eq!(
        table(&g(Level::Raid5, Layout::RightSymmetric, 4), 4),
        rows(&["P 0 1 2", "5 P 3 4", "7 8 P 6", "9 10 11 P"])
    );
    assert_eq!(
        table(&g(Level::Raid5, Layout::ParityFirst, 4), 2),
        rows(&["P 0 1 2", "P 3 4 5"])
    );
    assert_eq!(
        table(&g(Level::Raid5, Layout::ParityLast, 4), 2),
        rows(&["0 1 2 P", "3 4 5 P"])
    );
    assert_eq!(
        table(&g(Level::Raid4, Layout::ParityLast, 4), 2),
        rows(&["0 1 2 P", "3 4 5 P"])
    );
}

#[test]
fn raid5_map_offsets() {
    let geom = g(Level::Raid5, Layout::LeftSymmetric, 4);
    // Chunk 3 is in stripe 1 on member 3 at member offset 1 chunk.
    assert_eq!(
        geom.map(3 * K + 100),
        vec![Location {
            member: 3,
            offset: K + 100
        }]
    );
    assert_eq!(
        geom.map(4 * K),
        vec![Location {
            member: 0,
            offset: K
        }]
    );
    assert_eq!(geom.capacity(), 3 * 16 * K);
    assert!(geom.map(geom.capacity()).is_empty());
}

#[test]
fn raid0_and_raid1_and_linear() {
    let r0 = g(Level::Raid0, Layout::None, 3);
    assert_eq!(
        r0.map(4 * K + 5),
        vec![Location {
            member: 1,
            offset: K + 5
        }]
    );
    assert_eq!(r0.capacity(), 3 * 16 * K);
    let r1 = g(Level::Raid1, Layout::None, 3);
    assert_eq!(
        r1.map(7),
        (0..3)
            .map(|m| Location {
                member: m,
                offset: 7
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(r1.capacity(), 16 * K);
    assert_eq!(r1.redundancy(), 2);
    let lin = Geometry::new(Level::Linear, Layout::None, K, 3, 1000).unwrap();
    assert_eq!(
        lin.map(2500),
        vec![Location {
            member: 2,
            offset: 500
        }]
    );
    assert_eq!(lin.capacity(), 3000);
}
