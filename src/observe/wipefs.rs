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

/// Empty output (older wipefs prints nothing when there is nothing) means no signatures.
pub fn parse(text: &str) -> Result<Vec<Signature>, ParseError> {
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
        .map(|r| Signature {
            offset: r.offset.string(),
            kind: r.kind.string(),
            uuid: (r.kind.text() == Some("linux_raid_member"))
                .then(|| r.uuid.string())
                .filter(|u| !u.is_empty()),
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
        assert!(parse("{\"signatures\": [").is_err());
    }
}
