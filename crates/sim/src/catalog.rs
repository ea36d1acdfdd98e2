//! Device catalog: datasheet parameters of the drives the seed studies used, plus two modern
//! devices. Each entry says where its numbers come from. System files pick a device by name
//! and may override any field (`[[disk]]` with `base = "..."`).
//!
//! Media rates are given as sectors per track at the outer and inner diameter; with the
//! rotation speed they give the sustained rate (sectors × 512 B × revolutions per second), the
//! relation seed 002 states under its Table II.

use serde::{Deserialize, Serialize};

/// What kind of device a catalog entry models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Hdd,
    Ssd,
}

/// Parameters of one device model. HDD fields are ignored for SSDs and the other way round.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub name: String,
    pub kind: DeviceKind,
    pub capacity_bytes: u64,
    // --- HDD ---
    pub rpm: f64,
    /// Recording surfaces (heads).
    pub heads: u32,
    pub zones: u32,
    pub spt_outer: u32,
    pub spt_inner: u32,
    pub seek_track_ms: f64,
    pub seek_avg_ms: f64,
    pub seek_full_ms: f64,
    /// A measured seek curve instead of the datasheet's three times: points (fraction of a
    /// full stroke from 0 to 1, ms), rising in distance, interpolated linearly. Empty: the
    /// curve is fitted to `seek_track_ms`, `seek_avg_ms` and `seek_full_ms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seek_table: Vec<(f64, f64)>,
    /// Extra settle for writes over reads, ms.
    pub write_settle_ms: f64,
    pub head_switch_ms: f64,
    /// Interface (SCSI/SAS/SATA) rate, MB/s (decimal).
    pub interface_mb_s: f64,
    /// Per-command firmware overhead, µs.
    pub command_us: f64,
    /// Read-ahead buffer segment, KiB (0 = no read-ahead).
    pub read_ahead_kib: u32,
    /// On-drive write cache enabled by default.
    pub write_cache: bool,
    /// The drive's buffer, KiB: with the write cache on, how much written data it holds
    /// ahead of the media.
    #[serde(default = "default_cache_kib")]
    pub cache_kib: u32,
    /// Segments the buffer is split into for reads (SCSI's caching mode page 08h, byte 13):
    /// each holds what one run of reads brought from the media (read-ahead is modelled for
    /// the run the head is on: see `read_ahead_kib`), so a read of data still held is served
    /// from the buffer: every block of it, as Seagate's product manuals describe the cache (a
    /// read with any block not held goes to the media). 0: reads are not cached (the page's
    /// RCD bit); at most [`crate::device::MAX_SEGMENTS`]. The default, 16, is an assumption:
    /// drives choose the count themselves by workload, and datasheets do not give it.
    #[serde(default = "default_cache_segments")]
    pub cache_segments: u32,
    /// Command aging, ms: a queued command that has waited this long is served next, the
    /// oldest first, whatever the reordering would choose (0: never). Drives that reorder
    /// their queue bound how long a command may wait in it (drive makers' patents describe
    /// the oldest command served once past an age threshold, e.g. US 6,965,965); the
    /// threshold is not published. The default, 2 s, is an assumption: above the longest
    /// wait of seed 001's random loads (1.26 s at a drive of its RAID 5 and RAID 0 with
    /// 64 KiB random reads and writes at depth 128, counted from arrival), so that it acts
    /// mostly where one stream would otherwise keep the others waiting (sequential streams
    /// read on). A command's age counts from when it entered the drive's queue (its first
    /// `disk_queue_depth` commands): the drive knows nothing of the wait behind it. Writes
    /// the write cache holds do not age: the host has them done, and the drive writes them
    /// out in its own order.
    #[serde(default = "default_age_limit_ms")]
    pub age_limit_ms: f64,
    // --- SSD (see crate::ssd for the model) ---
    /// A die's time to sense one page (tR), µs.
    pub read_us: f64,
    /// A die's time to program one page while the SLC cache has room (or always, without
    /// one), µs.
    pub program_us: f64,
    /// NAND dies: they sense and program in parallel.
    pub units: u32,
    /// The controller's read and write rates, MB/s: caps over all commands.
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Channels the dies share (die d on channel d mod channels).
    #[serde(default = "default_channels")]
    pub channels: u32,
    /// A channel's transfer rate, MB/s.
    #[serde(default = "default_channel_mb_s")]
    pub channel_mb_s: f64,
    /// The page: what a die senses or programs at once, KiB.
    #[serde(default = "default_page_kib")]
    pub page_kib: u32,
    /// SLC cache, GiB (0: none): writes past it program in `direct_program_us`.
    #[serde(default)]
    pub slc_cache_gib: f64,
    /// A die's time to program one page past the SLC cache, µs (0: `program_us`).
    #[serde(default)]
    pub direct_program_us: f64,
    /// The controller's command rate, commands per second (0: no limit).
    #[serde(default)]
    pub max_iops: f64,
    /// Whether the drive is as it comes out of the box or written over until its garbage
    /// collection runs as it does for good (see crate::ssd).
    #[serde(default, skip_serializing_if = "FlashState::is_fresh")]
    pub ssd_state: FlashState,
    /// Raw flash beyond the user capacity, as a share of the user capacity (over-provisioning:
    /// (raw - user) / user). What garbage collection has to work with in steady state.
    #[serde(default = "default_spare_fraction")]
    pub spare_fraction: f64,
    /// Pages in an erase block.
    #[serde(default = "default_block_pages")]
    pub block_pages: u32,
    /// A die's time to erase one block (tBERS), ms.
    #[serde(default = "default_erase_ms")]
    pub erase_ms: f64,
}

