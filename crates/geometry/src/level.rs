//! RAID levels and md's layouts (parity placement / copy placement), with mdadm's names and
//! md's on-disk layout numbers.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::GeometryError;

/// The most members one array may have, at every level (see [`Level::members`]).
pub const MAX_MEMBERS: u32 = 1024;

/// A RAID level, as md names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Level {
    /// Concatenation: member 0's data area, then member 1's, ... (md "linear").
    Linear,
    /// Striping without redundancy (md raid0, one zone: equal member sizes).
    Raid0,
    /// n-way mirror: every member holds the whole array.
    Raid1,
    /// md's raid10: striped copies in near / far / offset placement.
    Raid10,
    /// Striping with a dedicated parity member (the last one).
    Raid4,
    /// Striping with one rotating parity block per stripe.
    Raid5,
    /// Striping with two syndromes per stripe: P (XOR) and Q (Reed-Solomon over GF(2^8)).
    Raid6,
}

impl Level {
    /// md's level number (linear is -1 in md).
    pub fn md_number(self) -> i32 {
        match self {
            Level::Linear => -1,
            Level::Raid0 => 0,
            Level::Raid1 => 1,
            Level::Raid10 => 10,
            Level::Raid4 => 4,
            Level::Raid5 => 5,
            Level::Raid6 => 6,
        }
    }

    /// Inverse of [`Level::md_number`].
    pub fn from_md_number(n: i32) -> Option<Level> {
        Some(match n {
            -1 => Level::Linear,
            0 => Level::Raid0,
            1 => Level::Raid1,
            10 => Level::Raid10,
            4 => Level::Raid4,
            5 => Level::Raid5,
            6 => Level::Raid6,
            _ => return None,
        })
    }

    /// True for the levels that keep parity (4, 5, 6).
    pub fn has_parity(self) -> bool {
        matches!(self, Level::Raid4 | Level::Raid5 | Level::Raid6)
    }

    /// The member counts an array of this level may have: at least 1 for linear and raid0, 2
    /// for raid1, raid10, raid4 and raid5 (a copy or a parity block needs a second member), 4
    /// for raid6; at most [`MAX_MEMBERS`]. The one rule for member counts:
    /// [`Geometry::check_members`](crate::Geometry::check_members) checks it for
    /// [`Geometry::new`](crate::Geometry::new), and the simulator's system-file check refuses
    /// by it before the planner is asked.
    pub fn members(self) -> RangeInclusive<u32> {
        let min = match self {
            Level::Linear | Level::Raid0 => 1,
            Level::Raid1 | Level::Raid10 | Level::Raid4 | Level::Raid5 => 2,
            Level::Raid6 => 4,
        };
        min..=MAX_MEMBERS
    }

    /// Parity blocks per stripe (0 for non-parity levels).
    pub fn parity_count(self) -> u32 {
        match self {
            Level::Raid4 | Level::Raid5 => 1,
            Level::Raid6 => 2,
            _ => 0,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Linear => "linear",
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
            Level::Raid4 => "raid4",
            Level::Raid5 => "raid5",
            Level::Raid6 => "raid6",
        })
    }
}

impl FromStr for Level {
    type Err = GeometryError;
    /// Accepts mdadm's spellings: `linear`, `0`/`raid0`/`stripe`, `1`/`raid1`/`mirror`,
    /// `10`/`raid10`, `4`/`raid4`, `5`/`raid5`, `6`/`raid6`.
    fn from_str(s: &str) -> Result<Level, GeometryError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "linear" | "concat" => Level::Linear,
            "0" | "raid0" | "stripe" => Level::Raid0,
            "1" | "raid1" | "mirror" => Level::Raid1,
            "10" | "raid10" => Level::Raid10,
            "4" | "raid4" => Level::Raid4,
            "5" | "raid5" => Level::Raid5,
            "6" | "raid6" => Level::Raid6,
            _ => {
                return Err(GeometryError::usage(format!(
                    "unknown RAID level '{s}' (valid: linear, 0, 1, 10, 4, 5, 6)"
                )))
            }
        })
    }
}

