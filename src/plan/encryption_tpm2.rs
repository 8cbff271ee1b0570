//! A TPM2 enrolled in an encrypted device's header (`tpm2: true`): enrolled once the header is
//! there, before its backup is taken (the backup keeps the TPM2's slot); an enrolment the file
//! does not ask for on a device opened with a passphrase is refused (it would open on this
//! machine without anyone typing it); no TPM2 systemd can use is a refusal at plan time.

use super::encryption::Sealed;
use super::*;
use crate::config::encryption::{EncryptionSpec, TPM2_TOKEN};
use crate::observe::luks::Luks;
use crate::plan::step::EnrollTpm2;

impl Planner<'_> {
    /// The TPM2 of `t` with header `h` (None: this plan formats it). Some(whether a step
    /// enrols it, changing the key slots), or None when refused.
    pub(in crate::plan) fn tpm2(
        &mut self,
        t: &Sealed,
        e: &EncryptionSpec,
        h: Option<&Luks>,
    ) -> Option<bool> {
        let (object, device) = (t.object.clone(), t.device.clone());
        let enrolled = match h {
            None => Some(false),
            Some(h) => (h.header.as_ref()).map(|x| x.tokens.iter().any(|k| k == TPM2_TOKEN)),
        };
        match (e.tpm2, enrolled) {
            // Beside a key file kept on the machine, a TPM2 enrolled by hand opens nothing the
            // key file does not: noted.
            (false, Some(true)) if !e.is_passphrase() => {
                self.notes.push(format!("{object}: the LUKS header on {device} also has a TPM2 enrolled (a `{TPM2_TOKEN}` token), which the file does not manage"));
                Some(false)
            }
            (false, Some(true)) => {
                self.refuse(&object, format!("the LUKS header on {device} has a TPM2 enrolled (a `{TPM2_TOKEN}` token), which the file does not ask for: this machine opens it without its key"), format!("add `tpm2: true` (with `passphrase: true`) to its `encryption`, or remove the enrolment: `systemd-cryptenroll --wipe-slot=tpm2 {device}`"));
                None
            }
            (false, _) | (true, Some(true)) => Some(false),
            (true, None) => {
                self.refuse(&object, format!("the LUKS header on {device} could not be read (`cryptsetup luksDump`), so whether its TPM2 is enrolled is not known"), "check the header (`cryptsetup luksDump`), then plan again");
                None
            }
            (true, Some(false)) => {
                let tpm = self.o.boot.tpm2.clone().unwrap_or_default();
                if tpm.devices.is_empty() {
                    let why = tpm.error.unwrap_or_else(|| {
                        "`systemd-cryptenroll --tpm2-device=list` lists no TPM2 device".into()
                    });
                    self.refuse(&object, format!("the file enrols a TPM2 in {device}, and this machine has none systemd can use: {why}"), "enable the TPM in the firmware, and install what systemd needs for it (Debian 12: libtss2-esys-3.0.2-0 libtss2-rc0 libtss2-mu0 libtss2-tcti-device0; Debian 13: systemd-cryptsetup libtss2-esys-3.0.2-0t64 libtss2-rc0t64 libtss2-mu-4.0.1-0t64 libtss2-tcti-device0t64); or remove `tpm2`");
                    return None;
                }
                self.steps.push(ps(
                    Step::EnrollTpm2(EnrollTpm2 {
                        on: t.on.clone(),
                        device,
                    }),
                    Risk::Safe,
                    "the file enrols a TPM2, and the header has none",
                ));
                Some(true)
            }
        }
    }
}