/// A flash drive's state: `fresh` (every block erased, nothing to collect: the model before
/// steady state existed) or `steady` (full, written over many times: every write pays for
/// garbage collection, and the SLC cache has no room left).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashState {
    #[default]
    Fresh,
    Steady,
}

impl FlashState {
    fn is_fresh(&self) -> bool {
        *self == FlashState::Fresh
    }
}

/// Assumption for a drive that does not give its own: a consumer drive sold in decimal
/// terabytes on binary tebibytes of flash (2^40 / 10^12 - 1 = 9.95%), less what the drive
/// keeps for itself (static SLC region, bad-block reserve), rounded down to 8%.
fn default_spare_fraction() -> f64 {
    0.08
}

/// Estimate: 3D TLC blocks of 96 word lines × 4 strings × 3 bits = 1152 pages of 16 KiB
/// (18 MiB); the makers publish the block size only in datasheets under NDA. Erases are a
/// small share of the work (an erase per block of programs), so the estimate moves little.
fn default_block_pages() -> u32 {
    1152
}

/// Estimate: 3.5 ms, within the 3–10 ms block erase times ONFI-class 3D TLC parts state.
fn default_erase_ms() -> f64 {
    3.5
}

fn default_channels() -> u32 {
    8
}

fn default_channel_mb_s() -> f64 {
    800.0
}

fn default_page_kib() -> u32 {
    16
}

fn default_cache_kib() -> u32 {
    8192
}

fn default_cache_segments() -> u32 {
    16
}

fn default_age_limit_ms() -> f64 {
    2000.0
}

impl DiskSpec {
    /// A hard disk's values where its entry below gives none. Assumptions, not datasheet
    /// figures (datasheets leave them out): a 7200 rpm drive of the seeds' era on a
    /// 150 MB/s interface, 50 µs of firmware time a command, 512 KiB read ahead, the write
    /// cache on. An entry that takes one of them (the Maxtor's 50 µs a command, say) says so
    /// by not giving it; `raidlab calibrate` measures the command time and interface rate of
    /// a drive at hand (its command time then holds the host's cost of a request as well).
    fn hdd(name: &str) -> DiskSpec {
        DiskSpec {
            name: name.into(),
            kind: DeviceKind::Hdd,
            capacity_bytes: 0,
            rpm: 7200.0,
            heads: 4,
            zones: 16,
            spt_outer: 1000,
            spt_inner: 500,
            seek_track_ms: 1.0,
            seek_avg_ms: 8.5,
            seek_full_ms: 18.0,
            seek_table: Vec::new(),
            write_settle_ms: 0.5,
            head_switch_ms: 0.8,
            interface_mb_s: 150.0,
            command_us: 50.0,
            read_ahead_kib: 512,
            write_cache: true,
            cache_kib: default_cache_kib(),
            cache_segments: default_cache_segments(),
            age_limit_ms: default_age_limit_ms(),
            read_us: 0.0,
            program_us: 0.0,
            units: 1,
            read_mb_s: 0.0,
            write_mb_s: 0.0,
            channels: default_channels(),
            channel_mb_s: default_channel_mb_s(),
            page_kib: default_page_kib(),
            slc_cache_gib: 0.0,
            direct_program_us: 0.0,
            max_iops: 0.0,
            ssd_state: FlashState::Fresh,
            spare_fraction: default_spare_fraction(),
            block_pages: default_block_pages(),
            erase_ms: default_erase_ms(),
        }
    }
}

