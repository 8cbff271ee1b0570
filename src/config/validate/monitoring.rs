//! Monitoring: the mirrors' scheduled checks and the alerts' sinks.

use super::{Ctx, seg, size_bytes};
use crate::config::desired::MirrorSpec;
use crate::config::monitoring::*;
use crate::config::raw::RawConfig;
use std::collections::BTreeMap;

/// Each mirror's check: its own `check:` over the file's, or none when neither says one.
pub(super) fn checks(c: &mut Ctx, raw: &RawConfig, mirrors: &mut BTreeMap<String, MirrorSpec>) {
    let defaults = raw.check.as_ref();
    if let Some(d) = defaults {
        settings(c, "/check", d);
    }
    for (name, m) in &raw.mirrors {
        let p = format!("/mirrors/{}/check", seg(name));
        let own = match &m.check {
            Some(RawCheck::Switch(s)) if !s.as_bool() => continue,
            Some(RawCheck::Switch(_)) => None,
            Some(RawCheck::Settings(s)) => {
                if s.distribution.is_some() {
                    c.err(
                        &format!("{p}/distribution"),
                        true,
                        "`distribution` is a setting of the whole file, not of one mirror",
                        Some("move it to the `check:` at the top of the file".into()),
                    );
                }
                settings(c, &p, s);
                Some(s)
            }
            None if defaults.is_none() => continue,
            None => None,
        };
        let pick = |f: fn(&RawCheckSettings) -> Option<&String>| {
            own.and_then(f).or_else(|| defaults.and_then(f)).cloned()
        };
        let spec = CheckSpec {
            schedule: pick(|s| s.schedule.as_ref()).unwrap_or_else(|| DEFAULT_SCHEDULE.into()),
            budget_secs: pick(|s| s.budget.as_ref())
                .and_then(|b| parse_duration(&b).ok())
                .unwrap_or(DEFAULT_BUDGET_SECS),
            speed_max_kib: own
                .and_then(|s| s.speed_max.as_ref())
                .or_else(|| defaults.and_then(|s| s.speed_max.as_ref()))
                .and_then(|s| size_bytes(s).ok())
                .map(|b| b.div_ceil(1024)),
            when_degraded: own
                .and_then(|s| s.when_degraded)
                .or_else(|| defaults.and_then(|s| s.when_degraded))
                .unwrap_or_default(),
            overdue_after_secs: pick(|s| s.overdue_after.as_ref())
                .and_then(|b| parse_duration(&b).ok())
                .unwrap_or(DEFAULT_OVERDUE_SECS),
        };
        if let Some(m) = mirrors.get_mut(name) {
            m.check = Some(spec);
        }
    }
}

/// One `check:`'s settings, each checked where it is written.
fn settings(c: &mut Ctx, p: &str, s: &RawCheckSettings) {
    if let Some(sched) = &s.schedule
        && let Err(e) = calendar_syntax(sched)
    {
        c.err(
            &format!("{p}/schedule"),
            false,
            e,
            Some("write it as systemd's OnCalendar does (systemd.time(7)), e.g. `Sun *-*-1..7 01:00:00` or `Sat 03:00`".into()),
        );
    }
    for (key, v, bounds) in [
        ("budget", &s.budget, BUDGET_SECS),
        ("overdue_after", &s.overdue_after, OVERDUE_SECS),
    ] {
        let Some(v) = v else { continue };
        if let Err(e) = bounded_duration(v, key, bounds) {
            c.err(&format!("{p}/{key}"), false, e, None);
        }
    }
    if let Some(sp) = &s.speed_max {
        match size_bytes(sp) {
            Err(e) => c.err(&format!("{p}/speed_max"), false, e, None),
            Ok(b) if b < 1024 * 1024 => c.err(
                &format!("{p}/speed_max"),
                false,
                "a check slower than 1 MiB/s per member would take weeks on a large disk"
                    .to_string(),
                Some("write the most it may read per second, e.g. `50MiB`".into()),
            ),
            // md keeps sync_speed_max as a count of KiB/s in an int: more fails at the
            // check's start.
            Ok(b) if b > 1 << 40 => c.err(
                &format!("{p}/speed_max"),
                false,
                format!("{b} bytes per second is more than md takes (its limit is a count of KiB/s below 2 TiB/s), and more than any disk reads"),
                Some("write the most it may read per second, e.g. `150MiB`".into()),
            ),
            Ok(_) => {}
        }
    }
}

