//! Per cluster: the credential material a plan records (copied bytes, a reused exec credential, or one to mint
//! at apply) and, for exec credentials, how fresh a reused one must be in each [`Phase`].

use super::{Inputs, Phase};
use crate::api::ClusterProfile;
use crate::domain::{
    credentials::{
        CredentialProblem, CredentialSecrets, CredentialSource, Resolved, resolve, source_sha256,
    },
    desired::{Material, renewal_of},
    exec::ExecInvocation,
    ownership::WrittenCredential,
    renewal::{Verdict, judge},
    sha256_hex,
};

impl Phase {
    fn margin(self, refresh_before: std::time::Duration) -> jiff::SignedDuration {
        let rb =
            jiff::SignedDuration::try_from(refresh_before).unwrap_or(jiff::SignedDuration::MAX);
        match self {
            Self::Plan => rb.checked_mul(2).unwrap_or(jiff::SignedDuration::MAX),
            Self::Replan => rb,
            Self::Apply => jiff::SignedDuration::ZERO,
        }
    }
}

/// Hash identifying an exec plugin run (command, args, env, cluster info); a change forces a new credential.
pub fn invocation_sha256(inv: &ExecInvocation) -> String {
    let doc = serde_json::json!([inv.command, inv.args, inv.env, inv.exec_info]);
    sha256_hex(doc.to_string().as_bytes())
}

/// A cluster's material, the plugin run that mints it at apply (if it is minted), and what the plan warns about
/// for it without leaving it out ([`Resolved::Kubeconfig`]'s notice).
type MaterialAndRun = (Material, Option<ExecInvocation>, Option<String>);

pub(super) fn material_for(
    inputs: &Inputs<'_>,
    secrets: &CredentialSecrets<'_>,
    profile: &ClusterProfile,
    source: &CredentialSource,
) -> Result<MaterialAndRun, CredentialProblem> {
    let opts = &inputs.spec.credentials;
    if let Some(kubeconfig_sha256) = recorded_check(inputs, secrets, profile, source) {
        return Ok((Material::Recorded { kubeconfig_sha256 }, None, None));
    }
    let inv = match resolve(profile, source, opts, inputs.providers, secrets)? {
        Resolved::Kubeconfig { bytes, notice } => {
            return Ok((
                Material::Bytes {
                    bytes,
                    expires_at: None,
                    config_sha256: None,
                },
                None,
                notice,
            ));
        }
        Resolved::Exec(inv) => inv,
    };
    match reusable(inputs, profile, source, &invocation_sha256(&inv)) {
        Some(w) => Ok((
            Material::Reuse {
                kubeconfig_sha256: w.kubeconfig_sha256.clone(),
                expires_at: w.expires_at.clone(),
            },
            None,
            None,
        )),
        None => Ok((Material::Pending, Some(inv), None)),
    }
}

/// At a plan (never at apply, which checks every kubeconfig it copies): what the bridge writes for a source whose
/// kubeconfig the last apply checked and copied to this cluster's Secret, as the ledger records it
/// ([`WrittenCredential::source_sha256`]), when the source has the same bytes under the same build and policy
/// ([`source_sha256`]): the check would find what it found then, so the kubeconfig is not parsed again. Not for a
/// cluster whose credentials Sveltos renews (the plan judges the renewal on the kubeconfig itself).
fn recorded_check(
    inputs: &Inputs<'_>,
    secrets: &CredentialSecrets<'_>,
    profile: &ClusterProfile,
    source: &CredentialSource,
) -> Option<String> {
    let key = profile.key();
    if inputs.phase == Phase::Apply || renewal_of(inputs.spec, &key).is_some() {
        return None;
    }
    let written = inputs
        .observed
        .owned
        .get(&key)?
        .secret
        .as_ref()?
        .written
        .as_ref()?;
    let recorded = written.source_sha256.as_deref()?;
    (source_sha256(source, &inputs.spec.credentials, secrets)?.as_str() == recorded)
        .then(|| written.kubeconfig_sha256.clone())
}

