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

#[test]
fn raid6_layouts_5_members() {
    let t = |l| table(&g(Level::Raid6, l, 5), 5);
    assert_eq!(
        t(Layout::LeftSymmetric),
        rows(&[
            "Q 0 1 2 P",
            "3 4 5 P Q",
            "7 8 P Q 6",
            "11 P Q 9 10",
            "P Q 12 13 14"
        ])
    );
    assert_eq!(
        t(Layout::LeftAsymmetric),
        rows(&[
            "Q 0 1 2 P",
            "3 4 5 P Q",
            "6 7 P Q 8",
            "9 P Q 10 11",
            "P Q 12 13 14"
        ])
    );
    let ra = rows(&[
        "P Q 0 1 2",
        "3 P Q 4 5",
        "6 7 P Q 8",
        "9 10 11 P Q",
        "Q 12 13 14 P",
    ]);
    assert_eq!(t(Layout::RightAsymmetric), ra);
    assert_eq!(t(Layout::DdfZeroRestart), ra);
    assert_eq!(
        t(Layout::RightSymmetric),
        rows(&[
            "P Q 0 1 2",
            "5 P Q 3 4",
            "7 8 P Q 6",
            "9 10 11 P Q",
            "Q 12 13 14 P"
        ])
    );
    assert_eq!(
        t(Layout::DdfNRestart),
        rows(&[
            "0 1 2 P Q",
            "3 4 P Q 5",
            "6 P Q 7 8",
            "P Q 9 10 11",
            "Q 12 13 14 P"
        ])
    );
    assert_eq!(
        t(Layout::DdfNContinue),
        rows(&[
            "0 1 2 Q P",
            "4 5 Q P 3",
            "8 Q P 6 7",
            "Q P 9 10 11",
            "P 12 13 14 Q"
        ])
    );
    assert_eq!(
        t(Layout::ParityFirst)[..2],
        rows(&["P Q 0 1 2", "P Q 3 4 5"])[..]
    );
    assert_eq!(
        t(Layout::ParityLast)[..2],
        rows(&["0 1 2 P Q", "3 4 5 P Q"])[..]
    );
    assert_eq!(
        t(Layout::LeftSymmetric6)[..4],
        rows(&["0 1 2 P Q", "4 5 P 3 Q", "8 P 6 7 Q", "P 9 10 11 Q"])[..]
    );
    assert_eq!(
        t(Layout::LeftAsymmetric6)[..4],
        rows(&["0 1 2 P Q", "3 4 P 5 Q", "6 P 7 8 Q", "P 9 10 11 Q"])[..]
    );
    assert_eq!(
        t(Layout::RightSymmetric6)[..4],
        rows(&["P 0 1 2 Q", "5 P 3 4 Q", "7 8 P 6 Q", "9 10 11 P Q"])[..]
    );
    assert_eq!(
        t(Layout::RightAsymmetric6)[..4],
        rows(&["P 0 1 2 Q", "3 P 4 5 Q", "6 7 P 8 Q", "9 10 11 P Q"])[..]
    );
    assert_eq!(t(Layout::ParityFirst6)[..1], rows(&["P 0 1 2 Q"])[..]);
}

#[test]
fn raid6_q_coefficients_follow_md_syndrome_order() {
    // Symmetric: md's walk from the member after Q meets data in logical order.
    let ls = g(Level::Raid6, Layout::LeftSymmetric, 5)
        .stripe_layout(2)
        .unwrap();
    assert_eq!((ls.q_slot.clone(), ls.syndrome_slots), (vec![0, 1, 2], 3));
    // Left-asymmetric stripe 2 is "D0 D1 P Q D2": the walk starts after Q at member 4 (D2).
    let la = g(Level::Raid6, Layout::LeftAsymmetric, 5)
        .stripe_layout(2)
        .unwrap();
    assert_eq!(la.data, vec![0, 1, 4]);
    assert_eq!(la.q_slot, vec![1, 2, 0]);
    // DDF: coefficient = member index, P and Q slots are zeros.
    let ddf = g(Level::Raid6, Layout::DdfNContinue, 5)
        .stripe_layout(1)
        .unwrap();
    assert_eq!(ddf.data, vec![4, 0, 1]);
    assert_eq!((ddf.q_slot.clone(), ddf.syndrome_slots), (vec![4, 0, 1], 5));
}

