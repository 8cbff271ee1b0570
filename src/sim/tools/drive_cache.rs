//! A drive's volatile write cache: `hdparm -W[0|1]` on ATA disks, `sdparm --set|--clear=WCE`
//! on SCSI disks, as the real tools answer.

use crate::host::{CmdOutput, HostError};
use crate::observe::WriteCacheSource;
use crate::sim::world::{SimState, Target};
use crate::sim::{fail, out};

pub fn hdparm(st: &mut SimState, flag: &str, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(2, format!("{dev}: No such file or directory\n"));
    };
    let d = st.dev_mut(&k).unwrap();
    let ata = matches!(d.tran.as_deref(), Some("sata") | Some("ata"));
    let scsi = matches!(
        d.tran.as_deref(),
        Some("sas") | Some("scsi") | Some("iscsi") | Some("fc")
    );
    let set = match flag {
        "-W" => None,
        "-W0" => Some(false),
        "-W1" => Some(true),
        _ => return fail(1, format!("hdparm: sim does not model {flag}\n")),
    };
    let mut o = format!("\n{dev}:\n");
    if !ata && !scsi {
        if let Some(on) = set {
            let v = on as u8;
            o.push_str(&format!(
                " setting drive write-caching to {v} ({})\n",
                if v == 1 { "on" } else { "off" }
            ));
            return Ok(CmdOutput {
                status: 25,
                stdout: o,
                stderr: " HDIO_DRIVE_CMD(setcache) failed: Inappropriate ioctl for device\n".into(),
            });
        }
        return out(&o);
    }
    if scsi {
        // hdparm cannot switch a SAS/SCSI disk's cache, and still exits 0.
        if let Some(v) = set {
            o.push_str(&format!(
                " setting drive write-caching to {} ({})\n",
                v as u8,
                if v { "on" } else { "off" }
            ));
        }
        o.push_str(" write-caching = not supported\n");
        return out(&o);
    }
    if let Some(v) = set {
        o.push_str(&format!(
            " setting drive write-caching to {} ({})\n",
            v as u8,
            if v { "on" } else { "off" }
        ));
        let source = d
            .write_cache
            .map(|c| c.source)
            .unwrap_or(WriteCacheSource::Hdparm);
        d.write_cache = Some(crate::observe::WriteCacheState {
            enabled: Some(v),
            source,
        });
    }
    match d.write_cache.and_then(|c| c.enabled) {
        Some(on) => o.push_str(&format!(
            " write-caching = {:>2} ({})\n",
            on as u8,
            if on { "on" } else { "off" }
        )),
        None => o.push_str(" write-caching = not supported\n"),
    }
    out(&o)
}

/// `sdparm --set|--clear=WCE DEV`: the caching mode page of a SCSI disk (the kernel's cache_type
/// follows). Prints the device's identification line, as the real tool does.
pub fn sdparm(st: &mut SimState, on: bool, dev: &str) -> Result<CmdOutput, HostError> {
    let Some(Target::Block(k)) = st.resolve(dev) else {
        return fail(1, format!("unable to access {dev}, ENOENT\n"));
    };
    let d = st.dev_mut(&k).unwrap();
    match d.write_cache {
        Some(w) if w.source == WriteCacheSource::ScsiCacheType && w.enabled.is_some() => {
            d.write_cache = Some(crate::observe::WriteCacheState {
                enabled: Some(on),
                source: w.source,
            });
            out(&format!(
                "    {dev}: {:<8}  {:<16}  2.5+\n",
                "HYRAID",
                d.model.clone().unwrap_or_default()
            ))
        }
        _ => fail(5, format!("{dev}: no caching mode page\n")),
    }
}
