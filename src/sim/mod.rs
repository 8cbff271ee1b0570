//! A simulated machine: disks, md arrays, LVM and drive write caches, loaded from an observed
//! snapshot. It interprets the argv the real host would get and answers observation requests in
//! the real tools' formats, so tests exercise parsers, planner and executor together. Commands it
//! does not model are errors, never silent successes.

mod answer;
pub mod blank;
mod events;
pub mod synthetic;
mod tools;
mod world;

use crate::host::{CmdOutput, Host, HostError};
use crate::observe::Observed;
use std::sync::{Mutex, MutexGuard};
use world::{SimState, linked};

/// A fault to inject, fired once and then used up: the next command run whose argv, joined with
/// spaces, contains `needle` fails with `status` and `stderr` without running; or the next file
/// write or whole-file replace whose path contains `needle` fails with an I/O error whose detail
/// is `stderr` (`status` unused). When several faults match, the one injected first fires.
#[derive(Debug, Clone)]
pub struct Fault {
    pub needle: String,
    pub status: i32,
    pub stderr: String,
}

pub struct SimHost {
    pub(crate) state: Mutex<SimState>,
}

impl SimHost {
    /// The simulated machine's state (one caller at a time).
    fn st(&self) -> MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn new(world: Observed) -> SimHost {
        SimHost {
            state: Mutex::new(SimState {
                world,
                serial: 0,
                log: Vec::new(),
                faults: Vec::new(),
                root: true,
                moves_stalled: false,
                corrupt: Default::default(),
                io: Default::default(),
            }),
        }
    }

    pub fn from_json(text: &str) -> Result<SimHost, String> {
        let w: Observed =
            serde_json::from_str(text).map_err(|e| format!("not a hyraid snapshot: {e}"))?;
        if w.format != crate::observe::SNAPSHOT_FORMAT {
            return Err(format!(
                "snapshot format {} is not supported (this hyraid reads {})",
                w.format,
                crate::observe::SNAPSHOT_FORMAT
            ));
        }
        Ok(SimHost::new(w))
    }

    /// The model as it is now (the snapshot format), with the LVs lsblk shows a node of as
    /// its own lsblk answer shows them.
    pub fn world(&self) -> Observed {
        let mut w = self.st().world.clone();
        if let Ok(nodes) = crate::observe::lsblk::parse(&answer::lsblk(&w)) {
            w.lvm.nodes = crate::observe::filesystems::lv_nodes(&nodes, &w.lvm);
        }
        w
    }

    pub fn commands(&self) -> Vec<Vec<String>> {
        self.st().log.clone()
    }

    pub fn clear_log(&self) {
        self.st().log.clear();
    }

    pub fn inject_fault(&self, f: Fault) {
        self.st().faults.push(f);
    }

    pub fn clear_faults(&self) {
        self.st().faults.clear();
    }

    pub fn set_root(&self, root: bool) {
        self.st().root = root;
    }
}

pub(crate) fn out(stdout: &str) -> Result<CmdOutput, HostError> {
    Ok(CmdOutput::ok(stdout))
}

pub(crate) fn fail(status: i32, stderr: impl Into<String>) -> Result<CmdOutput, HostError> {
    Ok(CmdOutput::fail(status, stderr))
}

pub(crate) fn unsupported(argv: &[String]) -> Result<CmdOutput, HostError> {
    Err(HostError::Spawn {
        program: argv.join(" "),
        detail: "the simulated host does not model this command".into(),
    })
}