/// The built-in catalog.
// One push per drive, each under the comment giving its sources.
#[allow(clippy::vec_init_then_push)]
pub fn catalog() -> Vec<DiskSpec> {
    let mut v = Vec::new();

    // Seed 000: Compaq-branded 18.2 GB 10,000 rpm Ultra2/Ultra3 SCSI drive, Seagate Cheetah
    // 18XL class (ST318404LC). Cheetah 18XL product manual 75789506: 10,016 rpm, average seek
    // 5.2 ms read / 6.0 ms write, track-to-track 0.6 ms, full stroke ~12 ms, media rate
    // 231–355 Mbit/s, 6 heads, 18.4 GB. User-data sectors per track chosen so the sustained
    // rate is ≈37 MB/s outer / ≈26 MB/s inner after ECC and servo overhead (estimate).
    v.push(DiskSpec {
        capacity_bytes: 18_200_000_000,
        rpm: 10_016.0,
        heads: 6,
        zones: 11,
        spt_outer: 436,
        spt_inner: 305,
        seek_track_ms: 0.6,
        seek_avg_ms: 5.2,
        seek_full_ms: 12.0,
        write_settle_ms: 0.8,
        head_switch_ms: 0.5,
        interface_mb_s: 80.0, // Ultra2 wide SCSI (the HSG80's device ports)
        command_us: 50.0,
        read_ahead_kib: 512,
        write_cache: false, // array controllers of the time disable drive write caches
        cache_kib: 1024,    // the family's smallest buffer; unused here (write cache off)
        ..DiskSpec::hdd("compaq-18g-10k")
    });

    // Seed 002: Maxtor MaXLine Plus II 7Y250M0 (Maxtor product manual 1905, seed 002 Tables I
    // and II): 250 GB, 7200 rpm, 16 zones, 1102 → 610 sectors per track (67 → 37 MB/s),
    // SATA 150 MB/s, 8 MB buffer; average seek < 9 ms, track-to-track 0.8 ms (datasheet).
    // Its command time is the 50 µs default, an assumption: `raidlab calibrate` of the drive
    // behind seed 002's host (`direct-1disk.toml`) fits 72 µs, that and the host's 20 µs.
    v.push(DiskSpec {
        capacity_bytes: 250_000_000_000,
        rpm: 7200.0,
        heads: 6,
        zones: 16,
        spt_outer: 1102,
        spt_inner: 610,
        seek_track_ms: 0.8,
        seek_avg_ms: 8.5,
        seek_full_ms: 17.0,
        interface_mb_s: 150.0,
        read_ahead_kib: 2048,
        cache_kib: 8192,
        ..DiskSpec::hdd("maxtor-7y250m0")
    });

    // Seed 001: Seagate Savvio 15K ST973451SS (product manual 100407739): 73 GB 2.5" SAS,
    // 15,000 rpm, average seek 2.9 ms read / 3.3 ms write, track-to-track 0.2 ms, sustained
    // 112 → 79 MB/s, 3 Gb/s SAS, 16 MB buffer, 4 heads.
    v.push(DiskSpec {
        capacity_bytes: 73_400_000_000,
        rpm: 15_000.0,
        heads: 4,
        zones: 16,
        spt_outer: 875,
        spt_inner: 617,
        seek_track_ms: 0.2,
        seek_avg_ms: 2.9,
        seek_full_ms: 6.5,
        write_settle_ms: 0.4,
        head_switch_ms: 0.3,
        interface_mb_s: 300.0,
        command_us: 30.0,
        read_ahead_kib: 1024,
        write_cache: true,
        cache_kib: 16384,
        ..DiskSpec::hdd("seagate-st973451ss")
    });

    // Seed 003: Samsung SpinPoint T166 HD501LJ: 500 GB, 7200 rpm, average seek 8.9 ms,
    // 16 MB buffer, SATA 300; seed 003 measured 85 MB/s read / 88 MB/s write on one drive
    // (outer zone), inner ≈ 45 MB/s (typical of the family).
    v.push(DiskSpec {
        capacity_bytes: 500_000_000_000,
        rpm: 7200.0,
        heads: 6,
        zones: 16,
        spt_outer: 1400,
        spt_inner: 760,
        seek_track_ms: 0.8,
        seek_avg_ms: 8.9,
        seek_full_ms: 18.0,
        interface_mb_s: 300.0,
        read_ahead_kib: 2048,
        cache_kib: 16384,
        ..DiskSpec::hdd("samsung-hd501lj")
    });

    // Seed 003's second system: Samsung SpinPoint F1 HD103UJ, 1 TB, 7200 rpm, average seek
    // 8.9 ms, 32 MB buffer, ≈115 MB/s outer → ≈60 MB/s inner (three 334 GB platters).
    v.push(DiskSpec {
        capacity_bytes: 1_000_000_000_000,
        rpm: 7200.0,
        heads: 6,
        zones: 16,
        spt_outer: 1870,
        spt_inner: 980,
        seek_track_ms: 0.8,
        seek_avg_ms: 8.9,
        seek_full_ms: 18.0,
        interface_mb_s: 300.0,
        read_ahead_kib: 4096,
        cache_kib: 32768,
        ..DiskSpec::hdd("samsung-hd103uj")
    });

    // Seed 004: Fujitsu MBA3xxxRC (MBA3147RC) 15,000 rpm 3.5" SAS: average seek 3.4 ms read /
    // 3.9 ms write, track-to-track 0.2 ms, 16 MB buffer, sustained ≈ 125 → 70 MB/s
    // (Fujitsu MBA3xxxRC product data sheet, approximate).
    v.push(DiskSpec {
        capacity_bytes: 147_000_000_000,
        rpm: 15_000.0,
        heads: 8,
        zones: 16,
        spt_outer: 976,
        spt_inner: 547,
        seek_track_ms: 0.2,
        seek_avg_ms: 3.4,
        seek_full_ms: 8.0,
        write_settle_ms: 0.5,
        head_switch_ms: 0.3,
        interface_mb_s: 300.0,
        command_us: 30.0,
        read_ahead_kib: 1024,
        write_cache: true,
        cache_kib: 16384,
        ..DiskSpec::hdd("fujitsu-mba3147rc")
    });

    // A current 7200 rpm CMR drive (Seagate Exos 7E10 8 TB class, product manual): 8 TB,
    // 7200 rpm, average latency 4.16 ms, seek ≈ 8.5 ms, sustained 249 → 120 MB/s, 256 MB cache.
    v.push(DiskSpec {
        capacity_bytes: 8_000_000_000_000,
        rpm: 7200.0,
        heads: 12,
        zones: 24,
        spt_outer: 4050,
        spt_inner: 1950,
        seek_track_ms: 0.5,
        seek_avg_ms: 8.5,
        seek_full_ms: 16.0,
        interface_mb_s: 600.0,
        read_ahead_kib: 8192,
        cache_kib: 262144,
        ..DiskSpec::hdd("cmr-7200-8tb")
    });

    // An NVMe TLC SSD (PCIe 3.0 x4 consumer class; Samsung 970 EVO Plus 1 TB data sheet,
    // rev. 2019): sequential 3500 MB/s read, 3300 MB/s write into the 42 GB Intelligent
    // TurboWrite (SLC) buffer and 1700 MB/s after it; random 4 KiB 600 K IOPS read, 550 K
    // write (QD32, 4 threads). The controller (Samsung Phoenix) has 8 channels; 32 dies of
    // 16 KiB pages is an estimate for 1 TB of 256 Gbit V-NAND dies. Program times follow from
    // the write rates over 32 dies of 16 KiB pages: 32 × 16 KiB / 3300 MB/s = 159 µs (SLC),
    // / 1700 MB/s = 308 µs (native TLC). tR 60 µs and 5 µs a command are estimates that
    // give a 4 KiB read at depth 1 about 70 µs, as reviews of the drive measure.
    v.push(DiskSpec {
        kind: DeviceKind::Ssd,
        capacity_bytes: 1_000_000_000_000,
        read_us: 60.0,
        program_us: 159.0,
        direct_program_us: 308.0,
        slc_cache_gib: 42e9 / (1u64 << 30) as f64,
        units: 32,
        channels: 8,
        page_kib: 16,
        // Toggle DDR NAND interface of the generation: 800 MT/s, one byte wide.
        channel_mb_s: 800.0,
        read_mb_s: 3500.0,
        write_mb_s: 3300.0,
        max_iops: 600_000.0,
        command_us: 5.0,
        // PCIe 3.0 x4: 8 GT/s × 4 lanes × 128/130, less packet overhead.
        interface_mb_s: 3900.0,
        write_cache: true,
        // 1 TB of user space on 1 TiB of V-NAND (9.95% more), less the 6 GB static SLC
        // region (the data sheet's TurboWrite default, held in TLC blocks at a third of
        // their density: 18 GB) and a bad-block reserve: about 8% (estimate).
        spare_fraction: 0.08,
        ..DiskSpec::hdd("nvme-tlc-1tb")
    });

    // An enterprise NVMe TLC SSD (PCIe 4.0 x4 U.2, Samsung PM9A3 7.68 TB class; Samsung's
    // figures as heise.de reported them from the data sheet, 2020: "PCIe-4.0-SSD Samsung
    // PM9A3"): 6500 MB/s sequential read, 3500 MB/s write, 900 K random 4 KiB reads and
    // 200 K random writes a second, 1.3 drive writes a day. Enterprise data sheets give
    // random writes in sustained state (after preconditioning), the figure this drive's
    // steady state is compared with (BENCHMARKS.md). 128 dies: 7.68 TB on 512 Gbit
    // V-NAND dies of the generation is 8 TiB of flash; 8 channels (estimate, as the maker's
    // PCIe 4.0 controllers of the time) of Toggle DDR 4.0 at 1200 MT/s. No SLC cache
    // (enterprise drives write native cells: assumption), so the program time follows from
    // the write rate over the dies: 128 × 16 KiB / 3500 MB/s = 599 µs. tR 60 µs and 5 µs a
    // command as for the consumer drive (estimates). Spare: 8 TiB / 7.68 TB - 1 = 14.5%,
    // all of it taken as spare (the reserve for bad blocks and metadata is not published).
    v.push(DiskSpec {
        kind: DeviceKind::Ssd,
        capacity_bytes: 7_680_000_000_000,
        read_us: 60.0,
        program_us: 599.0,
        units: 128,
        channels: 8,
        page_kib: 16,
        channel_mb_s: 1200.0,
        read_mb_s: 6500.0,
        write_mb_s: 3500.0,
        max_iops: 900_000.0,
        command_us: 5.0,
        // PCIe 4.0 x4: 16 GT/s × 4 lanes × 128/130, less packet overhead.
        interface_mb_s: 7800.0,
        write_cache: true,
        spare_fraction: (1u64 << 43) as f64 / 7.68e12 - 1.0,
        ..DiskSpec::hdd("nvme-tlc-7.68tb-enterprise")
    });
    v
}

/// Look a device up by name.
pub fn find(name: &str) -> Option<DiskSpec> {
    catalog().into_iter().find(|d| d.name == name)
}

/// Names of all catalog entries, for error messages.
pub fn names() -> Vec<String> {
    catalog().into_iter().map(|d| d.name).collect()
}
