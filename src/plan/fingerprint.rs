//! A fingerprint of an observation: what a saved plan was made from. Progress counters that move
//! on their own (resync position, dirty writecache blocks) are left out; everything a step
//! depends on is in.

use crate::observe::Observed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::sync::{Arc, OnceLock};

pub fn fingerprint(obs: &Observed) -> String {
    of_normalized(&normalized(obs))
}

fn of_normalized(o: &Observed) -> String {
    let bytes = serde_json::to_vec(o).expect("observation serializes");
    let digest = Sha256::digest(&bytes);
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// A plan's basis: the fingerprint of the observation it was made from, taken the first time it
/// is read (a new array's or filesystem's UUID, a saved plan, the shell script's header, JSON).
/// A plan that is only printed never reads it, and does not serialize and hash the machine.
/// Read, compared, cloned and written as the fingerprint's text.
#[derive(Clone)]
pub struct Basis {
    text: OnceLock<String>,
    of: Option<Arc<Observed>>,
}

impl Basis {
    /// The basis of `obs`, taken when first read.
    pub fn of(obs: &Observed) -> Basis {
        Basis {
            text: OnceLock::new(),
            of: Some(Arc::new(normalized(obs))),
        }
    }

    /// A basis already taken (a saved plan's).
    pub fn known(text: String) -> Basis {
        Basis {
            text: OnceLock::from(text),
            of: None,
        }
    }

    /// The normalized observation it is (or will be) taken of; None for a saved plan's.
    pub fn observation(&self) -> Option<&Observed> {
        self.of.as_deref()
    }

    /// Whether it has been taken (or came with a saved plan).
    pub fn is_taken(&self) -> bool {
        self.text.get().is_some()
    }

    pub fn as_str(&self) -> &str {
        self.text.get_or_init(|| {
            of_normalized(
                self.of
                    .as_deref()
                    .expect("a basis without its text has its observation"),
            )
        })
    }
}

impl PartialEq for Basis {
    fn eq(&self, other: &Basis) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Basis {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl std::fmt::Display for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Basis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Basis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Basis, D::Error> {
        String::deserialize(d).map(Basis::known)
    }
}

/// The observation without what moves on its own: what the fingerprint is taken of, and what a
/// saved plan carries so that a stale plan can say what changed.
pub fn normalized(obs: &Observed) -> Observed {
    let mut o = obs.clone();
    // Drive health moves on its own and decides no step.
    o.smart.clear();
    for a in o.arrays.iter_mut() {
        // Resync/recovery progress moves on its own; a member that fails shows as `faulty`.
        a.sync_completed = None;
        a.sync_action = String::new();
        // Clean/active flip on their own; read-only-ness decides steps (`--readwrite`).
        if !matches!(a.array_state.as_str(), "read-auto" | "readonly") {
            a.array_state = String::new();
        }
        a.degraded = 0;
        // What a check leaves: its count, where it stopped, its speed limit while it ran.
        a.mismatch_cnt = 0;
        a.sync_min = 0;
        a.sync_speed_max = None;
        for m in a.members.iter_mut() {
            m.state.retain(|w| w == "faulty" || w == "write_mostly");
        }
    }
    for l in o.lvm.lvs.iter_mut() {
        // Fixed when the LV is created (a new LV has a new UUID): left out, so that plans saved
        // before it was observed keep their basis.
        l.stripe_size = None;
        if let Some(w) = l.writecache.as_mut() {
            w.writeback_blocks = None;
            w.total_blocks = None;
            w.free_blocks = None;
        }
        if let Some(c) = l.cache.as_mut() {
            c.dirty_blocks = None;
            c.used_blocks = None;
            c.total_blocks = None;
        }
    }
    o
}

/// What differs between two observations, object by object and field by field, as Terraform
/// lists "objects changed outside": `array md127 (data0): members[sdc].state ["in_sync"] → …`.
pub fn changes(then: &Observed, now: &Observed) -> Vec<String> {
    let a = serde_json::to_value(normalized(then)).expect("observation serializes");
    let b = serde_json::to_value(normalized(now)).expect("observation serializes");
    let mut out = Vec::new();
    for (key, label) in [
        ("hostname", "hostname"),
        ("block_devices", "device"),
        ("arrays", "array"),
    ] {
        diff_value(label, &a[key], &b[key], &mut out);
    }
    for (key, label) in [("vgs", "vg"), ("pvs", "pv"), ("lvs", "lv")] {
        diff_value(label, &a["lvm"][key], &b["lvm"][key], &mut out);
    }
    if let (Some(x), Some(y)) = (a["boot"].as_object(), b["boot"].as_object()) {
        for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
            let (v, w) = (&a["boot"][k], &b["boot"][k]);
            if v != w {
                out.push(match (v.is_null(), w.is_null()) {
                    (true, _) => format!("{k}: appeared"),
                    (_, true) => format!("{k}: gone"),
                    _ => format!("{k}: changed"),
                });
            }
        }
    }
    out
}

/// The key that names an element of a list: an LV by vg/name, everything else by its name.
fn element_key(v: &serde_json::Value) -> Option<String> {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str());
    match (s("vg"), s("name")) {
        (Some(vg), Some(n)) => return Some(format!("{vg}/{n}")),
        (None, Some(n)) if s("kname").is_none() => return Some(n.to_string()),
        _ => {}
    }
    let k = s("kname")?;
    Some(match s("name") {
        Some(n) => format!("{k} ({n})"),
        None => k.to_string(),
    })
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

fn diff_value(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    if a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (v, w) = (&a[k], &b[k]);
                let join = if path.contains(": ") { "." } else { ": " };
                diff_value(&format!("{path}{join}{k}"), v, w, out);
            }
        }
        (Value::Array(x), Value::Array(y))
            if x.iter().chain(y).all(|e| element_key(e).is_some()) =>
        {
            // Lists of named objects: matched by name, so one new disk is one line.
            let keyed = |l: &Vec<Value>| -> Vec<(String, Value)> {
                l.iter()
                    .map(|e| (element_key(e).expect("checked"), e.clone()))
                    .collect()
            };
            let (x, y) = (keyed(x), keyed(y));
            let sep = if path.contains(": ") { "[" } else { " " };
            let close = if sep == "[" { "]" } else { "" };
            for (k, v) in &x {
                match y.iter().find(|(j, _)| j == k) {
                    Some((_, w)) => diff_value(&format!("{path}{sep}{k}{close}"), v, w, out),
                    None => out.push(format!("{path}{sep}{k}{close}: gone")),
                }
            }
            for (k, _) in y.iter().filter(|(k, _)| !x.iter().any(|(j, _)| j == k)) {
                out.push(format!("{path}{sep}{k}{close}: appeared"));
            }
        }
        _ => out.push(format!("{path} {} → {}", short(a), short(b))),
    }
}
