//! Per cluster: the credential material a plan records (copied bytes, a reused exec credential, or one to mint
//! at apply) and, for exec credentials, how fresh a reused one must be in each [`Phase`].

use super::{Inputs, Phase};
use crate::api::ClusterProfile;
use crate::domain::{
    credentials::{CredentialProblem, CredentialSecrets, CredentialSource, Resolved, resolve},
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
}