impl Host for SimHost {
    fn run(&self, argv: &[String]) -> Result<CmdOutput, HostError> {
        let mut st = self.st();
        st.log.push(argv.to_vec());
        let joined = argv.join(" ");
        if let Some(i) = st.faults.iter().position(|f| joined.contains(&f.needle)) {
            let f = st.faults.remove(i);
            return fail(f.status, f.stderr);
        }
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        // The observer's own argv: the simulator answers exactly what the observer asks.
        if argv == crate::observe::lsblk::argv() {
            return out(&answer::lsblk(&st.world));
        }
        // lsblk of one device (bench's check of a raw target).
        if argv.len() == crate::observe::lsblk::argv().len() + 1
            && argv[..argv.len() - 1] == crate::observe::lsblk::argv()[..]
        {
            let dev = &argv[argv.len() - 1];
            let name = match st.resolve(dev) {
                Some(world::Target::Block(k)) => k,
                Some(world::Target::Lv(vg, lv)) => answer::dm_name(&vg, &lv),
                _ => return fail(32, format!("lsblk: {dev}: not a block device\n")),
            };
            return match answer::lsblk_of(&st.world, &name) {
                Some(j) => out(&j),
                None => fail(32, format!("lsblk: {dev}: not a block device\n")),
            };
        }
        if argv == crate::observe::lvm::argv() {
            return out(&answer::fullreport(&st.world));
        }
        if let ["chmod", "0755", path] = args.as_slice()
            && crate::observe::loader::HOOKS.iter().any(|(p, _)| p == path)
        {
            return match st.world.boot.loaders.hooks.contains_key(*path) {
                true => out(""),
                false => fail(
                    1,
                    format!("chmod: cannot access '{path}': No such file or directory\n"),
                ),
            };
        }
        if let Some(r) = tools::crypt::file_tool(&mut st, &args) {
            return r;
        }
        match args.as_slice() {
            ["cryptsetup", rest @ ..] => tools::crypt::cryptsetup(&mut st, rest),
            ["wipefs", "--no-act", "--json", devs @ ..] if !devs.is_empty() => {
                answer::wipefs(&st, devs)
            }
            ["wipefs", "--all", dev] => tools::wipefs_all(&mut st, dev),
            ["blkid", "-p", dev] => answer::blkid_probe(&st, dev),
            ["systemd-cryptenroll", "--tpm2-device=list"] => tools::tpm2::list(&st),
            ["hdparm", flag, dev] if flag.starts_with("-W") => tools::hdparm(&mut st, flag, dev),
            ["sdparm", flag @ ("--set=WCE" | "--clear=WCE"), dev] => {
                tools::sdparm(&mut st, *flag == "--set=WCE", dev)
            }
            ["udevadm", "settle", ..]
            | ["udevadm", "control", "--reload"]
            | ["udevadm", "trigger", "--action=change", "--settle", _] => out(""),
            ["update-initramfs", "-u"]
                if st.world.boot.initramfs_tool.as_deref() == Some("update-initramfs") =>
            {
                out("update-initramfs: Generating /boot/initrd.img-6.1.0-50-amd64\n")
            }
            ["dracut", "-f", "--mdadmconf"]
                if st.world.boot.initramfs_tool.as_deref() == Some("dracut") =>
            {
                out("")
            }
            ["mdadm", ..] => tools::mdadm(&mut st, &args[1..]),
            ["mkfs.ext4", rest @ ..] => tools::mkfs(&mut st, "ext4", rest),
            ["mkfs.xfs", rest @ ..] => tools::mkfs(&mut st, "xfs", rest),
            ["mkdir", "-p", _] => out(""),
            ["smartctl", "--json", "-a", "-n", "standby", dev] => match st.resolve(dev) {
                Some(world::Target::Block(k)) => {
                    let d = st.world.device(&k).expect("resolved").clone();
                    let (status, stdout) = answer::smartctl(&st.world, &d, dev);
                    Ok(CmdOutput {
                        status,
                        stdout,
                        stderr: String::new(),
                    })
                }
                _ => fail(2, format!("{dev}: Unable to detect device type\n")),
            },
            ["systemctl", ..] if st.world.missing_tools.iter().any(|t| t == "systemctl") => {
                unsupported(argv)
            }
            ["systemctl", rest @ ..] => tools::systemd::systemctl(&mut st, rest),
            ["systemd-analyze", "calendar", spec] => tools::systemd::analyze_calendar(spec),
            ["rm", "-f", path] => tools::systemd::remove_file(&mut st.world, path),
            // A benchmark's test file on a mounted filesystem (the model keeps no files).
            ["rm", "-f", "--", _] => out(""),
            ["fio", rest @ ..] => tools::fio::fio(&mut st, rest),
            ["df", "--output=avail", "-B1", "--", mp] => tools::fio::df(&st, mp),
            ["stat", "-L", "--format=%F", path] => tools::fio::stat_kind(&st, path),
            ["mount", mp] => tools::mount(&mut st, mp),
            ["mount", "-t", "vfat", "-o", _, dev, mp] => {
                tools::loader::mount_vfat(&mut st, dev, mp)
            }
            ["mkfs.vfat", "-F", "32", "-n", _, dev] => tools::loader::mkfs_vfat(&mut st, dev),
            ["grub-install", rest @ ..] => tools::loader::grub_install(&mut st, rest),
            ["dpkg-query", ..]
            | ["debconf-show", ..]
            | ["debconf-set-selections", ..]
            | ["update-grub"] => tools::loader::debconf(&mut st, &args),
            ["mtype", "-i", dev, file] if !st.world.missing_tools.iter().any(|t| t == "mtools") => {
                tools::loader::mtype(&st, dev, file)
            }
            ["blkid", "-o", "value", "-s", "PARTUUID", dev] => {
                tools::loader::blkid_partuuid(&st, dev)
            }
            ["efibootmgr", rest @ ..]
                if !st.world.missing_tools.iter().any(|t| t == "efibootmgr") =>
            {
                tools::loader::efibootmgr(&mut st, rest)
            }
            ["dumpe2fs", "-h", dev] => tools::fs_info(&mut st, "dumpe2fs", dev),
            ["xfs_info", dev] => tools::fs_info(&mut st, "xfs_info", dev),
            ["resize2fs", dev] => tools::grow_fs(&mut st, "resize2fs", dev),
            ["resize2fs", "-P", dev] => tools::resize2fs_min(&mut st, dev),
            ["resize2fs", dev, size] => tools::resize2fs_to(&mut st, dev, size),
            ["umount", mp] => match tools::loader::umount_partition(&mut st, mp) {
                Some(r) => r,
                None => tools::umount(&mut st, mp),
            },
            ["xfs_growfs", mp] => tools::grow_fs(&mut st, "xfs_growfs", mp),
            ["e2label", dev, label] => tools::e2label(&mut st, dev, label),
            ["xfs_admin", "-l", dev] => tools::xfs_admin(&mut st, None, dev),
            ["xfs_admin", "-L", label, dev] => tools::xfs_admin(&mut st, Some(label), dev),
            ["e2fsck", "-f", "-p", dev] if st.resolve(dev).is_some() => out(&format!(
                "{dev}: 11/65536 files (0.0% non-contiguous), 12955/262144 blocks\n"
            )),
            ["sgdisk", ..] => tools::sgdisk(&mut st, &args[1..]),
            ["partx", ..] => tools::partx(&mut st, &args[1..]),
            ["growpart", ..] => tools::growpart(&mut st, &args[1..]),
            ["lvm", "lvmdevices", ..] => tools::lvm(&mut st, &args[1..]),
            ["pvcreate", ..]
            | ["vgcreate", ..]
            | ["vgextend", ..]
            | ["lvcreate", ..]
            | ["lvextend", ..]
            | ["lvreduce", ..]
            | ["lvchange", ..]
            | ["lvconvert", ..]
            | ["lvremove", ..]
            | ["vgremove", ..]
            | ["pvremove", ..]
            | ["pvmove", ..]
            | ["vgreduce", ..]
            | ["pvresize", ..]
            | ["vgchange", ..] => tools::lvm(&mut st, &args),
            ["lvs", .., vg] if argv == crate::observe::lvm::moves_argv(vg) => {
                out(&answer::moves(&st.world, vg))
            }
            _ => unsupported(argv),
        }
    }

