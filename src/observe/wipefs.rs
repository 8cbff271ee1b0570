//! `wipefs -n --json DEV`: signatures on a device, probed directly (not from the udev cache).

use super::model::Signature;
use super::parse_util::{Flex, ParseError};
use serde::Deserialize;

#[derive(Deserialize)]
struct Top {
    #[serde(default)]
    signatures: Vec<Raw>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    device: Flex,
    #[serde(default)]
    offset: Flex,
    #[serde(default, rename = "type")]
    kind: Flex,
    #[serde(default)]
    uuid: Flex,
}

pub fn argv(dev: &str) -> Vec<String> {
    vec![
        "wipefs".into(),
        "--no-act".into(),
        "--json".into(),
        dev.into(),
    ]
}

/// One probe of several devices: wipefs prints one table for all of them, each signature with
/// its `device` (the kernel name). Any device it cannot open ends the whole run (exit 1, no
/// table), so a failed batch is probed again one device at a time.
pub fn argv_many(devs: &[String]) -> Vec<String> {
    let mut v = argv("");
    v.pop();
    v.extend(devs.iter().cloned());
    v
}

/// Empty output (older wipefs prints nothing when there is nothing) means no signatures.
pub fn parse(text: &str) -> Result<Vec<Signature>, ParseError> {
    Ok(parse_raw(text)?.into_iter().map(|(_, s)| s).collect())
}

/// The signatures of a several-device probe, each with the kernel name of its device (wipefs's
/// `device` column: the basename of the path it was given).
pub fn parse_by_device(text: &str) -> Result<Vec<(String, Signature)>, ParseError> {
    parse_raw(text)
}

fn parse_raw(text: &str) -> Result<Vec<(String, Signature)>, ParseError> {
    if text.trim().is_empty() {
        return Ok(vec![]);
    }
    let top: Top = serde_json::from_str(text).map_err(|e| ParseError::Json {
        tool: "wipefs",
        detail: e.to_string(),
    })?;
    Ok(top
        .signatures
        .into_iter()
        .map(|r| {
            let device = r.device.string();
            let device = device.rsplit('/').next().unwrap_or_default().to_string();
            let sig = Signature {
                offset: r.offset.string(),
                kind: r.kind.string(),
                uuid: (r.kind.text() == Some("linux_raid_member"))
                    .then(|| r.uuid.string())
                    .filter(|u| !u.is_empty()),
            };
            (device, sig)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx(name: &str) -> String {
        crate::observe::parse_util::fixture(&format!("layout-three-arrays/{name}"))
    }

    #[test]
    fn signatures() {
        assert_eq!(
            parse(&fx("wipefs-n-json-ext4.json")).unwrap(),
            vec![Signature {
                offset: "0x438".into(),
                kind: "ext4".into(),
                uuid: None
            }]
        );
        assert!(parse(&fx("wipefs-n-json-blank.json")).unwrap().is_empty());
        assert_eq!(
            parse(&fx("wipefs-n-json-md-member.json")).unwrap()[0].kind,
            "linux_raid_member"
        );
        assert!(parse("").unwrap().is_empty());
        // One run for three devices (ext4, blank, swap): the blank one has no line at all.
        let three = parse_by_device(&crate::observe::parse_util::fixture(
            "wipefs-n-json-three-devices.json",
        ))
        .unwrap();
        let got: Vec<(&str, &str, &str)> = three
            .iter()
            .map(|(d, s)| (d.as_str(), s.kind.as_str(), s.offset.as_str()))
            .collect();
        assert_eq!(got, [("sdb", "ext4", "0x438"), ("sdd", "swap", "0xff6")]);
        assert_eq!(
            argv_many(&["/dev/sdb".into(), "/dev/sdc".into()]),
            ["wipefs", "--no-act", "--json", "/dev/sdb", "/dev/sdc"]
        );
        assert!(parse("{\"signatures\": [").is_err());
    }
}
