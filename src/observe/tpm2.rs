//! The TPM2 devices systemd can enrol and unlock with (`systemd-cryptenroll --tpm2-device=list`),
//! asked only when the file enrols one: none when the machine has no TPM, and an error when
//! systemd-cryptenroll is not installed or cannot load the TPM2 libraries (tpm2-tss).

use serde::{Deserialize, Serialize};

/// What `systemd-cryptenroll --tpm2-device=list` answered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tpm2 {
    /// The TPM2 device nodes listed (`/dev/tpmrm0`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// Why none could be listed: the tool's own words (not installed, no TPM2 support).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub fn list_argv() -> Vec<String> {
    ["systemd-cryptenroll", "--tpm2-device=list"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The device paths of the listing (`PATH DEVICE DRIVER` table, one TPM per line).
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|p| p.starts_with("/dev/"))
        .map(str::to_string)
        .collect()
}

/// Ask once; kept in `boot.tpm2`.
pub fn probe(host: &dyn crate::host::Host, boot: &mut super::Boot) {
    if boot.tpm2.is_some() {
        return;
    }
    boot.tpm2 = Some(match host.run(&list_argv()) {
        Ok(o) if o.status == 0 => Tpm2 {
            devices: parse_list(&o.stdout),
            error: None,
        },
        Ok(o) => Tpm2 {
            devices: vec![],
            error: Some(
                o.stderr
                    .lines()
                    .next()
                    .unwrap_or("systemd-cryptenroll failed")
                    .to_string(),
            ),
        },
        Err(e) => Tpm2 {
            devices: vec![],
            error: Some(e.to_string()),
        },
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing() {
        let t = "PATH        DEVICE      DRIVER \n/dev/tpmrm0 MSFT0101:00 tpm_tis\n";
        assert_eq!(parse_list(t), vec!["/dev/tpmrm0".to_string()]);
        assert!(parse_list("").is_empty());
    }
}
