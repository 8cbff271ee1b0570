//! What keeps an encrypted mirror or LV readable: its key file (the header opens only with it)
//! and the backup of its header the file names, which must be there, private, and a copy of the
//! header as it is now (the same UUID and key slots).

use super::{Findings, Severity};
use crate::config::Desired;
use crate::observe::Observed;

pub(super) fn encryption(o: &Observed, d: &Desired, f: &mut Findings) {
    for x in crate::plan::encryption::encrypted_devices(d, o) {
        let Some(h) = x
            .kname
            .as_ref()
            .and_then(|k| o.luks.iter().find(|l| l.device == *k))
        else {
            continue;
        };
        let e = x.spec;
        let dev = &x.device;
        // Closed: nothing on it can be used (a boot where nobody typed the passphrase, a close
        // by hand).
        if h.mapping.is_none() {
            let open = if e.is_passphrase() {
                "`hyraid apply FILE` opens it (it asks the passphrase) and mounts what the file mounts on it"
            } else {
                "`hyraid apply FILE` opens it with its key file and mounts what the file mounts on it"
            };
            f.add(
                Severity::Degraded,
                x.object.clone(),
                format!("its LUKS header on {dev} is not open (no /dev/mapper/{}): what is on it cannot be read or mounted", e.name),
                if e.is_passphrase() {
                    "crypttab opens it at boot with a passphrase typed on the console: a boot nobody was at, or a close by hand, leaves it closed"
                } else {
                    "crypttab opens it at boot with its key file: a boot that could not (the key file or the array missing then), or a close by hand, leaves it closed"
                },
                open,
            );
        }
        // A passphrase is in a person's head: nothing here to check.
        match e.key_path().map(|k| o.boot.secret_files.get(k)) {
            None => {}
            Some(Some(k)) if k.size > 0 && k.exposed() => f.add(
                Severity::Lint,
                x.object.clone(),
                format!("its key file {} can be read by users other than root, or is not root's", e.key_file),
                "whoever reads the key file can read the data",
                &format!("`chown root:root {0} && chmod 0400 {0}`", e.key_file),
            ),
            Some(Some(k)) if k.size > 0 => {}
            Some(_) => f.add(
                Severity::Degraded,
                x.object.clone(),
                format!("its key file {} is missing or empty", e.key_file),
                &format!("the LUKS header on {dev} opens only with its key: after the next reboot (or a close) the data cannot be read"),
                "restore the key file from your copy (mode 0400, root's) before the next reboot",
            ),
        }
        let Some(b) = &e.header_backup else { continue };
        let uuid = h.uuid.clone().unwrap_or_default();
        let slots = h.header.as_ref().map(|x| &x.keyslots);
        let take = format!(
            "`hyraid apply` takes it again (or `cryptsetup luksHeaderBackup {dev} --header-backup-file {b}`); then copy it off the machine"
        );
        use crate::observe::luks::{BackupState, backup_state};
        match backup_state(o.boot.secret_files.get(b), &uuid, slots) {
            BackupState::Missing => f.add(
                Severity::Lint,
                x.object.clone(),
                format!("the header backup {b} the file names is missing"),
                "a damaged header loses the data; the backup is what restores it (`cryptsetup luksHeaderRestore`)",
                &take,
            ),
            BackupState::OtherHeader(other) => f.add(
                Severity::Lint,
                x.object.clone(),
                format!("the header backup {b} holds another header (UUID {other}, this one's is {uuid})"),
                "restored, it would not open this device",
                &format!("move {b} away (keep it if that header still matters); {take}"),
            ),
            BackupState::SlotsDiffer(have, want) => f.add(
                Severity::Lint,
                x.object.clone(),
                format!(
                    "the header backup {b} no longer matches the header: its key slots are {have:?}, the header's {want:?}"
                ),
                "a key was added or removed since it was taken: restored, it would bring back a removed key or lack a new one",
                &take,
            ),
            BackupState::Exposed => f.add(
                Severity::Lint,
                x.object.clone(),
                format!("the header backup {b} can be read by users other than root"),
                "with a key that was ever in its slots, the backup opens the data",
                &format!("`chown root:root {b} && chmod 0400 {b}`"),
            ),
            BackupState::Current => {}
        }
    }
}
