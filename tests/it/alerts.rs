//! Alerts that arrive: a webhook gets the alert as JSON with its token, ntfy its title,
//! priority and tags, a program the JSON on its input and `HYRAID_*` in its environment, mail
//! goes through sendmail; a sink that fails is tried again when the failure may pass and never
//! stops the others; a problem is sent once, reminded when due, and resolved once; md's events
//! arrive through mdadm's PROGRAM call; `hyraid alert --test` says how each sink went.

use crate::common;
use common::http::listen;
use common::*;
use hyraid::alert::{self, Alert, Problem, State, md_event};
use hyraid::config::monitoring::{
    AlertsSpec, EmailSink, HttpSink, MonitoringSettings, SETTINGS_FORMAT,
};
use hyraid::history::alerts::Ledger;
use hyraid::host::{Host, RealHost};
use hyraid::sim::SimHost;

fn alert(state: State) -> Alert {
    Alert {
        host: "nas".into(),
        state,
        severity: "degraded".into(),
        object: "mirror data0".into(),
        event: "finding".into(),
        message: "the array is degraded".into(),
        fix: "replace the disk".into(),
        time: 1,
    }
}

fn hook(url: &str, token_file: Option<&str>) -> AlertsSpec {
    AlertsSpec {
        webhook: Some(HttpSink {
            url: url.into(),
            token_file: token_file.map(String::from),
        }),
        reminder_secs: 86400,
        ..Default::default()
    }
}

#[test]
fn a_webhook_gets_the_alert_as_json_with_its_token() {
    let l = listen(&[]);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let spec = hook(&l.url, Some(token.to_str().unwrap()));
    let d = alert::sinks::send(&RealHost, &spec, &alert(State::New), &[]);
    assert_eq!(d.len(), 1);
    assert!(d[0].result.is_ok(), "{d:?}");
    let r = &l.requests()[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/hook"));
    assert_eq!(r.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["host"], "nas");
    assert_eq!(v["state"], "new");
    assert_eq!(v["object"], "mirror data0");
    assert_eq!(v["message"], "the array is degraded");
    assert_eq!(v["fix"], "replace the disk");
    // A token file that cannot be read fails that sink, and says which file.
    let spec = hook(&l.url, Some("/nonexistent/token"));
    let d = alert::sinks::send(&RealHost, &spec, &alert(State::New), &[]);
    let e = d[0].result.clone().unwrap_err();
    assert!(
        e.contains("cannot read the token file /nonexistent/token"),
        "{e}"
    );
    assert!(!e.contains("s3cret"));
}

#[test]
fn a_server_error_is_tried_again_and_a_refusal_is_not() {
    let l = listen(&[503, 500]);
    let d = alert::sinks::send(&RealHost, &hook(&l.url, None), &alert(State::New), &[]);
    assert!(d[0].result.is_ok(), "{d:?}");
    assert_eq!(l.requests().len(), 3, "two failures, then the answer");
    let l = listen(&[404]);
    let d = alert::sinks::send(&RealHost, &hook(&l.url, None), &alert(State::New), &[]);
    assert!(
        d[0].result.clone().unwrap_err().contains("HTTP 404"),
        "{d:?}"
    );
    assert_eq!(l.requests().len(), 1, "a 404 is not tried again");
}

#[test]
fn a_sink_that_fails_never_stops_the_others() {
    let l = listen(&[]);
    // Nothing listens on port 9 of loopback (discard is not served here): refused at once.
    let spec = AlertsSpec {
        webhook: Some(HttpSink {
            url: "http://127.0.0.1:9/x".into(),
            token_file: None,
        }),
        ntfy: Some(HttpSink {
            url: l.url.clone(),
            token_file: None,
        }),
        reminder_secs: 86400,
        ..Default::default()
    };
    let d = alert::sinks::send(&RealHost, &spec, &alert(State::New), &[]);
    assert_eq!(d.len(), 2);
    assert!(d[0].result.is_err() && d[0].sink == "webhook", "{d:?}");
    assert!(d[1].result.is_ok() && d[1].sink == "ntfy", "{d:?}");
    // ntfy gets text, with a title, priority and tags.
    let r = &l.requests()[0];
    assert_eq!(
        r.header("title"),
        Some("[hyraid] nas: mirror data0: the array is degraded")
    );
    assert_eq!(r.header("priority"), Some("high"));
    assert_eq!(r.header("tags"), Some("rotating_light"));
    assert!(
        r.body.contains("What to do: replace the disk"),
        "{}",
        r.body
    );
}

#[test]
fn a_program_gets_the_alert_on_its_input_and_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got");
    let prog = dir.path().join("notify");
    std::fs::write(
        &prog,
        format!("#!/bin/sh\n{{ echo \"$HYRAID_EVENT $HYRAID_OBJECT $HYRAID_SEVERITY $HYRAID_STATE $HYRAID_HOST\"; cat; }} > {}\n", got.display()),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&prog)
        .status()
        .unwrap();
    let spec = AlertsSpec {
        program: Some(prog.to_str().unwrap().into()),
        reminder_secs: 86400,
        ..Default::default()
    };
    let d = alert::sinks::send(&RealHost, &spec, &alert(State::Resolved), &[]);
    assert!(d[0].result.is_ok(), "{d:?}");
    let text = std::fs::read_to_string(&got).unwrap();
    let (env, json) = text.split_once('\n').unwrap();
    assert_eq!(env, "finding mirror data0 degraded resolved nas");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["state"], "resolved");
    // A program that fails says its status and what it printed.
    std::fs::write(&prog, "#!/bin/sh\necho no >&2\nexit 3\n").unwrap();
    let d = alert::sinks::send(&RealHost, &spec, &alert(State::New), &[]);
    assert_eq!(
        d[0].result.clone().unwrap_err(),
        format!("{} exited 3: no", prog.display())
    );
}