/// What can be told of a calendar expression without systemd: printable, one line, no
/// characters systemd's grammar never uses (the plan has `systemd-analyze calendar` check the
/// rest on the machine).
fn calendar_syntax(s: &str) -> Result<(), String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("the schedule is empty".into());
    }
    if let Some(ch) = t
        .chars()
        .find(|ch| !(ch.is_ascii_alphanumeric() || " *-:.,/~".contains(*ch)))
    {
        return Err(format!(
            "`{s}` has `{ch}`, which systemd's calendar syntax does not use"
        ));
    }
    // Words: a shorthand alone, weekdays first, a time zone last (systemd.time(7)).
    let words: Vec<&str> = t.split_whitespace().collect();
    if let [w] = words.as_slice()
        && CALENDAR_SHORTHANDS.contains(&w.to_ascii_lowercase().as_str())
    {
        return Ok(());
    }
    for (i, w) in words.iter().enumerate() {
        if !w.chars().any(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        let weekdays = i == 0
            && w.split([',', '.', '-']).filter(|d| !d.is_empty()).all(|d| {
                WEEKDAYS.iter().any(|(short, long)| {
                    d.eq_ignore_ascii_case(short) || d.eq_ignore_ascii_case(long)
                })
            });
        let zone = i + 1 == words.len() && i > 0 && (*w == "UTC" || w.contains('/'));
        if !weekdays && !zone {
            return Err(format!(
                "`{w}` in `{s}` is not a weekday (`Sun`, `Mon,Thu`), a shorthand alone (`weekly`, `monthly`) or a time zone at the end (`UTC`)"
            ));
        }
    }
    Ok(())
}