fn r10(near: u32, far: u32, offset: bool, members: u32) -> Geometry {
    Geometry::new(
        Level::Raid10,
        Layout::Raid10 { near, far, offset },
        K,
        members,
        16 * K,
    )
    .unwrap()
}

fn locs(geom: &Geometry, chunk: u64) -> Vec<(u32, u64)> {
    geom.map(chunk * K)
        .iter()
        .map(|l| (l.member, l.offset / K))
        .collect()
}

#[test]
fn raid10_near_far_offset() {
    let n2 = r10(2, 1, false, 4);
    assert_eq!(locs(&n2, 0), vec![(0, 0), (1, 0)]);
    assert_eq!(locs(&n2, 1), vec![(2, 0), (3, 0)]);
    assert_eq!(locs(&n2, 2), vec![(0, 1), (1, 1)]);
    assert_eq!(n2.capacity(), 2 * 16 * K);
    let n2_5 = r10(2, 1, false, 5);
    assert_eq!(locs(&n2_5, 2), vec![(4, 0), (0, 1)]);
    assert_eq!(locs(&n2_5, 3), vec![(1, 1), (2, 1)]);
    assert_eq!(n2_5.capacity(), 40 * K);
    // far: second copy half a member further down, shifted one member.
    let f2 = r10(1, 2, false, 4);
    assert_eq!(locs(&f2, 0), vec![(0, 0), (1, 8)]);
    assert_eq!(locs(&f2, 3), vec![(3, 0), (0, 8)]);
    assert_eq!(locs(&f2, 4), vec![(0, 1), (1, 9)]);
    let f2_5 = r10(1, 2, false, 5);
    assert_eq!(locs(&f2_5, 4), vec![(4, 0), (0, 8)]);
    assert_eq!(f2_5.capacity(), 40 * K);
    // offset: copy in the next chunk row, shifted one member.
    let o2 = r10(1, 2, true, 4);
    assert_eq!(locs(&o2, 0), vec![(0, 0), (1, 1)]);
    assert_eq!(locs(&o2, 3), vec![(3, 0), (0, 1)]);
    assert_eq!(locs(&o2, 4), vec![(0, 2), (1, 3)]);
    let o2_5 = r10(1, 2, true, 5);
    assert_eq!(locs(&o2_5, 4), vec![(4, 0), (0, 1)]);
    assert_eq!(locs(&o2_5, 5), vec![(0, 2), (1, 3)]);
}

#[test]
fn names_and_md_codes_round_trip() {
    for level in [Level::Raid4, Level::Raid5, Level::Raid6, Level::Raid10] {
        for name in [
            "left-symmetric",
            "la",
            "ra",
            "rs",
            "parity-first",
            "parity-last",
            "ddf-N-restart",
            "ddf-zero-restart",
            "ddf-N-continue",
            "left-symmetric-6",
            "parity-first-6",
            "n2",
            "f2",
            "o2",
            "n2f2",
            "n3",
        ] {
            if let Ok(l) = Layout::parse(level, name) {
                assert_eq!(Layout::parse(level, &l.to_string()), Ok(l), "{name}");
                assert_eq!(Layout::from_md_code(level, l.md_code()), Some(l), "{name}");
            }
        }
    }
    assert_eq!(Layout::parse(Level::Raid5, "ls"), Ok(Layout::LeftSymmetric));
    assert_eq!(
        Layout::parse(Level::Raid10, "o2"),
        Ok(Layout::Raid10 {
            near: 1,
            far: 2,
            offset: true
        })
    );
    assert_eq!(
        Layout::md_code(Layout::Raid10 {
            near: 2,
            far: 1,
            offset: false
        }),
        0x102
    );
    assert!(Layout::parse(Level::Raid5, "ddf-N-restart").is_err());
    let e = Layout::parse(Level::Raid5, "sideways")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("sideways") && e.contains("left-symmetric"),
        "{e}"
    );
    assert_eq!("6".parse::<Level>(), Ok(Level::Raid6));
    assert!("7".parse::<Level>().is_err());
}

