//! `lsblk --json --bytes -o …` (tree form), util-linux 2.33+.

use super::parse_util::{Flex, ParseError};
use serde::Deserialize;

/// The exact columns hyraid asks for. All exist in util-linux 2.38 (no PARTN, no ID-LINK).
pub const COLUMNS: &str = "NAME,KNAME,PATH,TYPE,SIZE,ROTA,SERIAL,WWN,MODEL,TRAN,FSTYPE,UUID,PARTUUID,PARTLABEL,PARTTYPE,PKNAME,MOUNTPOINT,PTTYPE,PTUUID,LOG-SEC,PHY-SEC,MAJ:MIN";

/// PARTTYPE of an EFI system partition: its GPT type GUID (lowercase, as lsblk prints it) and
/// its MBR type.
pub const ESP_GPT_TYPE: &str = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b";
pub const ESP_MBR_TYPE: &str = "0xef";

pub fn argv() -> Vec<String> {
    ["lsblk", "--json", "--bytes", "-o", COLUMNS]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[derive(Debug, Deserialize)]
struct Top {
    blockdevices: Vec<RawNode>,
}

#[derive(Debug, Deserialize)]
struct RawNode {
    #[serde(default)]
    name: Flex,
    #[serde(default)]
    kname: Flex,
    #[serde(default, rename = "type")]
    kind: Flex,
    #[serde(default)]
    size: Flex,
    #[serde(default)]
    rota: Flex,
    #[serde(default)]
    serial: Flex,
    #[serde(default)]
    wwn: Flex,
    #[serde(default)]
    model: Flex,
    #[serde(default)]
    tran: Flex,
    #[serde(default)]
    fstype: Flex,
    #[serde(default)]
    uuid: Flex,
    #[serde(default)]
    partlabel: Flex,
    #[serde(default)]
    parttype: Flex,
    #[serde(default)]
    mountpoint: Flex,
    #[serde(default)]
    pttype: Flex,
    #[serde(default, rename = "maj:min")]
    maj_min: Flex,
    #[serde(default)]
    children: Vec<RawNode>,
}

/// One node of the tree, flattened; `parent` is the node it was listed under, `children` its
/// direct children's kernel names (each node appears once even when listed under several parents).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kname: String,
    /// NAME: the device-mapper name of an LV (`vg-lv`, dashes doubled), else the kernel name.
    pub name: String,
    pub kind: String,
    pub size: u64,
    pub rotational: bool,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub model: Option<String>,
    pub tran: Option<String>,
    pub fstype: Option<String>,
    /// The filesystem's UUID (lsblk's UUID column, from udev's blkid probe).
    pub uuid: Option<String>,
    pub partlabel: Option<String>,
    /// The partition's type: a GPT type GUID (lowercase) or an MBR type (`0xef`).
    pub parttype: Option<String>,
    pub mountpoint: Option<String>,
    pub pttype: Option<String>,
    pub maj_min: String,
    pub parents: Vec<String>,
    pub children: Vec<String>,
}

pub fn parse(text: &str) -> Result<Vec<Node>, ParseError> {
    let top: Top = serde_json::from_str(text).map_err(|e| ParseError::Json {
        tool: "lsblk",
        detail: e.to_string(),
    })?;
    let mut out = Nodes::default();
    for n in &top.blockdevices {
        walk(n, None, &mut out)?;
    }
    Ok(out.nodes)
}

/// The flattened tree: a device stacked on several (an md array, an LV over two PVs) appears
/// once under each parent in lsblk's output, and once here.
#[derive(Default)]
struct Nodes {
    nodes: Vec<Node>,
    index: std::collections::HashMap<String, usize>,
}

impl Nodes {
    fn get_mut(&mut self, kname: &str) -> Option<&mut Node> {
        self.index.get(kname).map(|&i| &mut self.nodes[i])
    }
    fn push(&mut self, n: Node) {
        self.index.insert(n.kname.clone(), self.nodes.len());
        self.nodes.push(n);
    }
}

