//! User-space RAID arrays: superblocks, assembly, I/O through the planner, rebuild, scrub, FUSE volume.