/// `alerts:` resolved; None without one.
pub(super) fn alerts(c: &mut Ctx, raw: &RawConfig) -> Option<AlertsSpec> {
    let a = raw.alerts.as_ref()?;
    let p = "/alerts";
    let mut spec = AlertsSpec {
        reminder_secs: MIN_REMINDER_SECS,
        ..Default::default()
    };
    if let Some(e) = &a.email {
        if e.to.is_empty() {
            c.err(
                &format!("{p}/email/to"),
                false,
                "no address to send to",
                Some("list at least one address, e.g. `to: [admin@example.com]`".into()),
            );
        }
        for (i, addr) in e.to.iter().enumerate() {
            if !mail_address(addr) {
                c.err(
                    &format!("{p}/email/to/{i}"),
                    false,
                    format!("`{addr}` is not a mail address"),
                    Some("write `user@example.com`, or a local user such as `root`".into()),
                );
            }
        }
        if let Some(f) = e.from.as_ref().filter(|f| !mail_address(f)) {
            c.err(
                &format!("{p}/email/from"),
                false,
                format!("`{f}` is not a mail address"),
                None,
            );
        }
        spec.email = Some(EmailSink {
            to: e.to.clone(),
            from: e.from.clone(),
        });
    }
    for (key, sink, slot) in [
        ("webhook", &a.webhook, &mut spec.webhook),
        ("ntfy", &a.ntfy, &mut spec.ntfy),
    ] {
        let Some(h) = sink else { continue };
        let at = format!("{p}/{key}");
        if let Err(why) = http_url(&h.url) {
            c.err(
                &format!("{at}/url"),
                false,
                format!("`{}` is not an http(s) URL: {why}", h.url),
                Some("write the whole URL, e.g. `https://ntfy.sh/my-nas`".into()),
            );
        }
        if h.url.contains('@')
            && h.url
                .split("//")
                .nth(1)
                .is_some_and(|r| r.split('/').next().is_some_and(|host| host.contains('@')))
        {
            c.err(&format!("{at}/url"), false, "the URL carries credentials (`user:secret@host`), which would be written in the file, the plan and hyraid's alert settings", Some("put the secret in a file and name it as `token_file:`".into()));
        }
        // Where the token lasts: an absolute path of a file, not under /tmp or another place
        // emptied at boot, not a file hyraid writes.
        if let Some(why) = h
            .token_file
            .as_deref()
            .filter(|t| !t.contains(char::is_whitespace))
            .and_then(crate::config::encryption::path_problem)
        {
            c.err(
                &format!("{at}/token_file"),
                false,
                why,
                Some("name a file from the root that stays, e.g. `/etc/hyraid/ntfy.token`".into()),
            );
        }
        *slot = Some(HttpSink {
            url: h.url.clone(),
            token_file: h.token_file.clone(),
        });
    }
    if let Some(prog) = &a.program {
        if !prog.starts_with('/') || prog.contains(char::is_whitespace) {
            c.err(&format!("{p}/program"), false, format!("`{prog}` is not an absolute path to a program"), Some("name the program from the root, without arguments (it gets the alert as JSON on its standard input)".into()));
        }
        spec.program = Some(prog.clone());
    }
    if let Some(r) = &a.reminder {
        match parse_duration(r) {
            Err(e) => c.err(&format!("{p}/reminder"), false, e, None),
            Ok(secs) if secs < MIN_REMINDER_SECS => c.err(
                &format!("{p}/reminder"),
                false,
                format!("`{r}` is more often than daily; a problem that stands is said again at most once a day"),
                Some("write `24h` or longer".into()),
            ),
            Ok(secs) => spec.reminder_secs = secs,
        }
    }
    if spec.sink_names().is_empty() {
        c.err(
            p,
            true,
            "`alerts:` names no sink",
            Some("add one of: email, webhook, ntfy, program".into()),
        );
    }
    Some(spec)
}

/// `user@host` or a local user name.
fn mail_address(a: &str) -> bool {
    !a.is_empty()
        && !a.contains(char::is_whitespace)
        && !a.contains(['<', '>', ',', ';', '"'])
        && match a.split_once('@') {
            Some((user, host)) => {
                !user.is_empty()
                    && (host == "localhost"
                        || host.contains('.') && !host.starts_with('.') && !host.ends_with('.'))
            }
            None => a
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch)),
        }
}

/// Whether `url` is one an alert can be posted to: http or https, a host, a port that is one.
fn http_url(url: &str) -> Result<(), String> {
    if url.contains(char::is_whitespace) {
        return Err("it holds a space".into());
    }
    if url
        .split_once("://")
        .is_some_and(|(_, r)| r.is_empty() || r.starts_with(['/', ':']))
    {
        return Err("it names no host".into());
    }
    let u: ureq::http::Uri = url.parse().map_err(|e| format!("{e}"))?;
    match u.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err("it does not start with `https://` or `http://`".into()),
    }
    let Some(a) = u.authority() else {
        return Err("it names no host".into());
    };
    if u.host().is_none_or(str::is_empty) {
        return Err("it names no host".into());
    }
    // The port as written (an IPv6 host's colons are inside its brackets).
    let port = a.as_str().rsplit_once(':').map(|(_, p)| p);
    if let Some(p) = port.filter(|p| !p.contains(']') && !p.is_empty())
        && p.parse::<u16>().ok().filter(|n| *n > 0).is_none()
    {
        return Err(format!("its port `{p}` is not one (1 to 65535)"));
    }
    Ok(())
}