/// The exec credential in place that may be kept instead of minting one, judged by what the bridge's ledger
/// records it wrote (never by the Secret's annotations alone, which whoever can patch the Secret writes): the
/// Secret still holds it ([`ObservedSecret::verified`](crate::domain::observed::ObservedSecret::verified)), it was
/// minted with these settings (`inv_sha`) for this source, it is not to be minted at this apply, and its recorded
/// expiry is far enough ([`still_fresh`]).
///
/// Whether Sveltos may have rewritten the Secret's data is the *judged* renewal ([`renews`]), not the configured
/// one: where renewal is withheld the bridge writes none, so a renewal annotation on the Secret is not Sveltos' and
/// must not make a swapped kubeconfig pass for the recorded one.
fn reusable<'o>(
    inputs: &Inputs<'o>,
    profile: &ClusterProfile,
    source: &CredentialSource,
    inv_sha: &str,
) -> Option<&'o WrittenCredential> {
    let key = profile.key();
    let s = inputs.observed.owned.get(&key)?.secret.as_ref()?;
    let w = s.verified(renews(inputs, profile, source))?;
    let minting = inputs
        .planned_mints
        .is_some_and(|m| inputs.phase == Phase::Apply && m.contains(&key));
    let fresh = || {
        still_fresh(
            w.expires_at.as_deref(),
            inputs,
            inputs.spec.credentials.refresh_before,
        )
    };
    (s.credential_source.as_deref() == Some(source.to_string().as_str())
        && w.config_sha256.as_deref() == Some(inv_sha)
        && !minting
        && fresh())
    .then_some(w)
}

/// Whether the bridge enables Sveltos' token renewal for this exec credential: configured, and not withheld
/// ([`Verdict::Withheld`]: the renewed kubeconfig would lose the connection; a credential Sveltos will not renew,
/// [`Verdict::NotRenewed`], still has renewal written, so Sveltos may rewrite its data).
fn renews(inputs: &Inputs<'_>, profile: &ClusterProfile, source: &CredentialSource) -> bool {
    renewal_of(inputs.spec, &profile.key())
        .is_some_and(|r| !matches!(judge(r, profile, source, None), Verdict::Withheld(_)))
}

