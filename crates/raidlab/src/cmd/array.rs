//! `raidlab array`: build and manage user-space RAID arrays with mdadm's verbs.
//!
//! Members are given as separate arguments or comma-joined (`a,b,c`, as in
//! `--filename array:a,b,c`). Verbs that act on one member of an array take the array's
//! members first, then the member: `raidlab array fail a,b,c,d b`. `fail`, `remove` and the
//! spare assignment of `rebuild` also record the change on the array's members found beside
//! those given (in their directories), so a member left out is not out of date afterwards.

use crate::error::CliError;
use raidlab_array::control::MemberLocks;
use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::{manage, ArrayError};
use raidlab_engine::ewriteln;
use raidlab_workload::size::parse_size;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ArrayArgs {
    #[command(subcommand)]
    cmd: ArrayCmd,
}

#[derive(clap::Subcommand)]
enum ArrayCmd {
    /// Create an array: write superblocks and a write-intent bitmap to each member, then
    /// run the initial sync, as md does: every member's data area is written (zeros over
    /// member files it made or that are all holes; otherwise holes filled and redundancy
    /// made consistent with what the members hold), so reads measure the devices, not holes
    /// of sparse files. Ctrl-C stops the sync and leaves the array marked as not synced
    /// (`status` shows it, `run` warns, `rebuild` finishes it).
    ///
    /// Nested arrays: give the children with --of instead of members, e.g. RAID 0 with
    /// 256 KiB chunks over four 8+1 RAID 5 with 64 KiB chunks:
    /// `raidlab array create --level 0 --chunk 256k --of 5:64k:d0,…,d8 --of 5:64k:d9,…`
    /// (each --of is LEVEL:CHUNK:M1,M2,… or LEVEL:CHUNK:LAYOUT:M1,M2,…).
    Create {
        /// linear, 0, 1, 10, 4, 5, 6 (raid5 and the like also accepted)
        #[arg(long, short = 'l')]
        level: String,
        /// mdadm's layout: left-symmetric (default for 5 and 6), right-symmetric,
        /// left-asymmetric, right-asymmetric, parity-first, parity-last; for 6 also
        /// ddf-zero-restart, ddf-N-restart, ddf-N-continue and the *-6 variants; n2/f2/o2 for 10
        #[arg(long, short = 'p')]
        layout: Option<String>,
        /// Chunk size (default 512k, like mdadm); a bare number is bytes, as every raidlab
        /// size (mdadm reads one as KiB: give 64k for its 64)
        #[arg(long, short = 'c', allow_hyphen_values = true)]
        chunk: Option<String>,
        /// How many devices the array has (mdadm's --raid-devices): checked against the
        /// members (or --of children) given, one device each
        #[arg(long = "raid-devices", short = 'n')]
        raid_devices: Option<String>,
        /// Create missing member files with this size (existing members are used whole:
        /// not mdadm's --size, which caps what each device gives)
        #[arg(long, allow_hyphen_values = true)]
        size: Option<String>,
        /// Overwrite members that hold data (a filesystem, a partition table, nonzero bytes)
        #[arg(long)]
        force: bool,
        /// Skip the initial sync (mdadm's --assume-clean: the members are consistent
        /// already, e.g. all zeros). Sparse member files stay sparse: reads of regions not yet
        /// written then read holes, which reach no device; write the array first to measure it
        #[arg(long = "assume-clean")]
        assume_clean: bool,
        /// A child array (nesting): LEVEL:CHUNK:M1,M2,… ; repeat for each child
        #[arg(long = "of")]
        of: Vec<String>,
        /// Member files or block devices
        members: Vec<String>,
    },
    /// Show an array's state from its members' superblocks.
    ///
    /// Members are numbered as mdadm --detail numbers them: a slot's member by its slot
    /// (role), spares after the slots in the order they were added. The members' superblocks
    /// record every spare, so spares whose paths are not given are listed too, one line each
    /// saying the path is not known (a device's path is not recorded, only its uuid).
    Status {
        #[arg(long = "output-format", default_value = "normal", value_parser = ["normal", "json"])]
        output_format: String,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Mark a member faulty (of a served array: the serving process does it, as asked).
    ///
    /// The change is recorded on every member of the array: those given, and those found in
    /// the same directories though not given (a superblock names its members by device uuid,
    /// not path). A member found nowhere, or found twice (a copy beside it), is named in one
    /// line of warning; it keeps the old record. `remove` and `rebuild` do the same.
    Fail {
        /// The array's members, comma-joined
        array: String,
        member: String,
        /// Fail it even if the array then has more failed members than it survives
        #[arg(long)]
        force: bool,
    },
    /// Remove a faulty member (or a spare) from the array and erase its superblock and
    /// bitmap, leaving its data area and a record of the array and slot it left: `add` takes
    /// it back into this array without --force (md's remove, then add). A spare
    /// whose device is gone is named by the device uuid `status` lists for it ("path not
    /// known"): the members forget it.
    Remove { array: String, member: String },
    /// Add a member as a spare; `rebuild` puts it in place of a failed one, the spare added
    /// first in the lowest slot out of service (as md does). The members given, and those
    /// found beside them (as `fail` finds them), record it, so `status` of the array lists it.
    /// A raid0 or linear array not inside a redundant one takes no spares (none could be used).
    ///
    /// In a nested array the spare joins the leaf array with a slot out of service and no
    /// spare for it yet (or give only that child's members as ARRAY). A child that lost more
    /// members than it survives (a disk of a RAID 0 child, two of a RAID 5 child) is brought
    /// back the way md users do it — replace the dead disks, re-create the child, add it to
    /// the parent: `fail --force` / `remove` the dead disks, `add` a new disk for each, then
    /// `rebuild`, which rewrites that whole child from the parent's redundancy.
    Add {
        array: String,
        member: String,
        /// Overwrite a member that holds data
        #[arg(long)]
        force: bool,
    },
    /// Rebuild failed slots onto spares (resumable: progress is kept in the superblocks),
    /// then finish an initial sync that was interrupted, from where it stopped (in a nested
    /// array, the leaves' and each enclosing array's own pass from where each stopped).
    ///
    /// Leaf arrays rebuild their own members. A child array with spares in more slots than
    /// it survives is rebuilt whole by its enclosing array from that array's redundancy (its
    /// other members are rewritten too; status shows the child rebuilding at the parent's
    /// level). The rebuild holds the array's members while it runs (`run` and `serve` refuse
    /// the busy array); interrupted, the array serves correct data half rebuilt and the next
    /// `rebuild` resumes. Fails in one line when the child's data is lost: an enclosing array
    /// without redundancy (RAID 0 over RAID 5s), or more children out than it survives.
    ///
    /// The array's members in date and its spares found beside those given (in the same
    /// directories, as `fail` finds them) take part too, named in one line: a member left out
    /// of the list is neither rebuilt over by a spare nor missed by the rebuild.
    Rebuild {
        /// Start a dirty and degraded array anyway
        #[arg(long)]
        force: bool,
        /// No progress line on stderr
        #[arg(long)]
        quiet: bool,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Check redundancy (--check) or repair it (--repair); prints the mismatch count.
    Scrub {
        #[arg(long, conflicts_with = "repair")]
        check: bool,
        #[arg(long)]
        repair: bool,
        #[arg(long = "output-format", default_value = "normal", value_parser = ["normal", "json"])]
        output_format: String,
        #[arg(long)]
        quiet: bool,
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Serve the array as the file DIR/volume through FUSE until Ctrl-C or SIGTERM.
    Serve {
        /// Mount point (an existing, empty directory: a mount hides what it holds)
        #[arg(long)]
        fuse: PathBuf,
        /// Start the array anyway when it is dirty and degraded, or when a member in service
        /// is not in the list (it runs degraded); mount over a directory that is not empty
        #[arg(long)]
        force: bool,
        #[arg(required = true)]
        members: Vec<String>,
    },
}

fn cli(e: ArrayError) -> CliError {
    if e.is_usage() {
        CliError::usage(e.to_string())
    } else {
        CliError::failed(e.to_string())
    }
}

fn member_list(args: &[String]) -> Vec<PathBuf> {
    args.iter()
        .flat_map(|a| raidlab_array::split_members(a))
        .collect()
}

fn size_arg(flag: &str, v: &str) -> Result<u64, CliError> {
    parse_size(v).map_err(|e| CliError::usage(format!("--{flag} {v}: {e}")))
}

/// The refusal of `rebuild` with slots out of service and no spare for them (exit 2).
fn no_spare(lost: &[String], paths: &[PathBuf]) -> CliError {
    let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    CliError::usage(format!(
        "nothing to rebuild onto: {} (no spare); add a spare with raidlab array add {} NEW-MEMBER, then run rebuild again",
        lost.join(", "),
        list.join(",")
    ))
}

/// What scrub could not do, in words, for an array's report named `name` ("raid5 UUID"):
/// mismatches whose bad block could not be located.
fn scrub_note(name: &str, r: &raidlab_array::array::ScrubReport, repair: bool) -> Option<String> {
    if r.unlocated == 0 {
        return None;
    }
    let level = name.split(' ').next().unwrap_or(name);
    let parity = matches!(level, "raid4" | "raid5" | "raid6");
    let why = match level {
        "raid4" | "raid5" => format!("{level} cannot tell which block of a stripe is wrong"),
        "raid6" => {
            "more than one block of a 4 KiB page of a stripe is wrong, so raid6 cannot tell which"
                .into()
        }
        _ => "no strict majority of copies agrees, so the bad copy could not be located".into(),
    };
    Some(match (repair, parity) {
        (true, true) => format!(
            "{} stripe(s): parity was rewritten to match the data, but {why}, so the data may still be wrong",
            r.unlocated
        ),
        (true, false) => format!(
            "{} chunk(s): {why}; the other copies were rewritten from the first, which may be the bad one",
            r.unlocated
        ),
        (false, _) => format!("{} mismatch(es) not located: {why}", r.unlocated),
    })
}

fn stderr_is_tty() -> bool {
    unsafe { libc::isatty(2) == 1 }
}

pub fn main(args: ArrayArgs) -> Result<(), CliError> {
    match args.cmd {
        ArrayCmd::Create {
            level,
            layout,
            chunk,
            raid_devices,
            size,
            force,
            assume_clean,
            of,
            members,
        } => {
            let chunk = chunk.map(|c| size_arg("chunk", &c)).transpose()?;
            let size = size.map(|s| size_arg("size", &s)).transpose()?;
            let ms: Vec<MemberSpec> = if !of.is_empty() {
                if !members.is_empty() {
                    return Err(CliError::usage(
                        "give either member paths or --of children, not both",
                    ));
                }
                of.iter()
                    .map(|c| CreateSpec::parse_child(c).map(MemberSpec::Array))
                    .collect::<Result<_, _>>()
                    .map_err(cli)?
            } else {
                member_list(&members)
                    .into_iter()
                    .map(MemberSpec::Path)
                    .collect()
            };
            if ms.is_empty() {
                return Err(CliError::usage(
                    "no members given (valid: member paths, or --of LEVEL:CHUNK:M1,M2,…)",
                ));
            }
            if let Some(n) = raid_devices {
                let what = if of.is_empty() {
                    "members"
                } else {
                    "--of children"
                };
                match n.parse::<usize>() {
                    Ok(n) if n == ms.len() => {}
                    Ok(n) => {
                        return Err(CliError::usage(format!(
                            "--raid-devices {n}, but {} {what} given (valid: as many as the array has devices, one each)",
                            ms.len()
                        )))
                    }
                    Err(_) => {
                        return Err(CliError::usage(format!(
                            "--raid-devices {n}: not a number of devices (valid: a whole number, e.g. 4)"
                        )))
                    }
                }
            }
            let spec = CreateSpec::new(&level, layout.as_deref(), chunk, ms).map_err(cli)?;
            // As mdadm: an array of one member is most likely a member list cut short; a
            // child's as much as the top's (`--of 0:64k:a` for `--of 0:64k:a,b`).
            if !force {
                let children = spec
                    .members
                    .iter()
                    .zip(&of)
                    .filter_map(|(m, text)| match m {
                        MemberSpec::Array(c) => Some((c, format!("--of '{text}': "))),
                        MemberSpec::Path(_) => None,
                    });
                for (s, what) in std::iter::once((&spec, String::new())).chain(children) {
                    if s.members.len() == 1 {
                        return Err(CliError::usage(format!(
                            "{what}{} with 1 member: an array of one member only adds metadata to it, so this is probably a mistake (valid: 2 or more members, or --force if one is meant)",
                            s.level
                        )));
                    }
                }
            }
            let arr = create(
                &spec,
                &CreateOptions {
                    force,
                    size,
                    assume_clean,
                    verbose: true,
                    stop: Some(manage::stop_flag()),
                },
            )
            .map_err(cli)?;
            let geo = &arr.geo;
            // Printed before the array is closed, as always; should both fail, the close is
            // the error reported.
            let printed = crate::stdout::print(&format!(
                "created {} array {}: {} members{}{}, capacity {} bytes ({})\n",
                geo.level,
                raidlab_array::superblock::uuid_string(&arr.uuid),
                geo.members,
                if geo.layout == raidlab_array::Layout::None {
                    String::new()
                } else {
                    format!(", layout {}", geo.layout)
                },
                if raidlab_array::shape::has_chunk(geo.level) {
                    format!(", chunk {} KiB", geo.chunk_bytes / 1024)
                } else {
                    String::new()
                },
                arr.capacity(),
                manage::binary_size(arr.capacity())
            ));
            arr.close().map_err(cli)?;
            printed
        }
        ArrayCmd::Status {
            output_format,
            members,
        } => {
            let st = manage::status(&member_list(&members)).map_err(cli)?;
            if output_format == "json" {
                let json = serde_json::to_string_pretty(&st)
                    .map_err(|e| CliError::failed(e.to_string()))?;
                crate::stdout::print(&format!("{json}\n"))
            } else {
                crate::stdout::print(&manage::status_text(&st, 0))
            }
        }
        ArrayCmd::Fail {
            array,
            member,
            force,
        } => {
            let msg =
                manage::fail(&member_list(&[array]), &PathBuf::from(member), force).map_err(cli)?;
            crate::stdout::print(&format!("{msg}\n"))
        }
        ArrayCmd::Remove { array, member } => {
            let members = member_list(&[array]);
            let gone = raidlab_array::superblock::parse_uuid(&member)
                .filter(|_| !std::path::Path::new(&member).exists());
            let msg = match gone {
                Some(dev) => manage::remove_spare_record(&members, dev),
                None => manage::remove(&members, &PathBuf::from(member)),
            }
            .map_err(cli)?;
            crate::stdout::print(&format!("{msg}\n"))
        }
        ArrayCmd::Add {
            array,
            member,
            force,
        } => {
            let msg =
                manage::add(&member_list(&[array]), &PathBuf::from(&member), force).map_err(cli)?;
            crate::stdout::print(&format!("{msg}\n"))
        }
        ArrayCmd::Rebuild {
            force,
            quiet,
            members,
        } => {
            let mut paths = member_list(&members);
            // The array's members in date and its spares found beside those given take part:
            // left out, a healthy member would be rebuilt over by a spare as if it had failed.
            let more = manage::members_beside(&paths).map_err(cli)?;
            if !more.is_empty() {
                let names: Vec<String> = more.iter().map(|p| p.display().to_string()).collect();
                ewriteln!(
                    "raidlab: rebuilding with {} too, found beside the members given",
                    names.join(", ")
                );
                paths.extend(more);
            }
            let _locks = MemberLocks::acquire(&paths, "rebuild the array").map_err(cli)?;
            let assigned = manage::assign_spares(&paths).map_err(cli)?;
            if assigned > 0 {
                ewriteln!("raidlab: {assigned} spare(s) take the place of failed members");
            }
            // Nothing to rebuild onto (a slot out of service, no spare for it, nothing being
            // rebuilt): the user's to fix, said before anything runs.
            let st = manage::status(&paths).map_err(cli)?;
            if let (true, Some(why)) = (st.children.is_empty(), &st.cannot_start) {
                // No spare helps a flat array that lost more than it survives.
                return Err(CliError::failed(format!(
                    "cannot rebuild: the {} array lost more than it survives: {why}",
                    st.level
                )));
            }
            let lost = manage::out_of_service(&st);
            if !lost.is_empty() && !lost.iter().any(|l| l.ends_with("rebuilding")) {
                return Err(no_spare(&lost, &paths));
            }
            let arr = manage::open(&paths, force).map_err(cli)?;
            let stop = manage::stop_flag();
            let mut prog: Option<manage::Progress> = None;
            let done = manage::rebuild_all(&arr, stop, &mut |what, d, t| {
                let p = prog.get_or_insert_with(|| manage::Progress::new(!quiet, d));
                p.update(&format!("rebuild {what}"), d, t);
            })
            .map_err(cli)?;
            if !done {
                arr.close().map_err(cli)?;
                return Err(CliError::failed(
                    "rebuild interrupted; progress is saved, run rebuild again to resume",
                ));
            }
            // An initial sync cut short at creation: finished here, keeping every byte the
            // array reads (holes filled, redundancy made to agree with the data).
            if arr.sync_pending().is_some() {
                let mut prog: Option<manage::Progress> = None;
                let synced = manage::finish_sync(&arr, stop, &mut |d, t| {
                    let p = prog.get_or_insert_with(|| manage::Progress::new(!quiet, d));
                    p.update("initial sync", d, t);
                })
                .map_err(cli)?;
                if !synced {
                    arr.close().map_err(cli)?;
                    return Err(CliError::failed(
                        "initial sync interrupted; progress is saved, run rebuild again to resume",
                    ));
                }
                ewriteln!("raidlab: initial sync complete");
            }
            arr.close().map_err(cli)?;
            // Anywhere in the tree: a child left degraded (no spare for it) is not in sync
            // though every slot of the top array is.
            let st = manage::status(&paths).map_err(cli)?;
            let left = manage::out_of_service(&st);
            if !left.is_empty() {
                return Err(no_spare(&left, &paths));
            }
            crate::stdout::print("rebuild complete; array is in sync\n")
        }
        ArrayCmd::Scrub {
            check,
            repair,
            output_format,
            quiet,
            members,
        } => {
            if !check && !repair {
                return Err(CliError::usage("scrub needs --check or --repair"));
            }
            let paths = member_list(&members);
            let _locks = MemberLocks::acquire(&paths, "scrub the array").map_err(cli)?;
            let arr = manage::open_for_scrub(&paths).map_err(cli)?;
            let show = !quiet && stderr_is_tty();
            let mut prog = manage::Progress::new(show, 0);
            let reps = manage::scrub_all(&arr, repair, &mut |what, d, t| {
                prog.update(&format!("scrub {what}"), d, t)
            })
            .map_err(cli)?;
            arr.close().map_err(cli)?;
            if reps.is_empty() {
                return Err(CliError::usage(
                    "the array has no redundancy to scrub (level linear or 0)",
                ));
            }
            if output_format == "json" {
                let v: Vec<serde_json::Value> = reps
                    .iter()
                    .map(|(n, r)| serde_json::json!({"array": n, "stripes": r.stripes, "mismatches": r.mismatches,
                        "mismatch_sectors": r.mismatch_sectors, "repaired": r.repaired, "located": r.located,
                        "unlocated": r.unlocated, "note": scrub_note(n, r, repair)}))
                    .collect();
                let json = serde_json::to_string_pretty(&v)
                    .map_err(|e| CliError::failed(e.to_string()))?;
                crate::stdout::print(&format!("{json}\n"))
            } else {
                let mut text = String::new();
                for (name, r) in &reps {
                    let done = match (repair, r.mismatches, r.unlocated) {
                        (false, _, _) | (true, 0, _) => String::new(),
                        (true, _, 0) => ", repaired".into(),
                        (true, m, u) if u < m => format!(", {} repaired", m - u),
                        _ => String::new(),
                    };
                    let note = scrub_note(name, r, repair)
                        .map(|n| format!("; {n}"))
                        .unwrap_or_default();
                    text.push_str(&format!(
                        "{name}: {} stripes checked, {} mismatched (mismatch_cnt {} sectors){done}{note}\n",
                        r.stripes, r.mismatches, r.mismatch_sectors,
                    ));
                    for (row, who) in &r.located {
                        text.push_str(&match who {
                            Some(who) => format!("  stripe {row}: bad block on {who}\n"),
                            None => format!("  stripe {row}: mismatch, bad block not located\n"),
                        });
                    }
                }
                crate::stdout::print(&text)
            }
        }
        ArrayCmd::Serve {
            fuse,
            force,
            members,
        } => {
            raidlab_array::fuse::check_mount_dir(&fuse, force).map_err(cli)?;
            let stop = manage::stop_flag();
            let paths = member_list(&members);
            let _locks = MemberLocks::acquire(&paths, "serve the array").map_err(cli)?;
            let arr = manage::open_to_serve(&paths, force).map_err(cli)?;
            let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            if let Some(w) = raidlab_array::unsynced_warning(&arr, &list.join(",")) {
                ewriteln!("{w}");
            }
            let dir = fuse.clone();
            let member_io = arr.member_io();
            raidlab_array::fuse::serve(arr, &fuse, stop, || {
                ewriteln!(
                    "raidlab: serving {} (member I/O: {member_io}; Ctrl-C or SIGTERM to stop)",
                    dir.join(raidlab_array::fuse::VOLUME_NAME).display()
                );
            })
            .map_err(cli)?;
            ewriteln!(
                "raidlab: unmounted {}; array stopped cleanly",
                fuse.display()
            );
            Ok(())
        }
    }
}