#[test]
fn mail_goes_through_sendmail_with_its_headers() {
    let e = EmailSink {
        to: vec!["admin@example.com".into(), "root".into()],
        from: None,
    };
    let msg = alert::sinks::mail(&e, &alert(State::New));
    assert!(msg.contains("To: admin@example.com, root\n"), "{msg}");
    assert!(msg.contains("From: hyraid@nas\n"), "{msg}");
    assert!(
        msg.contains("Subject: [hyraid] nas: mirror data0: the array is degraded\n"),
        "{msg}"
    );
    assert!(
        msg.contains("\n\nmirror data0 on nas: the array is degraded\n"),
        "{msg}"
    );
    // From a simulated machine no mail leaves, with a transport or without: the sink says so.
    let (_, h) = example("single-pair");
    let mut w = h.world();
    w.boot.monitoring.sendmail = true;
    let h = SimHost::new(w);
    let spec = AlertsSpec {
        email: Some(e),
        reminder_secs: 86400,
        ..Default::default()
    };
    let d = alert::sinks::send(&h, &spec, &alert(State::New), &[]);
    assert!(d[0].simulated && d[0].result.is_ok(), "{d:?}");
    assert!(
        !h.commands()
            .iter()
            .any(|c| c.iter().any(|w| w.contains("sendmail"))),
        "{:?}",
        h.commands()
    );
}

fn problem(key: &str, message: &str) -> Problem {
    let mut a = alert(State::New);
    a.message = message.into();
    Problem {
        key: key.into(),
        alert: a,
    }
}