fn walk(n: &RawNode, parent: Option<&str>, out: &mut Nodes) -> Result<(), ParseError> {
    let kname = n
        .kname
        .text()
        .or(n.name.text())
        .map(str::to_string)
        .ok_or(ParseError::Value {
            tool: "lsblk",
            detail: "a device without NAME/KNAME".into(),
        })?;
    let size = match n.size.text() {
        None => 0,
        Some(s) => s.parse().map_err(|_| ParseError::Value {
            tool: "lsblk",
            detail: format!("size `{s}` of {kname} is not in bytes (was --bytes given?)"),
        })?,
    };
    let trim = |f: &Flex| {
        f.text()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    if let Some(existing) = out.get_mut(&kname) {
        if let Some(p) = parent
            && !existing.parents.iter().any(|x| x == p)
        {
            existing.parents.push(p.to_string());
        }
    } else {
        out.push(Node {
            kname: kname.clone(),
            name: n.name.text().unwrap_or(&kname).to_string(),
            kind: n.kind.string(),
            size,
            rotational: n.rota.bool(),
            serial: trim(&n.serial),
            wwn: trim(&n.wwn),
            model: trim(&n.model),
            tran: trim(&n.tran),
            fstype: trim(&n.fstype),
            uuid: trim(&n.uuid),
            partlabel: trim(&n.partlabel),
            parttype: trim(&n.parttype).map(|t| t.to_ascii_lowercase()),
            mountpoint: trim(&n.mountpoint),
            pttype: trim(&n.pttype),
            maj_min: n.maj_min.string(),
            parents: parent.map(|p| vec![p.to_string()]).unwrap_or_default(),
            children: Vec::new(),
        });
    }
    for c in &n.children {
        let ck = c.kname.text().or(c.name.text()).unwrap_or("").to_string();
        if let Some(me) = out.get_mut(&kname)
            && !me.children.contains(&ck)
        {
            me.children.push(ck);
        }
        walk(c, Some(&kname), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_identity() {
        let nodes = parse(include_str!(
            "../../tests/fixtures/layout-three-arrays/lsblk-json-partitions.json"
        ))
        .unwrap();
        let sda = nodes.iter().find(|n| n.kname == "sda").unwrap();
        assert_eq!(sda.kind, "disk");
        assert_eq!(sda.size, 2147483648);
        assert!(!sda.rotational);
        assert_eq!(sda.serial.as_deref(), Some("HYSSD1"));
        assert_eq!(sda.wwn.as_deref(), Some("0x5000c50000000001"));
        assert_eq!(sda.tran.as_deref(), Some("sata"));
        assert_eq!(sda.pttype.as_deref(), Some("gpt"));
        assert_eq!(sda.children, vec!["sda1", "sda2"]);
        let sdb1 = nodes.iter().find(|n| n.kname == "sdb1").unwrap();
        assert!(sdb1.rotational);
        assert_eq!(sdb1.parents, vec!["sdb"]);
        assert_eq!(sdb1.partlabel.as_deref(), Some("raid"));
    }

    #[test]
    fn full_stack_dedups_shared_holders() {
        let nodes = parse(include_str!(
            "../../tests/fixtures/layout-three-arrays/lsblk-json-full-stack.json"
        ))
        .unwrap();
        let md127 = nodes.iter().find(|n| n.kname == "md127").unwrap();
        assert_eq!(md127.kind, "raid1");
        assert_eq!(md127.fstype.as_deref(), Some("LVM2_member"));
        let mut p = md127.parents.clone();
        p.sort();
        assert_eq!(p, vec!["sda1", "sdb1"]);
        assert_eq!(nodes.iter().filter(|n| n.kname == "md127").count(), 1);
        let top = nodes
            .iter()
            .find(|n| n.kname == "dm-2" || n.kind == "lvm" && n.parents.len() == 2)
            .unwrap();
        assert_eq!(top.kind, "lvm");
        let sdf = nodes.iter().find(|n| n.kname == "sdf").unwrap();
        assert!(sdf.children.is_empty());
    }

    #[test]
    fn output_all_and_virtio() {
        let nodes = parse(include_str!("../../tests/fixtures/lsblk-json-O.json")).unwrap();
        assert!(
            nodes
                .iter()
                .any(|n| n.kname == "vda" && n.rotational && n.maj_min == "254:0")
        );
    }

    #[test]
    fn rejects_human_sizes_and_garbage() {
        assert!(
            parse(r#"{"blockdevices":[{"name":"sda","size":"931.5G"}]}"#)
                .unwrap_err()
                .to_string()
                .contains("not in bytes")
        );
        assert!(parse("lsblk: unknown column: ID-LINK").is_err());
        // Old lsblk (≤2.32) printed booleans as strings; extra columns are ignored.
        let n = parse(r#"{"blockdevices":[{"name":"sda","size":"100","rota":"1","id-link":"x","type":"disk"}]}"#).unwrap();
        assert!(n[0].rotational);
    }
}