/// md's layouts. For RAID 4/5/6 they say where P (and Q) sit in each stripe and in which order
/// the data chunks follow (drivers/md/raid5.c `raid5_compute_sector`); for RAID 10 how the copies
/// are placed (drivers/md/raid10.c `__raid10_find_phys`). Levels without a layout use `None`.
///
/// Names: "left"/"right" = parity starts on the last/first member and moves left/right one member
/// per stripe; "asymmetric" = data fills the stripe's members in member order, skipping parity;
/// "symmetric" = data starts on the member after parity and wraps (md's default for RAID 5/6:
/// left-symmetric). The `*6` variants are RAID 5's layouts with Q always on the last member; the
/// `Ddf*` ones are the SNIA DDF layouts md offers for RAID 6 (their Q coefficients follow member
/// order, not data order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Layout {
    /// No layout (linear, RAID 0, RAID 1).
    None,
    LeftAsymmetric,
    RightAsymmetric,
    LeftSymmetric,
    RightSymmetric,
    /// Parity on the first member(s) (RAID 6: P on 0, Q on 1).
    ParityFirst,
    /// Parity on the last member(s) (RAID 4's only layout; RAID 6: P then Q at the end).
    ParityLast,
    /// DDF PRL=6 RLQ=1: as right-asymmetric, Q after P, Q coefficients in member order.
    DdfZeroRestart,
    /// DDF PRL=6 RLQ=2: as left-asymmetric but the first stripe is D.. P Q.
    DdfNRestart,
    /// DDF PRL=6 RLQ=3: as left-symmetric but Q is before P.
    DdfNContinue,
    LeftAsymmetric6,
    RightAsymmetric6,
    LeftSymmetric6,
    RightSymmetric6,
    ParityFirst6,
    /// md raid10: `near` copies on adjacent members, `far` copies in further parts of every
    /// member (or, with `offset`, in the next chunk row, shifted by one member).
    /// mdadm: n2 = {near 2, far 1}, f2 = {near 1, far 2}, o2 = {near 1, far 2, offset}.
    Raid10 {
        near: u32,
        far: u32,
        offset: bool,
    },
}

const PARITY_LAYOUT_NAMES: &[(&str, Layout)] = &[
    ("left-asymmetric", Layout::LeftAsymmetric),
    ("right-asymmetric", Layout::RightAsymmetric),
    ("left-symmetric", Layout::LeftSymmetric),
    ("right-symmetric", Layout::RightSymmetric),
    ("parity-first", Layout::ParityFirst),
    ("parity-last", Layout::ParityLast),
    ("ddf-zero-restart", Layout::DdfZeroRestart),
    ("ddf-n-restart", Layout::DdfNRestart),
    ("ddf-n-continue", Layout::DdfNContinue),
    ("left-asymmetric-6", Layout::LeftAsymmetric6),
    ("right-asymmetric-6", Layout::RightAsymmetric6),
    ("left-symmetric-6", Layout::LeftSymmetric6),
    ("right-symmetric-6", Layout::RightSymmetric6),
    ("parity-first-6", Layout::ParityFirst6),
];

impl Layout {
    /// md's default layout for a level: left-symmetric for RAID 5/6, parity-last for RAID 4,
    /// n2 for RAID 10, `None` otherwise.
    pub fn default_for(level: Level) -> Layout {
        match level {
            Level::Raid5 | Level::Raid6 => Layout::LeftSymmetric,
            Level::Raid4 => Layout::ParityLast,
            Level::Raid10 => Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            _ => Layout::None,
        }
    }

    /// Whether md accepts this layout for `level`.
    pub fn valid_for(self, level: Level) -> bool {
        use Layout::*;
        match level {
            Level::Linear | Level::Raid0 | Level::Raid1 => self == None,
            Level::Raid4 => self == ParityLast,
            Level::Raid5 => matches!(
                self,
                LeftAsymmetric
                    | RightAsymmetric
                    | LeftSymmetric
                    | RightSymmetric
                    | ParityFirst
                    | ParityLast
            ),
            Level::Raid6 => !matches!(self, None | Raid10 { .. }),
            Level::Raid10 => matches!(self, Raid10 { .. }),
        }
    }

    /// md's numeric layout as stored in its superblock: `ALGORITHM_*` for RAID 4/5/6
    /// (include/linux/raid/pq.h / raid5.h), `near | far << 8 | offset << 16` for RAID 10, 0 otherwise.
    pub fn md_code(self) -> u32 {
        use Layout::*;
        match self {
            None => 0,
            LeftAsymmetric => 0,
            RightAsymmetric => 1,
            LeftSymmetric => 2,
            RightSymmetric => 3,
            ParityFirst => 4,
            ParityLast => 5,
            DdfZeroRestart => 8,
            DdfNRestart => 9,
            DdfNContinue => 10,
            LeftAsymmetric6 => 16,
            RightAsymmetric6 => 17,
            LeftSymmetric6 => 18,
            RightSymmetric6 => 19,
            ParityFirst6 => 20,
            Raid10 { near, far, offset } => near | (far << 8) | ((offset as u32) << 16),
        }
    }

