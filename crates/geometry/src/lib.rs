//! RAID geometry as md lays it out, and the planner that turns logical I/O into member I/O.
