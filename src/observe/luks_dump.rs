//! `cryptsetup luksDump --dump-json-metadata DEVICE` (cryptsetup 2.4 and later: Debian 12 and 13):
//! the LUKS2 JSON area, from which hyraid reads the data segment's cipher and offset and the key
//! slots. The header's UUID is not in the JSON area (it is in the binary header): lsblk gives it
//! for a device, `cryptsetup luksUUID FILE` for a header backup. Older releases' text form
//! (`luksDump` without the flag) is read for the same fields.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What hyraid reads of a LUKS2 header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LuksHeader {
    /// The data segment's cipher (`aes-xts-plain64`).
    pub cipher: String,
    /// Where the data starts, in bytes (16 MiB by default).
    pub data_offset: u64,
    /// The key slots in use, by number.
    pub keyslots: Vec<u32>,
    /// The types of its tokens (`systemd-tpm2`: a TPM2 enrolled by systemd-cryptenroll).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<String>,
}

pub fn argv(device: &str) -> Vec<String> {
    ["cryptsetup", "luksDump", "--dump-json-metadata", device]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The text form, where the release's cryptsetup has no `--dump-json-metadata`.
pub fn text_argv(device: &str) -> Vec<String> {
    ["cryptsetup", "luksDump", device]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[derive(Deserialize)]
struct Json {
    keyslots: BTreeMap<String, serde_json::Value>,
    segments: BTreeMap<String, Segment>,
    #[serde(default)]
    tokens: BTreeMap<String, Token>,
}

#[derive(Deserialize)]
struct Token {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Segment {
    #[serde(rename = "type")]
    kind: String,
    offset: String,
    #[serde(default)]
    encryption: Option<String>,
}

/// The JSON area; None when it is not a LUKS2 one with a crypt segment.
pub fn parse_json(text: &str) -> Option<LuksHeader> {
    let j: Json = serde_json::from_str(text.trim()).ok()?;
    let seg = j
        .segments
        .iter()
        .filter(|(_, s)| s.kind == "crypt")
        .min_by_key(|(k, _)| k.parse::<u32>().unwrap_or(u32::MAX))?
        .1;
    Some(LuksHeader {
        cipher: seg.encryption.clone()?,
        data_offset: seg.offset.parse().ok()?,
        keyslots: j.keyslots.keys().filter_map(|k| k.parse().ok()).collect(),
        tokens: j.tokens.values().map(|t| t.kind.clone()).collect(),
    })
}

/// The text form: `Data segments:` then `  0: crypt`, `offset: 16777216 [bytes]`, `cipher: …`;
/// `Keyslots:` then `  0: luks2`.
pub fn parse_text(text: &str) -> Option<LuksHeader> {
    let mut section = "";
    let (mut cipher, mut offset, mut slots, mut tokens) = (None, None, Vec::new(), Vec::new());
    for line in text.lines() {
        if !line.starts_with([' ', '\t']) {
            section = line.trim_end_matches(':').trim();
            continue;
        }
        let l = line.trim();
        match section {
            "Keyslots" => {
                if let Some((n, kind)) = l.split_once(':')
                    && line.starts_with("  ")
                    && !line.starts_with("   ")
                    && kind.trim().starts_with("luks2")
                    && let Ok(n) = n.trim().parse()
                {
                    slots.push(n);
                }
            }
            // `  0: systemd-tpm2`, its fields indented further.
            "Tokens" => {
                if let Some((n, kind)) = l.split_once(':')
                    && line.starts_with("  ")
                    && !line.starts_with("   ")
                    && n.trim().parse::<u32>().is_ok()
                {
                    tokens.push(kind.trim().to_string());
                }
            }
            "Data segments" => {
                if let Some(v) = l.strip_prefix("offset:") {
                    offset = offset.or(v.split_whitespace().next().and_then(|x| x.parse().ok()));
                } else if let Some(v) = l.strip_prefix("cipher:") {
                    cipher = cipher.or(Some(v.trim().to_string()));
                }
            }
            _ => {}
        }
    }
    Some(LuksHeader {
        cipher: cipher?,
        data_offset: offset?,
        keyslots: slots,
        tokens,
    })
}
