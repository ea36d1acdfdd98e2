//! Jobs over several files, side by side with fio 3.33: the same options lay out the same
//! files (names, folders, sizes) and run the same jobs moving the same bytes. These tests
//! need the Debian package `fio`; they fail when it is missing.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `dir` (relative name → size).
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for sub in std::fs::read_dir(dir).unwrap() {
        let sub = sub.unwrap().path();
        let entries: Vec<std::path::PathBuf> = if sub.is_dir() {
            std::fs::read_dir(&sub)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            vec![sub.clone()]
        };
        for f in entries {
            let rel = f.strip_prefix(dir).unwrap().display().to_string();
            out.insert(rel, std::fs::metadata(&f).unwrap().len());
        }
    }
    out
}

/// (job name, bytes read and written) of each job in a JSON result, fio's or raidlab's.
fn jobs(json_text: &str) -> Vec<(String, u64)> {
    let v = json(json_text);
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Run fio and raidlab with the same options (`{dir}` replaced by each one's own folder),
/// and return each one's files and jobs.
/// What a tool did: the files it left (name → size) and its jobs (name, bytes written).
type Outcome = (BTreeMap<String, u64>, Vec<(String, u64)>);

fn both(options: &[&str]) -> [Outcome; 2] {
    require_tool("fio", "fio");
    let fio_dir = scratch("raidlab-fio-");
    let rl_dir = scratch("raidlab-rl-");
    let args = |dir: &Path| -> Vec<String> {
        let mut a: Vec<String> = options
            .iter()
            .map(|o| o.replace("{dir}", &dir.display().to_string()))
            .collect();
        a.push("--output-format=json".into());
        a
    };
    for sub in ["d1", "d2"] {
        std::fs::create_dir(fio_dir.path().join(sub)).unwrap();
        std::fs::create_dir(rl_dir.path().join(sub)).unwrap();
    }
    let fio_out = fio_json(&args(fio_dir.path()));
    let fio_json = fio_out.as_str();
    let a = args(rl_dir.path());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let rl = raidlab(&a);
    let out = assert_ok(&rl, "raidlab");
    [
        (files(fio_dir.path()), jobs(fio_json)),
        (files(rl_dir.path()), jobs(&out)),
    ]
}

/// `directory` with two folders, `nrfiles=3`, `numjobs=2`: each job's three files in its
/// folder (j.0.* in the first, j.1.* in the second), each a third of the job's size.
#[test]
fn nrfiles_in_directories_lays_out_what_fio_does() {
    let [fio, rl] = both(&[
        "--name=j",
        "--directory={dir}/d1:{dir}/d2",
        "--nrfiles=3",
        "--numjobs=2",
        "--size=3m",
        "--rw=write",
        "--bs=64k",
    ]);
    assert_eq!(rl.0, fio.0);
    assert_eq!(rl.0.len(), 6);
    assert_eq!(rl.1, fio.1);
}

/// `filename=a:b` is one job moving `size` bytes, half to each file; with `filesize` each
/// file is that size and the job moves what they hold.
#[test]
fn a_filename_list_is_one_job_as_in_fio() {
    for extra in [&["--size=8m"][..], &["--size=8m", "--filesize=2m"][..]] {
        let mut o = vec![
            "--name=k",
            "--filename={dir}/d1/a:{dir}/d2/b",
            "--rw=randwrite",
            "--bs=16k",
            "--file_service_type=random",
        ];
        o.extend_from_slice(extra);
        let [fio, rl] = both(&o);
        assert_eq!(rl.0, fio.0, "{extra:?}");
        assert_eq!(rl.1, fio.1, "{extra:?}");
        assert_eq!(rl.1.len(), 1);
    }
}

/// `filename_format` names each job's files as fio does. A format without `$jobnum` names the
/// same files for every job: a read job after a write job (a stonewall between) reads what it
/// wrote, in both tools. (Two jobs sharing files at once: fio 3.33 runs the second with
/// nothing to do, raidlab runs both; the files are the same.)
#[test]
fn filename_format_names_files_as_fio_does() {
    let job = |format: &'static str| {
        [
            "--name=j",
            "--directory={dir}/d1",
            format,
            "--nrfiles=2",
            "--numjobs=2",
            "--size=256k",
            "--rw=write",
            "--bs=64k",
        ]
    };
    let [fio, rl] = both(&job("--filename_format=data.$jobnum.$filenum.x"));
    assert_eq!(rl, fio);
    assert_eq!(rl.0.len(), 4);
    let [fio, rl] = both(&job("--filename_format=shared.$filenum"));
    assert_eq!(rl.0, fio.0);
    assert_eq!(rl.0.len(), 2);
    let shared = "--filename_format=shared.$filenum";
    let [fio, rl] = both(&[
        "--name=w",
        "--directory={dir}/d1",
        shared,
        "--nrfiles=2",
        "--size=256k",
        "--rw=write",
        "--bs=64k",
        "--name=r",
        "--stonewall",
        "--directory={dir}/d1",
        shared,
        "--nrfiles=2",
        "--size=256k",
        "--rw=read",
        "--bs=64k",
    ]);
    assert_eq!(rl, fio);
    assert_eq!(
        rl.1,
        [("w".to_string(), 256 << 10), ("r".to_string(), 256 << 10)]
    );
}

/// fio's `opendir`: the regular files below a folder, found recursively (a symbolic link
/// not followed, an empty folder adding nothing), are the job's files; a read job moves
/// what they hold, as fio's does. Writing them needs --force (they hold data raidlab did
/// not lay out) and does not change their sizes. A folder that is missing or holds no
/// files, or opendir beside filename, is refused in one line.
#[test]
fn opendir_takes_the_files_below_a_folder_as_fio_does() {
    let dir = scratch("raidlab-opendir-");
    let top = dir.path().join("data");
    std::fs::create_dir_all(top.join("a/b")).unwrap();
    std::fs::create_dir_all(top.join("empty")).unwrap();
    let sizes = [("a/x", 1u64 << 20), ("a/b/y", 512 << 10), ("z", 256 << 10)];
    for (i, (name, len)) in sizes.iter().enumerate() {
        let bytes: Vec<u8> = (0..*len)
            .map(|k| (k as u8).wrapping_mul(31) ^ i as u8)
            .collect();
        std::fs::write(top.join(name), bytes).unwrap();
    }
    std::os::unix::fs::symlink(top.join("z"), top.join("a/link")).unwrap();
    let od = format!("--opendir={}", top.display());
    let read = [
        od.as_str(),
        "--name=r",
        "--rw=read",
        "--bs=64k",
        "--output-format=json",
    ];
    let fio = json(&fio_json(&read));
    let rl = json(&assert_ok(&raidlab(&read), "opendir read"));
    for v in [&fio, &rl] {
        assert_eq!(
            v["jobs"][0]["read"]["io_bytes"], 1835008,
            "{}",
            v["jobs"][0]
        );
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 28);
    }
    let opts = &rl["jobs"][0]["job options"];
    assert_eq!(opts["opendir"], top.display().to_string());
    assert!(opts.get("filename").is_none(), "{opts}");

    let write = [od.as_str(), "--name=w", "--rw=write", "--bs=64k"];
    let err = assert_usage_error(&raidlab(&write), "writing somebody's files");
    assert!(err.contains("use --force"), "{err}");
    let mut forced = write.to_vec();
    forced.push("--force");
    assert_ok(&raidlab(&forced), "writing them with --force");
    for (name, len) in sizes {
        assert_eq!(
            std::fs::metadata(top.join(name)).unwrap().len(),
            len,
            "{name}"
        );
    }

    for (bad, what) in [
        (
            format!("--opendir={}", dir.path().join("missing").display()),
            "No such file",
        ),
        (
            format!("--opendir={}", top.join("empty").display()),
            "holds no regular files",
        ),
    ] {
        let err = assert_usage_error(&raidlab(&[&bad, "--name=r", "--rw=read"]), &bad);
        assert!(err.contains(what), "{err}");
    }
    let both = format!("--filename={}", top.join("z").display());
    let err = assert_usage_error(
        &raidlab(&[&od, &both, "--name=r", "--rw=read"]),
        "opendir and filename",
    );
    assert!(err.contains("one of the two"), "{err}");
}
