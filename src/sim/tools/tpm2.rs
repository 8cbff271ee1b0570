//! systemd-cryptenroll as hyraid runs it: `--tpm2-device=list` (the model's TPM2 devices,
//! `boot.tpm2`), and a TPM2 enrolled with the passphrase in $PASSWORD: a free key slot and a
//! `systemd-tpm2` token in the header.

use super::crypt::{default_header, header, opens};
use crate::config::encryption::TPM2_TOKEN;
use crate::host::{CmdOutput, HostError};
use crate::sim::world::SimState;
use crate::sim::{fail, out};

/// `systemd-cryptenroll --tpm2-device=list`, as systemd 252 prints it.
pub fn list(st: &SimState) -> Result<CmdOutput, HostError> {
    let t = st.world.boot.tpm2.clone().unwrap_or_default();
    if let Some(e) = t.error {
        return fail(1, format!("{e}\n"));
    }
    let mut o = String::from("PATH        DEVICE      DRIVER \n");
    for d in &t.devices {
        o.push_str(&format!("{d} MSFT0101:00 tpm_tis\n"));
    }
    out(&o)
}

/// `systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs=7 DEV`, `key` being what $PASSWORD held.
pub fn enroll(st: &mut SimState, args: &[&str], key: &str) -> Result<CmdOutput, HostError> {
    let ["--tpm2-device=auto", pcrs, dev] = args else {
        let mut argv = vec!["systemd-cryptenroll".to_string()];
        argv.extend(args.iter().map(|s| s.to_string()));
        return crate::sim::unsupported(&argv);
    };
    if !pcrs.starts_with("--tpm2-pcrs=") {
        return fail(1, format!("Unknown option {pcrs}\n"));
    }
    if st
        .world
        .boot
        .tpm2
        .as_ref()
        .is_none_or(|t| t.devices.is_empty())
    {
        return fail(1, "No TPM2 device found.\n");
    }
    let Some((_, i)) = header(st, dev) else {
        return fail(1, format!("Failed to load LUKS2 superblock: {dev}\n"));
    };
    if !opens(st, i, key) {
        return fail(1, "Failed to unlock disk: Operation not permitted\n");
    }
    let uuid = st.world.luks[i].uuid.clone().unwrap_or_default();
    let slots = st.world.key_slots.entry(uuid).or_default();
    let free = (0..32).find(|n| !slots.contains_key(n)).unwrap_or(31);
    slots.insert(free, "tpm2".to_string());
    let list: Vec<u32> = slots.keys().copied().collect();
    let h = st.world.luks[i].header.get_or_insert_with(default_header);
    h.keyslots = list;
    h.tokens.push(TPM2_TOKEN.to_string());
    out(&format!("New TPM2 token enrolled as key slot {free}.\n"))
}