#[test]
fn a_problem_is_said_once_reminded_when_due_and_resolved_once() {
    let l = listen(&[]);
    let spec = hook(&l.url, None);
    let mut ledger = Ledger::default();
    let p = [problem("finding:mirror data0:degraded", "degraded")];
    let h = RealHost;
    let day = 86400;
    let sent = alert::notify_with(&h, &spec, &p, 1000, &mut ledger, &[]);
    assert_eq!(sent.len(), 1);
    assert!(alert::notify_with(&h, &spec, &p, 1000 + day - 1, &mut ledger, &[]).is_empty());
    let again = alert::notify_with(&h, &spec, &p, 1000 + day, &mut ledger, &[]);
    assert_eq!(again[0].alert.state, State::Reminder);
    assert!(alert::resolve(&h, &spec, &p, 1000 + day, &mut ledger, "finding:").is_empty());
    let gone = alert::resolve(&h, &spec, &[], 2000 + day, &mut ledger, "finding:");
    assert_eq!(gone[0].alert.state, State::Resolved);
    assert!(ledger.standing.is_empty());
    assert!(alert::resolve(&h, &spec, &[], 3000 + day, &mut ledger, "finding:").is_empty());
    let states: Vec<String> = l
        .requests()
        .iter()
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["state"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(states, ["new", "reminder", "resolved"]);
    // An alert no sink took is not marked sent: it is tried again on the next run.
    let dead = hook("http://127.0.0.1:9/x", None);
    let mut ledger = Ledger::default();
    alert::notify_with(&h, &dead, &p, 1, &mut ledger, &[]);
    assert!(ledger.standing.is_empty());
}

#[test]
fn the_key_of_a_finding_ignores_the_numbers_that_move() {
    let a = alert::finding_key("mirror data0", "info", None, "resync 12.5% in progress");
    let b = alert::finding_key("mirror data0", "info", None, "resync 80.0% in progress");
    assert_eq!(a, b);
    assert_ne!(
        a,
        alert::finding_key("mirror data1", "info", None, "resync 12.5% in progress")
    );
    assert_eq!(
        alert::finding_key(
            "mirror m",
            "degraded",
            None,
            "its last check (completed 0s ago) found 8 sector(s)"
        ),
        alert::finding_key(
            "mirror m",
            "degraded",
            None,
            "its last check (completed 3h 5m ago) found 16 sector(s)"
        )
    );
    assert_eq!(
        alert::finding_key("mirror m", "lint", Some("never-checked"), "x"),
        "finding:mirror m:never-checked"
    );
}

/// A simulated machine whose hyraid settings send alerts to `url`.
fn with_settings(url: &str) -> SimHost {
    let (_, h) = example("single-pair");
    let s = MonitoringSettings {
        format: SETTINGS_FORMAT,
        checks: Default::default(),
        alerts: Some(hook(url, None)),
    };
    h.replace_file(hyraid::observe::monitoring::MONITORING_PATH, &s.render())
        .unwrap();
    h
}

#[test]
fn mds_events_arrive_once_each_and_progress_is_only_logged() {
    let l = listen(&[]);
    let h = with_settings(&l.url);
    let spec = hook(&l.url, None);
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(md_event::is_md_event(&args(&[
        "Fail",
        "/dev/md/data0",
        "/dev/sdb1"
    ])));
    assert!(!md_event::is_md_event(&args(&["plan", "/dev/md/data0"])));
    // A rebuild's progress at whatever step `mdadm --monitor --increment` sets.
    for e in [
        "Rebuild05",
        "Rebuild10",
        "Rebuild20",
        "Rebuild33",
        "Rebuild95",
    ] {
        assert!(md_event::is_md_event(&args(&[e, "/dev/md0"])), "{e}");
    }
    for e in ["Rebuild", "Rebuild5x", "Rebuild1000", "Rebuilt20"] {
        assert!(!md_event::is_md_event(&args(&[e, "/dev/md0"])), "{e}");
    }
    assert!(!md_event::is_md_event(&args(&["Fail", "data0"])));
    let fail = args(&["Fail", "/dev/md/data0", "/dev/sdb1"]);
    let sent = md_event::handle(&h, &spec, &fail, 100).unwrap();
    assert_eq!(sent.len(), 1);
    assert!(
        md_event::handle(&h, &spec, &fail, 200).unwrap().is_empty(),
        "the same failure within a day"
    );
    for progress in ["Rebuild20", "Rebuild10", "Rebuild05"] {
        assert!(
            md_event::handle(&h, &spec, &args(&[progress, "/dev/md/data0"]), 300)
                .unwrap()
                .is_empty(),
            "{progress}: logged, not sent"
        );
    }
    let t = md_event::handle(&h, &spec, &args(&["TestMessage", "/dev/md/data0"]), 400).unwrap();
    assert_eq!(t.len(), 1);
    let a = &sent[0].alert;
    assert_eq!(
        (a.event.as_str(), a.object.as_str()),
        ("Fail", "mirror data0")
    );
    assert!(
        a.message.contains("md failed /dev/sdb1 of /dev/md/data0"),
        "{a:?}"
    );
    assert_eq!(a.state, State::Event);
    assert_eq!(t[0].alert.event, "TestMessage");
    // The machine is simulated: each sink said what it would send, and nothing left it.
    assert!(sent[0].deliveries.iter().all(|d| d.simulated), "{sent:?}");
    assert!(
        alert::report(&sent).starts_with("simulated, not sent: event Fail to webhook: [hyraid] "),
        "{}",
        alert::report(&sent)
    );
    assert!(
        l.requests().is_empty(),
        "nothing leaves a simulated machine"
    );
    // Re-added and rebuilt, then failed again within the reminder: the second Fail is news.
    let finished = args(&["RebuildFinished", "/dev/md/data0"]);
    assert_eq!(
        md_event::handle(&h, &spec, &finished, 500).unwrap().len(),
        1
    );
    let again = md_event::handle(&h, &spec, &fail, 600).unwrap();
    assert_eq!(again.len(), 1, "a Fail after the rebuild ended is sent");
    assert!(
        md_event::handle(&h, &spec, &fail, 700).unwrap().is_empty(),
        "and once per reminder again"
    );
    // Another array's rebuild leaves this one's failure standing.
    let other = args(&["RebuildFinished", "/dev/md/data1"]);
    md_event::handle(&h, &spec, &other, 800).unwrap();
    assert!(md_event::handle(&h, &spec, &fail, 900).unwrap().is_empty());
}

#[test]
fn alert_test_says_how_each_sink_went() {
    let l = listen(&[]);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("m.json");
    let h = with_settings(&l.url);
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let o = hyraid(&["alert", "--test", "--sim", snap.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // Nothing leaves a simulated machine, and it says so (a real one's sinks are tried by the
    // tests above, and by VM 38 and 09).
    assert_eq!(
        text(&o).0,
        "webhook: simulated, not sent (the machine is simulated: nothing leaves it)\n"
    );
    assert!(l.requests().is_empty(), "{:?}", l.requests().len());
}

/// The drift unit's run (`status FILE --alert`): a failed member is said once with its fix, not
/// again on the next run, and once more as resolved when the mirror is whole again.
#[test]
fn the_drift_units_findings_are_said_once_and_resolved() {
    let l = listen(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hyraid.yaml");
    let yaml = std::fs::read_to_string("examples/single-pair.yaml").unwrap()
        + &format!("alerts:\n  webhook: {{ url: \"{}\" }}\n", l.url);
    std::fs::write(&file, &yaml).unwrap();
    let d = hyraid::config::load_str("hyraid.yaml", &yaml).unwrap();
    let (_, h) = example("single-pair");
    apply(&h, &d, hyraid::plan::Policy::default()).unwrap();
    h.finish_syncs();
    let t = hyraid::check::target(&h, None, "md-home").unwrap();
    let opts = hyraid::check::Options::of(None, "manual");
    hyraid::check::check(&h, &t, &opts, &|| false, &mut Vec::new()).unwrap();
    let hdd = "/dev/disk/by-id/ata-ST500DM009-2F110A_ZA4000001";
    assert_eq!(
        run(&h, &["mdadm", "/dev/md/md-home", "--fail", hdd]).status,
        0
    );
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let f = file.to_str().unwrap();
    let status = || {
        hyraid(&[
            "status",
            f,
            "--sim",
            snap.to_str().unwrap(),
            "--alert",
            "--sim-write",
        ])
    };
    // What each run said it would send (the machine is simulated: nothing leaves it), as
    // (state, object) of the lines `simulated, not sent: STATE EVENT to SINK: [hyraid] HOST:
    // OBJECT: MESSAGE`.
    let said = |o: &std::process::Output| -> Vec<(String, String)> {
        text(o)
            .1
            .lines()
            .filter_map(|l| l.strip_prefix("simulated, not sent: "))
            .map(|l| {
                let state = l.split(' ').next().unwrap().to_string();
                let title = l.split_once(": [hyraid] ").unwrap().1;
                let object = title.split(": ").nth(1).unwrap().to_string();
                (state, object)
            })
            .collect()
    };
    let o = status();
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let first = said(&o);
    assert!(
        first.contains(&("new".to_string(), "mirror md-home".to_string())),
        "{first:?} {:?}",
        text(&o)
    );
    // One alert per object (the failed member, the degraded array and the plan's refusal of the
    // mirror are one), and no drift while apply refuses the change.
    let mut objects: Vec<&str> = first.iter().map(|(_, o)| o.as_str()).collect();
    let n = objects.len();
    objects.sort();
    objects.dedup();
    assert_eq!(objects.len(), n, "one alert per object: {first:#?}");
    assert!(
        !text(&o).1.contains("new drift to"),
        "no drift alert while apply refuses: {:?}",
        text(&o)
    );
    let o = status();
    assert_eq!(o.status.code(), Some(2));
    assert!(said(&o).is_empty(), "nothing is said twice: {:?}", text(&o));
    // The member is put back and rebuilt: what was said is resolved, once.
    let h = SimHost::from_json(&std::fs::read_to_string(&snap).unwrap()).unwrap();
    apply(&h, &d, re_add("hdd")).unwrap();
    h.finish_syncs();
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let o = status();
    let after = said(&o);
    assert!(!after.is_empty(), "{:?}", text(&o));
    assert!(after.iter().all(|(s, _)| s == "resolved"), "{after:?}");
    let o2 = status();
    assert!(said(&o2).is_empty(), "resolved once: {:?}", text(&o2));
    assert!(
        l.requests().is_empty(),
        "nothing leaves a simulated machine"
    );
}

/// md's monitor with `--increment 10` runs `hyraid Rebuild10 /dev/md0`: the program takes it as
/// md's event (exit 0), never as a command line it cannot parse.
#[test]
fn a_rebuild_step_of_any_increment_reaches_the_program() {
    for e in ["Rebuild10", "Rebuild05"] {
        let o = hyraid(&[e, "/dev/md0"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{e}: {err}");
        assert!(
            err.starts_with(&format!("hyraid: md event {e} /dev/md0")),
            "{e}: {err}"
        );
        assert!(!err.contains("Usage"), "{e}: {err}");
    }
}

/// `status --alert` on a machine where no alerts are installed sends nothing and says so. With
/// `alerts:` in the file not yet applied, an error (exit 1: the drift unit fails where
/// `systemctl --failed` shows it) whose fix is to apply; with no `alerts:` anywhere (a fleet
/// alerting from the textfile) information, the exit as the health says. Without --alert the
/// same machine says nothing of alerts.
#[test]
fn status_alert_with_nowhere_to_send_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (d, h) = example("single-pair");
    apply(&h, &d, hyraid::plan::Policy::default()).unwrap();
    h.finish_syncs();
    let snap = dir.path().join("m.json");
    std::fs::write(&snap, serde_json::to_string(&h.world()).unwrap()).unwrap();
    let with_alerts = dir.path().join("hyraid.yaml");
    std::fs::write(
        &with_alerts,
        std::fs::read_to_string("examples/single-pair.yaml").unwrap()
            + "alerts:\n  webhook: { url: \"http://127.0.0.1:9/hook\" }\n",
    )
    .unwrap();
    let sim = ["--sim", snap.to_str().unwrap()];
    for (file, code, fix) in [
        (
            "examples/single-pair.yaml",
            0,
            "give the file an `alerts:` section",
        ),
        (
            with_alerts.to_str().unwrap(),
            1,
            "run `hyraid apply` with the file",
        ),
    ] {
        let o = hyraid(&[&["status", file, "--alert"][..], &sim[..]].concat());
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{file}: {out}{err}");
        assert!(
            out.contains("no alert sink is configured on this machine")
                && out.contains("nothing was sent")
                && out.contains(fix),
            "{file}: {out}"
        );
        let o = hyraid(&[&["status", file][..], &sim[..]].concat());
        assert_eq!(o.status.code(), Some(0), "{file}: {:?}", text(&o));
        assert!(!text(&o).0.contains("alert sink"), "{file}");
    }
}

/// A sink that cannot deliver on this machine is refused by the plan, with what to do, as mail
/// without sendmail is: a token file or a program that is not there.
#[test]
fn a_sink_that_cannot_deliver_here_is_refused_by_the_plan() {
    let (mut d, h) = example("microserver-gen8");
    d.alerts = Some(AlertsSpec {
        email: Some(EmailSink {
            to: vec!["root".into()],
            from: None,
        }),
        ntfy: Some(HttpSink {
            url: "https://ntfy.sh/nas".into(),
            token_file: Some("/etc/hyraid/ntfy.token".into()),
        }),
        program: Some("/usr/local/bin/page-me".into()),
        reminder_secs: 86400,
        ..Default::default()
    });
    let p = plan_for(&h, &d, hyraid::plan::Policy::default());
    let said: Vec<String> = p
        .refused
        .iter()
        .filter(|r| r.object == "alerts")
        .map(|r| format!("{} ({})", r.reason, r.fix))
        .collect();
    for words in [
        "this machine has none (/usr/sbin/sendmail)",
        "`alerts.ntfy.token_file` names /etc/hyraid/ntfy.token, which is not a file on this machine: every alert through ntfy would fail (write the token into /etc/hyraid/ntfy.token",
        "`alerts.program` names /usr/local/bin/page-me, which is not a program that can be run on this machine: every alert through program would fail (install the program at /usr/local/bin/page-me",
    ] {
        assert!(said.iter().any(|s| s.contains(words)), "{words}: {said:#?}");
    }
    // Once they are there, nothing of the alerts is refused.
    let mut w = h.world();
    w.boot.monitoring.sendmail = true;
    for f in ["/etc/hyraid/ntfy.token", "/usr/local/bin/page-me"] {
        w.boot.monitoring.alert_files.insert(f.into(), true);
    }
    let p = plan_for(&SimHost::new(w), &d, hyraid::plan::Policy::default());
    assert!(
        !p.refused.iter().any(|r| r.object == "alerts"),
        "{:?}",
        p.refused
    );
}