/// Whether a credential expiring at `expires_at` may be reused now (see [`Phase`] for the margin).
fn still_fresh(
    expires_at: Option<&str>,
    inputs: &Inputs<'_>,
    refresh_before: std::time::Duration,
) -> bool {
    let Some(t) = expires_at else {
        return true;
    };
    let Ok(exp) = t.parse::<jiff::Timestamp>() else {
        return false;
    };
    let margin = inputs.phase.margin(refresh_before);
    inputs
        .now
        .checked_add(margin)
        .is_ok_and(|deadline| exp > deadline)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::observed::{BridgedObjects, ObservedSecret};
    use crate::domain::plan::fixture::*;
    use crate::domain::plan::*;
    use std::collections::{BTreeMap, BTreeSet};

    const NOW: i64 = 1_800_000_000;

    fn at_mins(mins: i64) -> String {
        (jiff::Timestamp::from_second(NOW).unwrap() + jiff::SignedDuration::from_mins(mins))
            .to_string()
    }

    /// One profile `a/c1` offering exec provider `tok`, allowed everywhere, planned in phase `Plan`; and the
    /// invocation its plan mints with.
    fn exec_fixture() -> (Fixture, ExecInvocation) {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        f.secrets.clear();
        f.profiles.truncate(1);
        add_provider(&mut f.profiles[0], "tok", serde_json::json!({}));
        let file = br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"get-token"}}]}"#;
        let scope = [(
            "tok".to_string(),
            crate::domain::exec::ExecScope::any_namespace(),
        )];
        f.providers = Some(ProvidersFile::parse(file).unwrap().scoped(&scope.into()));
        let p = f.run();
        assert!(p.desired["a/c1"].entry.credential_pending);
        let inv = p.exec["a/c1"].clone();
        (f, inv)
    }

    /// The Secret as apply left it after minting with `inv` a credential expiring in `mins` minutes (hash `h1`),
    /// its annotations and the ledger's record saying the same.
    fn minted(inv: &ExecInvocation, mins: i64) -> ObservedSecret {
        let written = WrittenCredential {
            kubeconfig_sha256: "h1".into(),
            expires_at: Some(at_mins(mins)),
            config_sha256: Some(invocation_sha256(inv)),
            renewal: false,
            resource_version: None,
            source_sha256: None,
        };
        ObservedSecret {
            id: "a/c1-sveltos-kubeconfig".into(),
            kubeconfig_sha256: Some("h1".into()),
            expires_at: written.expires_at.clone(),
            credential_source: Some("exec:tok".into()),
            written: Some(written),
            ..Default::default()
        }
    }

    fn observe(f: &mut Fixture, secret: ObservedSecret) {
        let bridged = BridgedObjects {
            secret: Some(secret),
            ..Default::default()
        };
        f.observed = Observed::default();
        f.observed.owned.insert("a/c1".into(), Box::new(bridged));
    }

    /// Whether the plan of `f` in `phase` mints `a/c1`'s credential (rather than reuse the one in place).
    fn mints(f: &mut Fixture, phase: Phase) -> bool {
        f.phase = phase;
        f.run().desired["a/c1"].entry.credential_pending
    }

    #[test]
    fn exec_credentials_are_reused_until_refresh_window() {
        let (mut f, inv) = exec_fixture();
        observe(&mut f, minted(&inv, 60));
        let p = f.run();
        let entry = &p.desired["a/c1"].entry;
        assert!(!entry.credential_pending);
        assert_eq!(entry.kubeconfig_sha256.as_deref(), Some("h1"));
        assert_eq!(entry.credential_expires_at, Some(at_mins(60)));
        // Inside refresh_before (default 10 min) of expiry: a new credential is planned.
        observe(&mut f, minted(&inv, 5));
        assert!(mints(&mut f, Phase::Plan));
        // The first plan renews from twice refresh_before ahead, the re-plan before apply from refresh_before:
        // a credential the first plan reused is still reused by a re-plan up to refresh_before later.
        let mut at = |mins: i64, phase: Phase| {
            observe(&mut f, minted(&inv, mins));
            mints(&mut f, phase)
        };
        assert!(
            at(15, Phase::Plan),
            "within 2 x refresh_before: renewed by the first plan"
        );
        assert!(!at(25, Phase::Plan));
        assert!(
            !at(15, Phase::Replan),
            "not yet within refresh_before: the re-plan keeps it"
        );
        assert!(at(9, Phase::Replan));
        // Apply reuses what the plan reused while it is unexpired ...
        assert!(!at(1, Phase::Apply));
        // ... while a cluster the plan said to mint is minted at apply.
        let mints = BTreeSet::from(["a/c1".to_string()]);
        let inputs = Inputs {
            spec: &f.spec,
            profiles: &f.profiles,
            credential_secrets: &f.secrets,
            checked_kubeconfigs: None,
            namespace_labels: &f.ns_labels,
            providers: f.providers.as_ref(),
            observed: &f.observed,
            now: jiff::Timestamp::from_second(NOW).unwrap(),
            phase: Phase::Apply,
            planned_mints: Some(&mints),
            undecodable: &NO_UNDECODABLE,
            cluster_api: &crate::domain::plan::NO_CLUSTER_API,
            pack: false,
        };
        let p = plan(&inputs, &locate_all(&inputs), &BTreeMap::new());
        assert!(p.desired["a/c1"].entry.credential_pending);
    }

    /// Security review M2: what decides the reuse of an exec credential is the ledger's record of what the bridge
    /// wrote, never the annotations whoever can patch the Secret writes.
    #[test]
    fn only_the_credential_the_ledger_recorded_is_reused() {
        let (mut f, inv) = exec_fixture();
        // Swapped data, the expiry annotation set to 2099: minted again, whatever the annotations say.
        let mut swapped = minted(&inv, 60);
        swapped.kubeconfig_sha256 = Some("tenants".into());
        swapped.expires_at = Some("2099-01-01T00:00:00Z".into());
        observe(&mut f, swapped.clone());
        assert!(mints(&mut f, Phase::Plan), "a swapped kubeconfig is reused");
        // The same with the tenant's annotations only (the ledger's record lost): nothing is verified.
        let mut unrecorded = minted(&inv, 60);
        unrecorded.written = None;
        unrecorded.expires_at = Some("2099-01-01T00:00:00Z".into());
        observe(&mut f, unrecorded);
        assert!(mints(&mut f, Phase::Plan), "reused without a record");
        // The data unchanged, the expiry annotation set in the past or to 2099: the recorded expiry decides.
        for forged in ["2000-01-01T00:00:00Z", "2099-01-01T00:00:00Z"] {
            let mut annotated = minted(&inv, 60);
            annotated.expires_at = Some(forged.into());
            observe(&mut f, annotated.clone());
            assert!(!mints(&mut f, Phase::Plan), "{forged}: minted again");
            assert!(!mints(&mut f, Phase::Apply), "{forged}: minted at apply");
            let entry = BridgedObjects {
                secret: Some(annotated.clone()),
                ..Default::default()
            }
            .entry(false);
            assert_eq!(
                entry.credential_expires_at,
                Some(at_mins(60)),
                "{forged}: the refreshed state takes the annotation's expiry"
            );
            annotated.written.as_mut().unwrap().expires_at = Some(at_mins(5));
            observe(&mut f, annotated);
            assert!(mints(&mut f, Phase::Plan), "{forged}: kept past its expiry");
        }
        // The exec settings hash annotation forged to the current settings: the record says otherwise.
        let mut old_settings = minted(&inv, 60);
        old_settings.written.as_mut().unwrap().config_sha256 = Some("older-settings".into());
        observe(&mut f, old_settings);
        assert!(
            mints(&mut f, Phase::Plan),
            "the annotation's settings hash is trusted"
        );
        // The source annotation changed: minted and written again (the rewrite restores it).
        let mut other_source = minted(&inv, 60);
        other_source.credential_source = Some("exec:other".into());
        observe(&mut f, other_source);
        assert!(mints(&mut f, Phase::Plan));
    }

    /// Where renewal is withheld (the connection needs a field a renewal drops), the bridge enables none, so
    /// Sveltos never rewrites the Secret: a renewal annotation there is not Sveltos' and must not hide a swapped
    /// kubeconfig, whereas for a renewable cluster the recorded hash stands for the data.
    #[test]
    fn a_withheld_renewal_does_not_hide_a_swapped_exec_credential() {
        let (mut f, _) = exec_fixture();
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: Some("kube-system".into()),
            sa_name: Some("sveltos".into()),
        });
        for (tls_server_name, withheld) in [(Some("api.internal"), true), (None, false)] {
            let status = f.profiles[0].status.as_mut().unwrap();
            let cluster = status.access_providers[0].cluster.as_mut().unwrap();
            cluster.tls_server_name = tls_server_name.map(Into::into);
            f.observed = Observed::default();
            f.phase = Phase::Plan;
            let p = f.run();
            assert_eq!(
                p.renewal_notes.get("a/c1").map(|n| n.0),
                withheld.then_some(true)
            );
            // Someone who can patch the Secret swaps its data and adds the renewal annotation (the ledger
            // records whether the bridge wrote renewal there: where it was withheld, it did not).
            let mut forged = minted(&p.exec["a/c1"], 60);
            forged.kubeconfig_sha256 = Some("tenants".into());
            forged.renewed_sha256 = Some("forged".into());
            forged.written.as_mut().unwrap().renewal = !withheld;
            observe(&mut f, forged);
            for phase in [Phase::Plan, Phase::Replan, Phase::Apply] {
                assert_eq!(
                    mints(&mut f, phase),
                    withheld,
                    "withheld: {withheld}, {phase:?}: the swapped kubeconfig is kept"
                );
            }
        }
    }

    /// With `token_renewal`, Sveltos rewrites the Secret's data: there the recorded hash stands for the data (the
    /// hash annotation only without a record), and its recorded expiry still decides.
    #[test]
    fn a_renewed_exec_credential_is_judged_by_the_record() {
        let (mut f, inv) = exec_fixture();
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: None,
            sa_name: None,
        });
        let mut renewed = minted(&inv, 60);
        renewed.kubeconfig_sha256 = Some("renewed-by-sveltos".into());
        renewed.renewed_sha256 = Some("forged".into());
        renewed.written.as_mut().unwrap().renewal = true;
        observe(&mut f, renewed.clone());
        let p = f.run();
        assert!(!p.desired["a/c1"].entry.credential_pending);
        assert_eq!(
            p.desired["a/c1"].entry.kubeconfig_sha256.as_deref(),
            Some("h1"),
            "the hash annotation replaced the record"
        );
        renewed.expires_at = Some("2099-01-01T00:00:00Z".into());
        renewed.written.as_mut().unwrap().expires_at = Some(at_mins(5));
        observe(&mut f, renewed.clone());
        assert!(
            mints(&mut f, Phase::Plan),
            "the annotation's expiry decided"
        );
        // Where the ledger records no renewal written (the annotation is someone else's), the data is compared.
        renewed.written.as_mut().unwrap().renewal = false;
        renewed.written.as_mut().unwrap().expires_at = Some(at_mins(60));
        observe(&mut f, renewed.clone());
        assert!(mints(&mut f, Phase::Plan), "a recorded hash hid the data");
        renewed.written.as_mut().unwrap().renewal = true;
        // Without the renewal annotation on the Secret, the data is compared.
        renewed.renewed_sha256 = None;
        renewed.written.as_mut().unwrap().expires_at = Some(at_mins(60));
        observe(&mut f, renewed);
        assert!(mints(&mut f, Phase::Plan));
    }

    /// A kubeconfig with an exec plugin, which the default policy refuses.
    const EXEC_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/true\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";

    /// `f` after its plan for apply was applied, with the ledger's record of `a/c1`'s Secret saying it holds
    /// `recorded` and that the apply checked its source with digest `src` (`None`: the plan's own).
    fn applied_with_record(f: &mut Fixture, recorded: &str, src: Option<&str>) -> String {
        f.phase = Phase::Apply;
        f.observed = Observed::default();
        let applied = f.run();
        let entry = &applied.desired["a/c1"].entry;
        let id = entry.secret.clone().unwrap();
        let checked = applied.checked_sources["a/c1"].clone();
        let mut ledger = crate::domain::ownership::Ledger::default();
        ledger.record_written(
            &id,
            WrittenCredential {
                kubeconfig_sha256: entry.kubeconfig_sha256.clone().unwrap(),
                expires_at: None,
                config_sha256: None,
                renewal: false,
                resource_version: None,
                source_sha256: None,
            },
        );
        applied.record_sources(&mut ledger);
        let mut written = ledger.written(&id).unwrap().clone();
        assert_eq!(written.source_sha256.as_deref(), Some(checked.as_str()));
        written.kubeconfig_sha256 = recorded.into();
        if let Some(src) = src {
            written.source_sha256 = Some(src.into());
        }
        f.observed = crate::domain::plan::fixture::observed_after(&applied, "main");
        let secret = f.observed.owned.get_mut("a/c1").unwrap().secret.as_mut();
        secret.unwrap().written = Some(written);
        checked
    }

    /// What the plan of `f` in `phase` plans for `a/c1`'s kubeconfig (`None`: it is left out, with an issue).
    fn planned(f: &mut Fixture, phase: Phase) -> Option<String> {
        f.phase = phase;
        let p = f.run();
        p.desired
            .get("a/c1")
            .map(|d| d.entry.kubeconfig_sha256.clone().unwrap())
    }

    /// A plan takes what the last apply wrote for a source without parsing it only where the check would find the
    /// same: the same bytes, build and policy, at a plan. Shown with a record the check would not produce
    /// ("recorded"): where it is taken, the kubeconfig was not checked.
    #[test]
    fn a_plan_takes_the_last_applys_check_only_for_the_same_bytes_policy_and_build() {
        let mut f = Fixture::new();
        let real = planned(&mut f, Phase::Apply).unwrap();
        let src = applied_with_record(&mut f, "recorded", None);
        // Keyed by the build and the policy: not the plain hash of the bytes.
        assert_ne!(src, crate::domain::sha256_hex(KUBECONFIG.as_bytes()));
        assert_eq!(planned(&mut f, Phase::Plan).as_deref(), Some("recorded"));
        assert_eq!(planned(&mut f, Phase::Replan).as_deref(), Some("recorded"));
        // Apply checks and writes what it checks, whatever the ledger says.
        assert_eq!(planned(&mut f, Phase::Apply), Some(real.clone()));
        // Another policy: checked again.
        f.spec.credentials.allow_exec_kubeconfigs = true;
        assert_eq!(planned(&mut f, Phase::Plan), Some(real.clone()));
        f.spec.credentials.allow_exec_kubeconfigs = false;
        // A cluster whose renewal is judged on its kubeconfig: checked again.
        f.spec.token_renewal = Some(crate::domain::TokenRenewal {
            interval: "1h".into(),
            token_duration: None,
            sa_namespace: None,
            sa_name: None,
        });
        assert_ne!(planned(&mut f, Phase::Plan).as_deref(), Some("recorded"));
        f.spec.token_renewal = None;
        // A record made by another build (its check may differ): checked again.
        let options = f.spec.credentials.clone();
        let build = crate::domain::credentials::CHECK_BUILD;
        let this =
            crate::domain::credentials::source_sha256_under(build, &options, KUBECONFIG.as_bytes());
        assert_eq!(this, src, "the digest is not the one this build records");
        // Another version, or the same version with other checking code or another parser (`build.rs`).
        let (version, code) = build.split_once(' ').unwrap();
        assert_eq!(code.len(), 64, "{build}");
        for other in [
            format!("0.0.1 {code}"),
            format!("{version} {}", "0".repeat(64)),
        ] {
            let theirs = crate::domain::credentials::source_sha256_under(
                &other,
                &options,
                KUBECONFIG.as_bytes(),
            );
            applied_with_record(&mut f, "recorded", Some(&theirs));
            assert_eq!(planned(&mut f, Phase::Plan), Some(real.clone()), "{other}");
        }
        // A record of another source (or of none): checked again.
        applied_with_record(&mut f, "recorded", Some(&"0".repeat(64)));
        assert_eq!(planned(&mut f, Phase::Plan), Some(real.clone()));
        applied_with_record(&mut f, "recorded", None);
        let record = f.observed.owned.get_mut("a/c1").unwrap().secret.as_mut();
        record.unwrap().written.as_mut().unwrap().source_sha256 = None;
        assert_eq!(planned(&mut f, Phase::Plan), Some(real));
    }

    /// The attack: after an apply, a tenant swaps the source kubeconfig for one the policy refuses, or marks it
    /// unreadable. The record is of other bytes, so the plan checks them and leaves the cluster out, as it would
    /// without a record.
    #[test]
    fn a_source_swapped_after_the_apply_is_checked_again() {
        let mut f = Fixture::new();
        applied_with_record(&mut f, "recorded", None);
        f.secrets[0] = labelled_secret("a", "s1", "c1", None, &[("Config", EXEC_KUBECONFIG)]);
        assert_eq!(planned(&mut f, Phase::Plan), None);
        let p = f.run();
        let issue = p.issues.iter().find(|i| i.key == "a/c1").unwrap();
        assert!(issue.kept, "{issue:?}");
        assert!(issue.detail.contains("exec"), "{}", issue.detail);
        // The bytes recorded, with the mark a Secret that does not decode gets: refused as unreadable.
        f.secrets[0] = labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]);
        f.secrets[0]
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                crate::domain::credentials::UNREADABLE_MARK.into(),
                "too big".into(),
            );
        assert_eq!(planned(&mut f, Phase::Plan), None);
    }

    /// Apply records a source only with what its Secret holds: a record of other contents gets none.
    #[test]
    fn apply_records_a_checked_source_only_with_what_the_secret_holds() {
        let f = Fixture::new();
        let applied = f.run();
        let id = applied.desired["a/c1"].entry.secret.clone().unwrap();
        let mut ledger = crate::domain::ownership::Ledger::default();
        let other = WrittenCredential {
            kubeconfig_sha256: "someone else's".into(),
            expires_at: None,
            config_sha256: None,
            renewal: false,
            resource_version: None,
            source_sha256: None,
        };
        ledger.record_written(&id, other.clone());
        applied.record_sources(&mut ledger);
        assert_eq!(ledger.written(&id), Some(&other));
        // Nothing recorded: nothing to attach it to.
        let mut empty = crate::domain::ownership::Ledger::default();
        applied.record_sources(&mut empty);
        assert_eq!(empty.checked_sources().count(), 0);
        // A cluster whose renewal is judged on its kubeconfig gets no record (a plan checks it in full, so the
        // check ahead must not leave it out).
        let mut renewing = Fixture::new();
        renewing.spec.overrides.insert(
            "a/c1".into(),
            crate::domain::Override {
                token_renewal: Some(crate::domain::TokenRenewal {
                    interval: "1h".into(),
                    token_duration: None,
                    sa_namespace: None,
                    sa_name: None,
                }),
                ..Default::default()
            },
        );
        let sources = renewing.run().checked_sources;
        assert_eq!(sources.keys().collect::<Vec<_>>(), ["b/c1"]);
    }
}