    fn read_file(&self, path: &str) -> Result<String, HostError> {
        let st = self.st();
        if path == "/proc/mdstat" {
            return Ok(answer::mdstat(&st.world));
        }
        if let Some(k) = path
            .strip_prefix("/sys/class/block/")
            .and_then(|r| r.strip_suffix("/stat"))
            && st.world.device(k).is_some()
        {
            return Ok(tools::fio::stat_line(&st, k));
        }
        let b = &st.world.boot;
        if b.mdadm_conf_path.as_deref() == Some(path) {
            return b
                .mdadm_conf
                .clone()
                .ok_or(HostError::NotFound { path: path.into() });
        }
        if path == crate::observe::WRITE_CACHE_RULE_PATH {
            return b
                .write_cache_rule
                .clone()
                .ok_or(HostError::NotFound { path: path.into() });
        }
        if path == crate::observe::lvm_devices::LVM_DEVICES_PATH {
            return b
                .lvm_devices
                .as_ref()
                .map(tools::lvm_devices::render)
                .ok_or(HostError::NotFound { path: path.into() });
        }
        if path == crate::observe::luks::CRYPTTAB_PATH {
            return b
                .crypttab
                .clone()
                .ok_or(HostError::NotFound { path: path.into() });
        }
        if path == crate::observe::FSTAB_PATH {
            return b
                .fstab
                .clone()
                .ok_or(HostError::NotFound { path: path.into() });
        }
        if let Some(t) = tools::systemd::read_file(&st.world, path) {
            return Ok(t);
        }
        if let Some(t) = b.loaders.hooks.get(path) {
            return Ok(t.clone());
        }
        answer::sysfs_read(&st.world, path).ok_or(HostError::NotFound {
            path: path.to_string(),
        })
    }

