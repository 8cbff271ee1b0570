//! Where an alert goes: mail through the machine's sendmail, an HTTP webhook (JSON), an ntfy
//! topic (text with a title, priority and tags), a program (JSON on its standard input). Each
//! sink is tried on its own: one that fails is reported and the others still run. HTTP goes
//! through ureq with timeouts, and is tried three times when the server or the network fails.

use super::Alert;
use crate::config::monitoring::{AlertsSpec, EmailSink, HttpSink};
use crate::host::Host;
use std::time::Duration;

/// How long one HTTP request or program may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// Tries of an HTTP request that failed for a reason that may pass (network, 5xx, 429).
pub const TRIES: u32 = 3;

/// One sink's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub sink: &'static str,
    pub result: Result<(), String>,
    /// The machine is simulated: nothing was sent (and it counts as said).
    pub simulated: bool,
}

/// Send `a` through every sink of `spec` (but `skip`), each on its own. From a simulated
/// machine nothing leaves, through any sink: no request, no mail, no program; each sink says
/// so (an alert about a machine that does not exist, under its snapshot's hostname, would
/// reach a person as if it were real).
pub fn send(host: &dyn Host, spec: &AlertsSpec, a: &Alert, skip: &[&str]) -> Vec<Delivery> {
    if !host.sends_alerts() {
        return (spec.sink_names().into_iter())
            .filter(|s| !skip.contains(s))
            .map(|sink| Delivery {
                sink,
                result: Ok(()),
                simulated: true,
            })
            .collect();
    }
    let mut out = Vec::new();
    let mut d = |sink: &'static str, result: Result<(), String>| {
        out.push(Delivery {
            sink,
            result,
            simulated: false,
        })
    };
    if let Some(e) = spec.email.as_ref().filter(|_| !skip.contains(&"email")) {
        d("email", email(host, e, a));
    }
    if let Some(w) = spec.webhook.as_ref().filter(|_| !skip.contains(&"webhook")) {
        d("webhook", webhook(host, w, a));
    }
    if let Some(n) = spec.ntfy.as_ref().filter(|_| !skip.contains(&"ntfy")) {
        d("ntfy", ntfy(host, n, a));
    }
    if let Some(p) = spec.program.as_ref().filter(|_| !skip.contains(&"program")) {
        d("program", program(host, p, a));
    }
    out
}

/// The message `sendmail -t` gets: its headers name the recipients.
pub fn mail(e: &EmailSink, a: &Alert) -> String {
    let from = e
        .from
        .clone()
        .unwrap_or_else(|| format!("hyraid@{}", a.host));
    format!(
        "From: {from}\nTo: {}\nSubject: {}\nContent-Type: text/plain; charset=utf-8\nAuto-Submitted: auto-generated\n\n{}\n",
        e.to.join(", "),
        a.title(),
        a.body()
    )
}

/// `sendmail -t -oi` with the message (its headers name the recipients).
fn email(host: &dyn Host, e: &EmailSink, a: &Alert) -> Result<(), String> {
    let msg = mail(e, a);
    let argv: Vec<String> = [crate::observe::monitoring::SENDMAIL, "-t", "-oi"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let o = host
        .run_input(&argv, &msg, &[], TIMEOUT)
        .map_err(|e| e.to_string())?;
    match o.status {
        0 => Ok(()),
        n => Err(format!("sendmail exited {n}: {}", o.stderr.trim())),
    }
}

/// The bearer token a sink names, read now (never kept, never printed).
fn token(host: &dyn Host, h: &HttpSink) -> Result<Option<String>, String> {
    let Some(f) = &h.token_file else {
        return Ok(None);
    };
    let t = host
        .read_file(f)
        .map_err(|e| format!("cannot read the token file {f}: {e}"))?;
    let t = t.trim().to_string();
    if t.is_empty() || t.contains(['\n', '\r']) {
        return Err(format!("the token file {f} holds no single-line token"));
    }
    Ok(Some(t))
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .user_agent(concat!("hyraid/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// POST `body` with `headers`, tried again on what may pass (no answer, 429, 5xx).
fn post(
    url: &str,
    headers: &[(&str, String)],
    content_type: &str,
    body: &str,
) -> Result<(), String> {
    let agent = agent();
    let mut last = String::new();
    for attempt in 0..TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(1 << (attempt - 1)));
        }
        let mut req = agent.post(url).header("Content-Type", content_type);
        for (k, v) in headers {
            req = req.header(*k, v.as_str());
        }
        match req.send(body) {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) => {
                let code = r.status().as_u16();
                last = format!("{url} answered HTTP {code}");
                if !(code == 429 || code >= 500) {
                    return Err(last);
                }
            }
            Err(e) => last = format!("{url}: {e}"),
        }
    }
    Err(format!("{last} ({TRIES} tries)"))
}

fn bearer(t: Option<String>) -> Vec<(&'static str, String)> {
    t.map(|t| vec![("Authorization", format!("Bearer {t}"))])
        .unwrap_or_default()
}

fn webhook(host: &dyn Host, h: &HttpSink, a: &Alert) -> Result<(), String> {
    let headers = bearer(token(host, h)?);
    post(&h.url, &headers, "application/json", &a.json())
}

fn ntfy(host: &dyn Host, h: &HttpSink, a: &Alert) -> Result<(), String> {
    let mut headers = bearer(token(host, h)?);
    headers.push(("Title", a.title()));
    headers.push(("Priority", a.ntfy_priority().to_string()));
    headers.push(("Tags", a.ntfy_tags().to_string()));
    post(&h.url, &headers, "text/plain; charset=utf-8", &a.body())
}

fn program(host: &dyn Host, p: &str, a: &Alert) -> Result<(), String> {
    let env = vec![
        ("HYRAID_EVENT".to_string(), a.event.clone()),
        ("HYRAID_OBJECT".to_string(), a.object.clone()),
        ("HYRAID_SEVERITY".to_string(), a.severity.clone()),
        ("HYRAID_STATE".to_string(), a.state.word().to_string()),
        ("HYRAID_HOST".to_string(), a.host.clone()),
    ];
    let o = host
        .run_input(&[p.to_string()], &a.json(), &env, TIMEOUT)
        .map_err(|e| e.to_string())?;
    match o.status {
        0 => Ok(()),
        n => Err(format!("{p} exited {n}: {}", o.stderr.trim())),
    }
}