    /// Inverse of [`Layout::md_code`] for a given level.
    pub fn from_md_code(level: Level, code: u32) -> Option<Layout> {
        use Layout::*;
        let l = match level {
            Level::Linear | Level::Raid0 | Level::Raid1 => None,
            Level::Raid10 => {
                if code >> 17 != 0 {
                    return Option::None;
                }
                Raid10 {
                    near: code & 0xff,
                    far: (code >> 8) & 0xff,
                    offset: code & (1 << 16) != 0,
                }
            }
            _ => match code {
                0 => LeftAsymmetric,
                1 => RightAsymmetric,
                2 => LeftSymmetric,
                3 => RightSymmetric,
                4 => ParityFirst,
                5 => ParityLast,
                8 => DdfZeroRestart,
                9 => DdfNRestart,
                10 => DdfNContinue,
                16 => LeftAsymmetric6,
                17 => RightAsymmetric6,
                18 => LeftSymmetric6,
                19 => RightSymmetric6,
                20 => ParityFirst6,
                _ => return Option::None,
            },
        };
        l.valid_for(level).then_some(l)
    }

    /// Parse mdadm's layout names for `level`: `left-symmetric` (also `ls`), `la`, `ra`, `rs`,
    /// `parity-first`, `parity-last`, `ddf-zero-restart`, `ddf-N-restart`, `ddf-N-continue`,
    /// `*-6` variants (`parity-last-6` is the same as `parity-last`), RAID 10's `n2`, `f2`, `o2`,
    /// `n2f2`..., and `none`/`default`.
    pub fn parse(level: Level, s: &str) -> Result<Layout, GeometryError> {
        let lower = s.to_ascii_lowercase();
        let layout = if lower.is_empty() || lower == "default" {
            Some(Layout::default_for(level))
        } else if lower == "none" {
            Some(Layout::None)
        } else if level == Level::Raid10 {
            parse_raid10(&lower)
        } else {
            let alias = match lower.as_str() {
                "la" => "left-asymmetric",
                "ra" => "right-asymmetric",
                "ls" => "left-symmetric",
                "rs" => "right-symmetric",
                "parity-last-6" => "parity-last",
                other => other,
            };
            PARITY_LAYOUT_NAMES
                .iter()
                .find(|(n, _)| *n == alias)
                .map(|(_, l)| *l)
        };
        match layout {
            Some(l) if l.valid_for(level) => Ok(l),
            _ => Err(GeometryError::usage(format!(
                "layout '{s}' is not valid for {level} (valid: {})",
                Layout::valid_names(level)
            ))),
        }
    }

    fn valid_names(level: Level) -> String {
        match level {
            Level::Linear | Level::Raid0 | Level::Raid1 => "none".into(),
            Level::Raid4 => "parity-last".into(),
            Level::Raid10 => "nN, fN, oN, nNfN (e.g. n2, f2, o2)".into(),
            _ => PARITY_LAYOUT_NAMES
                .iter()
                .filter(|(_, l)| l.valid_for(level))
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// True for RAID 6's DDF layouts, whose Q coefficients follow member order.
    pub fn is_ddf(self) -> bool {
        matches!(
            self,
            Layout::DdfZeroRestart | Layout::DdfNRestart | Layout::DdfNContinue
        )
    }
}

fn parse_raid10(s: &str) -> Option<Layout> {
    // Sequences of <letter><count>: n = near, f = far, o = offset (far copies, offset placement).
    let (mut near, mut far, mut offset) = (1u32, 1u32, false);
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let c = rest.as_bytes()[0];
        let digits: String = rest[1..]
            .chars()
            .take_while(|d| d.is_ascii_digit())
            .collect();
        let n: u32 = digits.parse().ok()?;
        if n == 0 || n > 255 {
            return None;
        }
        match c {
            b'n' => near = n,
            b'f' => far = n,
            b'o' => {
                far = n;
                offset = true
            }
            _ => return None,
        }
        rest = &rest[1 + digits.len()..];
    }
    Some(Layout::Raid10 { near, far, offset })
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::None => f.write_str("none"),
            Layout::Raid10 { near, far, offset } => {
                let mut s = String::new();
                if *near > 1 || *far == 1 {
                    s.push_str(&format!("n{near}"));
                }
                if *far > 1 {
                    s.push_str(&format!("{}{far}", if *offset { 'o' } else { 'f' }));
                }
                f.write_str(&s)
            }
            l => {
                let name = PARITY_LAYOUT_NAMES
                    .iter()
                    .find(|(_, x)| x == l)
                    .map(|(n, _)| *n)
                    .unwrap_or("?");
                // mdadm spells the DDF ones with a capital N.
                f.write_str(&name.replace("-n-", "-N-"))
            }
        }
    }
}