    fn write_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        let mut st = self.st();
        st.log
            .push(vec!["(write)".into(), path.into(), content.trim().into()]);
        if let Some(i) = st.faults.iter().position(|f| path.contains(&f.needle)) {
            let f = st.faults.remove(i);
            return Err(HostError::Io {
                path: path.into(),
                detail: f.stderr,
            });
        }
        tools::md_sysfs_write(&mut st, path, content.trim())
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, HostError> {
        let st = self.st();
        let w = &st.world;
        if let Some(v) = tools::systemd::list_dir(w, path) {
            return Ok(v);
        }
        let mut v: Vec<String> = match path {
            "/dev/disk/by-id" => w
                .block_devices
                .iter()
                .flat_map(|d| d.by_id.clone())
                .collect(),
            "/dev/md" => w
                .arrays
                .iter()
                .filter(|a| linked(a))
                .filter_map(|a| a.name.clone())
                .chain(w.dev_md_strays.iter().map(|s| s.name.clone()))
                .collect(),
            _ => {
                let k = path
                    .strip_prefix("/sys/block/")
                    .and_then(|p| p.strip_suffix("/device/scsi_disk"));
                match k.and_then(|k| w.device(k)) {
                    Some(d)
                        if d.write_cache.is_some_and(|c| {
                            c.source == crate::observe::WriteCacheSource::ScsiCacheType
                        }) =>
                    {
                        vec![format!(
                            "{}:0:0:0",
                            w.block_devices
                                .iter()
                                .position(|x| x.kname == d.kname)
                                .unwrap_or(0)
                        )]
                    }
                    _ => {
                        return Err(HostError::NotFound {
                            path: path.to_string(),
                        });
                    }
                }
            }
        };
        v.sort();
        Ok(v)
    }

    fn read_link(&self, path: &str) -> Result<String, HostError> {
        let st = self.st();
        let nf = || HostError::NotFound {
            path: path.to_string(),
        };
        if let Some(id) = path.strip_prefix("/dev/disk/by-id/") {
            return st
                .world
                .by_id(id)
                .map(|d| format!("../../{}", d.kname))
                .ok_or_else(nf);
        }
        if let Some(name) = path.strip_prefix("/dev/md/") {
            if let Some(stray) = st.world.dev_md_strays.iter().find(|s| s.name == name) {
                // readlink(2) of a device node or a regular file: EINVAL.
                return stray.target.clone().ok_or_else(|| HostError::Io {
                    path: path.into(),
                    detail: stray
                        .error
                        .clone()
                        .unwrap_or_else(|| "Invalid argument (os error 22)".into()),
                });
            }
            return st
                .world
                .array_named(name)
                .filter(|a| linked(a))
                .map(|a| format!("../{}", a.kname))
                .ok_or_else(nf);
        }
        Err(nf())
    }

    fn hostname(&self) -> String {
        self.st().world.hostname.clone()
    }

    fn is_root(&self) -> bool {
        self.st().root
    }
    fn is_simulated(&self) -> bool {
        true
    }

    fn exists(&self, path: &str) -> bool {
        let st = self.st();
        if path == crate::observe::CACHE_CHECK_PATHS[0] {
            return st.world.boot.cache_check != Some(false);
        }
        if path == crate::observe::SYSTEMD_PATH {
            return st.world.boot.systemd;
        }
        if path == crate::observe::filesystems::EFI_FIRMWARE_PATH {
            return st.world.boot.uefi;
        }
        if let Some(e) = tools::loader::exists(&st.world, path) {
            return e;
        }
        if let Some(e) = tools::systemd::exists(&st.world, path) {
            return e;
        }
        // smartmontools is installed where the disks are real enough to have SMART.
        if crate::observe::smart::SMARTCTL_PATHS.contains(&path) {
            return path == crate::observe::smart::SMARTCTL_PATHS[0]
                && !st.world.missing_tools.iter().any(|t| t == "smartctl");
        }
        // The partition tools are where Debian puts them, unless the model says they are missing.
        if let Some((t, _)) = crate::observe::partx::PARTITION_TOOLS
            .iter()
            .find(|(_, paths)| paths.first() == Some(&path))
        {
            return !st.world.missing_tools.iter().any(|m| m == t);
        }
        let tool = st.world.boot.initramfs_tool.as_deref();
        crate::observe::INITRAMFS_TOOLS
            .iter()
            .find(|(t, _)| Some(*t) == tool)
            .is_some_and(|(_, p)| *p == path)
    }

