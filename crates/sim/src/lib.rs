//! Discrete-event simulator of disks, controllers and links in virtual time.
