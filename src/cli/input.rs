//! A FILE argument: a configuration or a saved plan, decided by its content the same way in
//! every verb (`planfile::looks_like_plan`), never by its name. A configuration may be YAML or
//! JSON; a plan may be saved under any name.

use crate::config::{self, Desired};
use crate::error::{Error, msg};
use crate::plan::Plan;
use crate::plan::planfile::{self, PlanConfig};
use std::io::Read;
use std::path::Path;

/// Largest saved plan hyraid reads (it carries the observation of the machine).
const MAX_PLAN_BYTES: u64 = 64 << 20;

/// What a FILE argument holds.
pub(super) enum Input {
    Config(Box<Desired>, PlanConfig),
    Plan(Box<Plan>),
}

/// Read FILE (`-`: standard input) and tell a saved plan from a configuration by its content.
pub(super) fn read_input(file: &Path) -> Result<Input, Error> {
    let stdin = file.as_os_str() == "-";
    let name = if stdin {
        "<stdin>".to_string()
    } else {
        file.display().to_string()
    };
    let mut bytes = Vec::new();
    let read = if stdin {
        std::io::stdin()
            .take(MAX_PLAN_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(MAX_PLAN_BYTES + 1).read_to_end(&mut bytes))
    };
    if let Err(e) = read {
        return Err(if stdin {
            msg(format!(
                "cannot read the configuration from standard input: {e}"
            ))
        } else {
            // As every other error of a configuration: file:line:col with the cause.
            config::load_file(file)
                .err()
                .map(Error::from)
                .unwrap_or_else(|| msg(format!("{name}: {e}")))
        });
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    if planfile::looks_like_plan(bytes) {
        if bytes.len() as u64 > MAX_PLAN_BYTES {
            return Err(msg(format!(
                "{name}: a saved plan is at most {MAX_PLAN_BYTES} bytes"
            )));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| msg(format!("{name}: {e}")))?;
        let plan = planfile::parse(text).map_err(|e| msg(format!("{name}: {e}")))?;
        return Ok(Input::Plan(Box::new(plan)));
    }
    if bytes.len() > config::MAX_CONFIG_BYTES {
        let e = format!(
            "{} holds more than {} bytes; a hyraid configuration is at most that",
            if stdin {
                "standard input"
            } else {
                name.as_str()
            },
            config::MAX_CONFIG_BYTES
        );
        return Err(msg(e));
    }
    let desired = config::load_bytes(&name, bytes)?;
    let text = String::from_utf8(bytes.to_vec()).expect("a valid configuration is UTF-8");
    Ok(Input::Config(
        Box::new(desired),
        PlanConfig { file: name, text },
    ))
}

/// A configuration and its text (a saved plan carries both); a saved plan is refused with what
/// to do with it instead.
pub(super) fn read_config(file: &Path) -> Result<(Desired, PlanConfig), Error> {
    match read_input(file)? {
        Input::Config(d, c) => Ok((*d, c)),
        Input::Plan(_) => Err(msg(format!(
            "{} is a saved plan (`hyraid plan -o`), not a configuration: `hyraid show {0}` prints it, `hyraid apply {0}` runs it; give the configuration file here",
            file.display()
        ))),
    }
}