    fn replace_file(&self, path: &str, content: &str) -> Result<(), HostError> {
        let mut st = self.st();
        st.log.push(vec!["(replace)".into(), path.into()]);
        if let Some(i) = st.faults.iter().position(|f| path.contains(&f.needle)) {
            let f = st.faults.remove(i);
            return Err(HostError::Io {
                path: path.into(),
                detail: f.stderr,
            });
        }
        let b = &mut st.world.boot;
        if crate::observe::MDADM_CONF_PATHS.contains(&path) {
            b.mdadm_conf_path = Some(path.into());
            b.mdadm_conf = Some(content.into());
        } else if path == crate::observe::WRITE_CACHE_RULE_PATH {
            b.write_cache_rule = Some(content.into());
        } else if path == crate::observe::FSTAB_PATH {
            b.fstab = Some(content.into());
        } else if path == crate::observe::luks::CRYPTTAB_PATH {
            b.crypttab = Some(content.into());
        } else if crate::observe::loader::HOOKS
            .iter()
            .any(|(p, _)| *p == path)
        {
            b.loaders.hooks.insert(path.into(), content.into());
        } else if !tools::loader::write_stamp(&mut st, path, content)
            && !tools::systemd::replace_file(&mut st.world, path, content)
        {
            return Err(HostError::Io {
                path: path.into(),
                detail: "the simulated host does not model this file".into(),
            });
        }
        Ok(())
    }

    /// A mail transport where the machine has one (the message kept in the log); nothing else
    /// is run with input on a simulated machine.
    fn run_input(
        &self,
        argv: &[String],
        input: &str,
        env: &[(String, String)],
        _timeout: std::time::Duration,
    ) -> Result<CmdOutput, HostError> {
        let mut st = self.st();
        // cryptsetup reading a passphrase (`--key-file -`): logged and faulted as `run` does;
        // the passphrase stands where the `-` was, as the key it is.
        if matches!(
            argv.first().map(String::as_str),
            Some("cryptsetup" | "systemd-cryptenroll")
        ) {
            st.log.push(argv.to_vec());
            let joined = argv.join(" ");
            if let Some(i) = st.faults.iter().position(|f| joined.contains(&f.needle)) {
                let f = st.faults.remove(i);
                return fail(f.status, f.stderr);
            }
            let key = tools::crypt::typed(input);
            let args: Vec<&str> = (argv[1..].iter())
                .map(|a| match a.as_str() {
                    crate::config::encryption::PASSPHRASE => key.as_str(),
                    a => a,
                })
                .collect();
            if argv[0] == "systemd-cryptenroll" {
                // It reads the passphrase from $PASSWORD, never from stdin.
                let password = env.iter().find(|(k, _)| k == "PASSWORD");
                let key = tools::crypt::typed(password.map(|(_, v)| v.as_str()).unwrap_or(""));
                return tools::tpm2::enroll(&mut st, &args, &key);
            }
            return tools::crypt::cryptsetup(&mut st, &args);
        }
        let mut entry = vec!["(input)".to_string()];
        entry.extend(argv.iter().cloned());
        entry.push(input.to_string());
        st.log.push(entry);
        match argv.first().map(String::as_str) {
            Some(crate::observe::monitoring::SENDMAIL) if st.world.boot.monitoring.sendmail => {
                out("")
            }
            _ => Err(HostError::Spawn {
                program: argv.join(" "),
                detail: "the simulated host runs no such program".into(),
            }),
        }
    }

    /// Time passes: every running resync, recovery or check moves a quarter of the way on.
    fn sleep(&self, _d: std::time::Duration) {
        let mut st = self.st();
        tools::advance_moves(&mut st, false);
        let corrupt = st.corrupt.clone();
        for a in st
            .world
            .arrays
            .iter_mut()
            .filter(|a| a.sync_action != "frozen")
        {
            if let Some((done, total)) = a.sync_completed {
                let next = (done + total.div_ceil(4)).min(total);
                let bad = corrupt.get(&a.kname).map(Vec::as_slice).unwrap_or(&[]);
                tools::md_check::advance(a, bad, done, next);
                if next >= total {
                    tools::md_check::completed(a);
                    tools::finish_sync(a);
                } else {
                    a.sync_completed = Some((next, total));
                }
            }
        }
    }
}
