//! What observation asks of the file's encryptions before a plan: key files, header backups,
//! headers, and which key files open them.

/// What the plan needs to know of the file's encryptions: its key files and header backups
/// (made, kept private, present; which header a backup holds), the headers (`luksDump`), and,
/// for a key the file changes (or one no crypttab line names yet), which of the new and the
/// old key files open the header.
pub fn probe_for(
    host: &dyn crate::host::Host,
    d: &crate::config::Desired,
    obs: &mut crate::observe::Observed,
) {
    let all: Vec<_> = crate::plan::encryption::encrypted_devices(d, obs)
        .into_iter()
        .map(|x| (x.spec, x.kname))
        .collect();
    let secrets: Vec<String> = all
        .iter()
        .flat_map(|(e, _)| {
            (e.key_path().map(str::to_string))
                .into_iter()
                .chain(e.header_backup.clone())
        })
        .collect();
    crate::observe::luks::probe_secret_files(host, &mut obs.boot, &secrets);
    if all.iter().any(|(e, _)| e.tpm2) {
        crate::observe::tpm2::probe(host, &mut obs.boot);
    }
    let backups: Vec<String> = all
        .iter()
        .filter_map(|(e, _)| e.header_backup.clone())
        .collect();
    crate::observe::luks::probe_backups(host, &mut obs.boot, &backups);
    let headers: Vec<String> = all.iter().filter_map(|(_, k)| k.clone()).collect();
    crate::observe::luks::probe_headers(host, &mut obs.luks, &headers);
    let block = obs
        .boot
        .crypttab
        .as_deref()
        .map(crate::observe::luks::crypttab_lines)
        .unwrap_or_default();
    for (e, kname) in &all {
        let Some(kname) = kname else { continue };
        let mut old = block
            .iter()
            .find(|l| l.name == e.name)
            .and_then(|l| l.key.clone());
        if old.as_deref() == Some(e.key_file.as_str()) {
            // A rotation stopped after crypttab named the new key keeps the old in a comment.
            old = (obs.boot.crypttab.as_deref())
                .and_then(|t| crate::plan::crypttab::old_key(t, &e.name))
                .filter(|k| *k != e.key_file);
            if old.is_none() {
                continue;
            }
        }
        // A passphrase is not on the machine to try.
        let keys: Vec<String> = (e.key_path().map(str::to_string))
            .into_iter()
            .chain(old)
            .filter(|k| {
                obs.boot.secret_files.get(k).is_some_and(|f| f.size > 0) || !secrets.contains(k)
            })
            .collect();
        crate::observe::luks::probe_keys(host, &mut obs.luks, kname, &keys);
    }
}
