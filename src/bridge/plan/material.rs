//! Per cluster: the credential material a plan records (copied bytes, a reused exec credential, or one to mint
//! at apply) and, for exec credentials, how fresh a reused one must be in each [`Phase`].

use super::{Inputs, Phase};
use crate::api::ClusterProfile;
use crate::bridge::{
    credentials::{CredentialProblem, CredentialSecrets, CredentialSource, Resolved, resolve},
    desired::{Material, renewal_of},
    exec::ExecInvocation,
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

type MaterialAndRun = (Material, Option<ExecInvocation>);

pub(super) fn material_for(
    inputs: &Inputs<'_>,
    secrets: &CredentialSecrets<'_>,
    profile: &ClusterProfile,
    source: &CredentialSource,
) -> Result<MaterialAndRun, CredentialProblem> {
    let opts = &inputs.spec.credentials;
    let inv = match resolve(profile, source, opts, inputs.providers, secrets)? {
        Resolved::Kubeconfig(bytes) => {
            return Ok((
                Material::Bytes {
                    bytes,
                    expires_at: None,
                    config_sha256: None,
                },
                None,
            ));
        }
        Resolved::Exec(inv) => inv,
    };
    let inv_sha = invocation_sha256(&inv);
    let existing = inputs
        .observed
        .owned
        .get(&profile.key())
        .and_then(|o| o.secret.as_ref());
    if let Some(s) = existing
        && s.credential_source.as_deref() == Some(source.to_string().as_str())
        && s.credential_config_sha256.as_deref() == Some(inv_sha.as_str())
        && let Some(sha) = s.sha(renewal_of(inputs.spec, &profile.key()).is_some())
        && !inputs
            .planned_mints
            .is_some_and(|m| inputs.phase == Phase::Apply && m.contains(&profile.key()))
        && still_fresh(s.expires_at.as_deref(), inputs, opts.refresh_before)
    {
        return Ok((
            Material::Reuse {
                kubeconfig_sha256: sha.clone(),
                expires_at: s.expires_at.clone(),
            },
            None,
        ));
    }
    Ok((Material::Pending, Some(inv)))
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
    use crate::bridge::plan::fixture::*;
    use crate::bridge::plan::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn exec_credentials_are_reused_until_refresh_window() {
        let mut f = Fixture::new();
        f.phase = Phase::Plan;
        f.secrets.clear();
        f.profiles.truncate(1);
        add_provider(&mut f.profiles[0], "tok", serde_json::json!({}));
        f.providers = Some(
            ProvidersFile::parse(br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"get-token"}}]}"#)
                .unwrap()
        .scoped(
            &[(
                "tok".to_string(),
                crate::bridge::exec::ExecScope::any_namespace(),
            )]
            .into(),
        ),
        );
        let p = f.run();
        assert!(p.desired["a/c1"].entry.credential_pending);
        let inv = p.exec["a/c1"].clone();
        // Simulate apply having minted a credential that expires in 1 h.
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let mut observed = Observed::default();
        let mut bridged = crate::bridge::observed::BridgedObjects {
            secret: Some(crate::bridge::observed::ObservedSecret {
                uid: None,
                id: "a/c1-sveltos-kubeconfig".into(),
                kubeconfig_sha256: Some("h1".into()),
                renewed_sha256: None,
                expires_at: Some((now + jiff::SignedDuration::from_hours(1)).to_string()),
                credential_source: Some("exec:tok".into()),
                credential_config_sha256: Some(invocation_sha256(&inv)),
            }),
            ..Default::default()
        };
        observed.owned.insert("a/c1".into(), bridged.clone());
        f.observed = observed.clone();
        let p = f.run();
        assert!(!p.desired["a/c1"].entry.credential_pending);
        assert_eq!(
            p.desired["a/c1"].entry.kubeconfig_sha256.as_deref(),
            Some("h1")
        );
        // Inside refresh_before (default 10 min) of expiry: a new credential is planned.
        bridged.secret.as_mut().unwrap().expires_at =
            Some((now + jiff::SignedDuration::from_mins(5)).to_string());
        f.observed.owned.insert("a/c1".into(), bridged);
        assert!(f.run().desired["a/c1"].entry.credential_pending);
        // The first plan renews from twice refresh_before ahead, the re-plan before apply from refresh_before:
        // a credential the first plan reused is still reused by a re-plan up to refresh_before later.
        let mut at = |mins: i64, phase: Phase| {
            f.observed
                .owned
                .get_mut("a/c1")
                .unwrap()
                .secret
                .as_mut()
                .unwrap()
                .expires_at = Some((now + jiff::SignedDuration::from_mins(mins)).to_string());
            f.phase = phase;
            f.run().desired["a/c1"].entry.credential_pending
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
            now,
            phase: Phase::Apply,
            planned_mints: Some(&mints),
            undecodable: &NO_UNDECODABLE,
        };
        let p = plan(&inputs, &locate_all(&inputs), &BTreeMap::new());
        assert!(p.desired["a/c1"].entry.credential_pending);
    }
}