#[test]
fn bad_geometries_are_refused_with_reasons() {
    let e = Geometry::new(Level::Raid6, Layout::None, K, 3, 16 * K)
        .unwrap_err()
        .to_string();
    assert!(e.contains("raid6") && e.contains("4"), "{e}");
    assert!(Geometry::new(Level::Raid5, Layout::None, 3000, 4, 16 * K).is_err());
    assert!(Geometry::new(Level::Raid5, Layout::None, K, 4, K - 1).is_err());
    assert!(Geometry::new(
        Level::Raid10,
        Layout::Raid10 {
            near: 3,
            far: 1,
            offset: false
        },
        K,
        2,
        16 * K
    )
    .is_err());
    assert!(Geometry::new(Level::Raid5, Layout::DdfNRestart, K, 4, 16 * K).is_err());
    assert_eq!(
        Geometry::new(Level::Raid5, Layout::None, K, 4, 16 * K)
            .unwrap()
            .layout,
        Layout::LeftSymmetric
    );
}

/// `Geometry::check_members` and `Level::members` are the rule `Geometry::new` refuses member
/// counts by, so callers that check a count early (the simulator's system-file check) refuse
/// exactly what the planner would: at every level, md's default layout and raid10's others.
#[test]
fn member_counts_are_one_rule() {
    use raidlab_geometry::MAX_MEMBERS;
    let levels = [
        Level::Linear,
        Level::Raid0,
        Level::Raid1,
        Level::Raid10,
        Level::Raid4,
        Level::Raid5,
        Level::Raid6,
    ];
    let f3 = Layout::Raid10 {
        near: 1,
        far: 3,
        offset: false,
    };
    let cases = levels
        .iter()
        .map(|&l| (l, Layout::None))
        .chain([(Level::Raid10, f3)]);
    for (level, layout) in cases {
        for n in (0..=9).chain([MAX_MEMBERS, MAX_MEMBERS + 1]) {
            let early = Geometry::check_members(level, layout, n);
            let built = Geometry::new(level, layout, K, n, 16 * K);
            assert_eq!(early.is_ok(), built.is_ok(), "{level} {layout:?} × {n}");
            if let (Err(e), Err(b)) = (&early, &built) {
                assert_eq!(e.to_string(), b.to_string());
            }
            if layout == Layout::None {
                assert_eq!(level.members().contains(&n), built.is_ok(), "{level} × {n}");
            }
        }
    }
    assert_eq!(Level::Raid1.members(), 2..=MAX_MEMBERS);
    assert_eq!(Level::Raid6.members(), 4..=MAX_MEMBERS);
    let e = Geometry::check_members(Level::Raid1, Layout::None, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("raid1") && e.contains("2 to 1024"), "{e}");
}

#[test]
fn geometry_describes_itself_in_one_line() {
    let d = g(Level::Raid5, Layout::LeftSymmetric, 5).to_string();
    assert_eq!(d, format!("raid5 left-symmetric, 5 members, 64 KiB chunks, 4 data + 1 parity per stripe, {} bytes", 4 * 16 * K));
    let d = r10(1, 2, true, 4).to_string();
    assert!(
        d.starts_with("raid10 o2, 4 members, 64 KiB chunks, 2 copies"),
        "{d}"
    );
}
