//! Planning: which profiles are bridged, with which credential, what the result looks like in state, and
//! which writes and deletes apply has to make. Pure: the caller supplies everything read from the cluster.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;

use super::{
    BridgeSpec,
    credentials::{
        CredentialSource, Lookup, SecretIndex, check_kubeconfig, kubeconfig_in_secret, locate,
    },
    desired::{ClusterEntry, DesiredCluster, Material, desired, secret_name},
    exec::{ExecInvocation, ProvidersFile, invocation},
    observed::World,
    selection_miss, sha256_hex,
};
use crate::api::{ClusterProfile, SveltosCluster, keys};

/// Severity of a [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Stops plan/apply.
    Error,
    /// Reported, does not stop.
    Warning,
}

/// A step of the attribute path a problem points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An attribute or block name.
    Attr(&'static str),
    /// A map key.
    Key(String),
}

/// A problem found while planning, with the attribute it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// Attribute path.
    pub path: Vec<Step>,
    /// One line.
    pub summary: String,
    /// What, which object, how to fix.
    pub detail: String,
}

impl Problem {
    fn error(path: Vec<Step>, summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            path,
            summary: summary.into(),
            detail: detail.into(),
        }
    }

    fn warning(path: Vec<Step>, summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            path,
            summary: summary.into(),
            detail: detail.into(),
        }
    }
}

/// What the cluster holds, as read by the caller.
pub struct Inputs<'a> {
    /// The bridge's configuration.
    pub spec: &'a BridgeSpec,
    /// ClusterProfiles in scope.
    pub profiles: &'a [ClusterProfile],
    /// Secrets carrying the credential label (with data).
    pub credential_secrets: &'a [Secret],
    /// Labels of every namespace (needed with a consumer filter).
    pub namespace_labels: &'a BTreeMap<String, BTreeMap<String, String>>,
    /// The parsed providers file, if configured.
    pub providers: Option<&'a ProvidersFile>,
    /// What exists.
    pub world: &'a World,
    /// Now.
    pub now: jiff::Timestamp,
}

/// A located credential per selected profile (first planning phase).
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// `(profile index in Inputs::profiles, lookup)` for every selected, non-skipped profile.
    pub lookups: Vec<(usize, Lookup)>,
    /// Profiles not selected, by key, with the reason.
    pub unselected: BTreeMap<String, String>,
}

impl Located {
    /// Secrets named by `kubeconfig-secretreader` providers, which the caller must read (`namespace/name`).
    pub fn secrets_to_read(&self) -> BTreeSet<(String, String)> {
        self.lookups
            .iter()
            .filter_map(|(_, l)| match l {
                Lookup::Found(CredentialSource::SecretReader {
                    namespace, name, ..
                }) => Some((namespace.clone(), name.clone())),
                _ => None,
            })
            .collect()
    }
}

/// The objects a plan may create: for every selected profile, its SveltosCluster and Secret (`namespace`,
/// `name`) unless this bridge already owns them. Only these can collide with objects someone else made, so only
/// these need checking; a plan that creates nothing checks nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreationTargets {
    /// SveltosClusters not owned yet.
    pub clusters: BTreeSet<(String, String)>,
    /// Secrets not owned yet.
    pub secrets: BTreeSet<(String, String)>,
}

impl CreationTargets {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty() && self.secrets.is_empty()
    }

    /// Number of objects to check.
    pub fn len(&self) -> usize {
        self.clusters.len() + self.secrets.len()
    }

    /// The namespaces involved.
    pub fn namespaces(&self) -> BTreeSet<String> {
        self.clusters
            .iter()
            .chain(&self.secrets)
            .map(|(ns, _)| ns.clone())
            .collect()
    }
}

impl Located {
    /// What a plan over these lookups may create that `world` does not show as ours.
    pub fn creation_targets(&self, profiles: &[ClusterProfile], world: &World) -> CreationTargets {
        let mut out = CreationTargets::default();
        for (i, _) in &self.lookups {
            let p = &profiles[*i];
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let owned = world.owned.get(&p.key());
            if owned.is_none_or(|o| o.sveltos_cluster.is_none()) {
                out.clusters.insert((ns.clone(), name.clone()));
            }
            if owned.is_none_or(|o| o.secret.is_none()) {
                out.secrets.insert((ns, secret_name(&name)));
            }
        }
        out
    }
}

/// First phase: select profiles and locate their credentials.
pub fn locate_all(inputs: &Inputs<'_>) -> Located {
    let spec = inputs.spec;
    let index = SecretIndex::new(
        inputs.credential_secrets,
        &spec.credentials,
        inputs.namespace_labels,
    );
    let mut out = Located::default();
    for (i, p) in inputs.profiles.iter().enumerate() {
        let key = p.key();
        if let Some(reason) = selection_miss(&spec.selection, p) {
            out.unselected.insert(key, reason);
            continue;
        }
        if spec.overrides.get(&key).is_some_and(|o| o.skip) {
            out.unselected.insert(key, "skipped by overrides".into());
            continue;
        }
        out.lookups
            .push((i, locate(p, &spec.credentials, inputs.providers, &index)));
    }
    out
}

/// The plan: the state entries apply will produce, the objects to write, and what it found wrong.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Clusters to bridge, by key.
    pub desired: BTreeMap<String, DesiredCluster>,
    /// Clusters kept as they are (credentials temporarily unavailable), by key.
    pub kept: BTreeMap<String, ClusterEntry>,
    /// Exec plugin runs needed at apply, by key (for credentials that are pending).
    pub exec: BTreeMap<String, ExecInvocation>,
    /// Errors and warnings.
    pub problems: Vec<Problem>,
}

impl Plan {
    /// The planned `clusters` attribute.
    pub fn entries(&self) -> BTreeMap<String, ClusterEntry> {
        let mut m: BTreeMap<String, ClusterEntry> = self
            .desired
            .iter()
            .map(|(k, d)| (k.clone(), d.entry.clone()))
            .collect();
        m.extend(self.kept.clone());
        m
    }

    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

fn cred_path() -> Vec<Step> {
    vec![Step::Attr("credentials")]
}

/// Hash identifying an exec plugin run (command, args, env, cluster info); a change forces a new credential.
pub fn invocation_sha256(inv: &ExecInvocation) -> String {
    let doc = serde_json::json!([inv.command, inv.args, inv.env, inv.exec_info]);
    sha256_hex(doc.to_string().as_bytes())
}

/// Second phase: given the Secrets read for `kubeconfig-secretreader` providers, build the plan.
pub fn plan(
    inputs: &Inputs<'_>,
    located: &Located,
    fetched: &BTreeMap<(String, String), Option<Secret>>,
) -> Plan {
    let by_id: SecretsById<'_> = inputs
        .credential_secrets
        .iter()
        .map(|s| {
            let m = &s.metadata;
            (
                (
                    m.namespace.as_deref().unwrap_or_default(),
                    m.name.as_deref().unwrap_or_default(),
                ),
                s,
            )
        })
        .collect();
    let spec = inputs.spec;
    let mut plan = Plan::default();
    for (k, _) in spec.overrides.iter() {
        if !k.contains('/') {
            plan.problems.push(Problem::error(
                vec![Step::Attr("overrides"), Step::Key(k.clone())],
                "Invalid override key",
                format!("overrides key {k:?} must be \"namespace/name\" of a ClusterProfile."),
            ));
        } else if !inputs.profiles.iter().any(|p| p.key() == *k) {
            plan.problems.push(Problem::warning(
                vec![Step::Attr("overrides"), Step::Key(k.clone())],
                "Override for an unknown ClusterProfile",
                format!("No ClusterProfile {k} exists; this override has no effect."),
            ));
        }
    }
    for (i, lookup) in &located.lookups {
        let profile = &inputs.profiles[*i];
        let key = profile.key();
        let material = match lookup {
            Lookup::Found(source) => {
                material_for(inputs, &by_id, profile, source, fetched).map(|m| (source, m))
            }
            Lookup::Missing(reason) => Err(reason.clone()),
            Lookup::Ambiguous(names) => {
                plan.problems.push(Problem::error(
                    vec![Step::Attr("credentials"), Step::Attr("secret_label")],
                    format!("Two or more kubeconfig Secrets for ClusterProfile {key}"),
                    format!(
                        "Secrets {} all carry {}={}; keep exactly one (remove the label from the others, or use \
                         credentials.consumer to restrict which namespaces count).",
                        names.join(" and "),
                        spec.credentials.secret_label,
                        profile.metadata.name.as_deref().unwrap_or_default()
                    ),
                ));
                continue;
            }
        };
        match material {
            Ok((source, (material, inv))) => {
                let d = desired(spec, profile, source, &material);
                if material == Material::Pending
                    && let Some(inv) = inv
                {
                    plan.exec.insert(key.clone(), inv);
                }
                plan.desired.insert(key, d);
            }
            Err(reason) => {
                if let Some(existing) = inputs.world.owned.get(&key) {
                    plan.kept.insert(key.clone(), existing.entry());
                    plan.problems.push(Problem::warning(
                        cred_path(),
                        format!("No usable credentials for ClusterProfile {key}; keeping its current registration"),
                        format!("{reason}. The SveltosCluster and Secret already bridged are left as they are."),
                    ));
                } else if spec.require_credentials {
                    plan.problems.push(Problem::error(
                        cred_path(),
                        format!("No usable credentials for ClusterProfile {key}"),
                        format!("{reason}. Provide a kubeconfig, or set require_credentials = false to skip it."),
                    ));
                } else {
                    plan.problems.push(Problem::warning(
                        cred_path(),
                        format!("ClusterProfile {key} skipped: no usable credentials"),
                        format!("{reason}."),
                    ));
                }
            }
        }
    }
    check_collisions(inputs, &mut plan);
    plan
}

type MaterialAndRun = (Material, Option<ExecInvocation>);

/// The credential Secrets by `(namespace, name)`, built once per plan (a lookup per profile stays O(log N)).
type SecretsById<'a> = BTreeMap<(&'a str, &'a str), &'a Secret>;

fn material_for(
    inputs: &Inputs<'_>,
    by_id: &SecretsById<'_>,
    profile: &ClusterProfile,
    source: &CredentialSource,
    fetched: &BTreeMap<(String, String), Option<Secret>>,
) -> Result<MaterialAndRun, String> {
    let opts = &inputs.spec.credentials;
    let from_secret = |secret: &Secret, keys: &[String]| -> Result<MaterialAndRun, String> {
        let (_, bytes) = kubeconfig_in_secret(secret, keys)?;
        check_kubeconfig(bytes).map_err(|e| {
            format!(
                "Secret {}/{}: {e}",
                secret.metadata.namespace.as_deref().unwrap_or_default(),
                secret.metadata.name.as_deref().unwrap_or_default()
            )
        })?;
        Ok((
            Material::Bytes {
                bytes: bytes.to_vec(),
                expires_at: None,
                config_sha256: None,
            },
            None,
        ))
    };
    match source {
        CredentialSource::LabelledSecret {
            namespace,
            name,
            key,
        } => {
            let secret = by_id
                .get(&(namespace.as_str(), name.as_str()))
                .ok_or_else(|| format!("Secret {namespace}/{name} vanished"))?;
            from_secret(secret, std::slice::from_ref(key))
        }
        CredentialSource::SecretReader {
            namespace,
            name,
            key,
        } => {
            match fetched
                .get(&(namespace.clone(), name.clone()))
                .and_then(Option::as_ref)
            {
                None => Err(format!(
                    "Secret {namespace}/{name} named by access provider {} does not exist",
                    keys::SECRET_READER_PROVIDER
                )),
                Some(secret) => match key {
                    Some(k) => from_secret(secret, std::slice::from_ref(k)),
                    None => from_secret(secret, &opts.kubeconfig_keys),
                },
            }
        }
        CredentialSource::Exec { provider } => {
            let entry = inputs
                .providers
                .and_then(|f| f.get(provider))
                .ok_or_else(|| format!("exec provider {provider} is not in the providers file"))?;
            let access = super::credentials::access_providers(profile)
                .into_iter()
                .find(|a| a.name == *provider)
                .ok_or_else(|| format!("access provider {provider} vanished"))?;
            let inv = invocation(entry, access).map_err(|e| e.to_string())?;
            let inv_sha = invocation_sha256(&inv);
            let existing = inputs
                .world
                .owned
                .get(&profile.key())
                .and_then(|o| o.secret.as_ref());
            if let Some(s) = existing
                && s.credential_source.as_deref() == Some(source.to_string().as_str())
                && s.credential_config_sha256.as_deref() == Some(inv_sha.as_str())
                && let Some(sha) = &s.kubeconfig_sha256
            {
                let fresh = match &s.expires_at {
                    None => true,
                    Some(t) => t.parse::<jiff::Timestamp>().is_ok_and(|exp| {
                        let margin = jiff::SignedDuration::try_from(opts.refresh_before)
                            .unwrap_or(jiff::SignedDuration::MAX);
                        inputs
                            .now
                            .checked_add(margin)
                            .is_ok_and(|deadline| exp > deadline)
                    }),
                };
                if fresh {
                    return Ok((
                        Material::Reuse {
                            kubeconfig_sha256: sha.clone(),
                            expires_at: s.expires_at.clone(),
                        },
                        None,
                    ));
                }
            }
            Ok((Material::Pending, Some(inv)))
        }
    }
}

fn check_collisions(inputs: &Inputs<'_>, plan: &mut Plan) {
    let spec = inputs.spec;
    if spec.adopt {
        return;
    }
    for (key, d) in &plan.desired {
        let sc_id = key.clone();
        let secret_id = d.entry.secret.clone().unwrap_or_default();
        for (kind, id, foreign) in [
            ("SveltosCluster", &sc_id, &inputs.world.foreign_clusters),
            ("Secret", &secret_id, &inputs.world.foreign_secrets),
        ] {
            if let Some(owner) = foreign.get(id) {
                let who = match owner {
                    Some(o) => format!("is managed by bridge {o:?}"),
                    None => "was not created by this provider".to_string(),
                };
                plan.problems.push(Problem::error(
                    vec![Step::Attr("adopt")],
                    format!("{kind} {id} already exists and is not owned by bridge {:?}", spec.name),
                    format!(
                        "{kind} {id} {who}. Nothing was written. Set adopt = true to take it over, or exclude \
                         ClusterProfile {key} with overrides[\"{key}\"].skip = true."
                    ),
                ));
            }
        }
    }
}

/// A write apply has to make for one cluster.
#[derive(Debug, Clone)]
pub struct Write {
    /// Profile key.
    pub key: String,
    /// Secret to apply first (`None`: keep it, or mint at apply when the key is in [`Plan::exec`]).
    pub secret: Option<Secret>,
    /// SveltosCluster to apply after the Secret (`None`: up to date).
    pub sveltos_cluster: Option<SveltosCluster>,
    /// Mint the credential with this exec run, then apply its Secret.
    pub exec: Option<ExecInvocation>,
    /// The SveltosCluster exists and is adopted (not created by this bridge): clear others' field ownership first,
    /// so that what the bridge later stops setting is really removed.
    pub adopt_sveltos_cluster: bool,
    /// Likewise for the Secret.
    pub adopt_secret: bool,
}

/// A delete apply has to make for one cluster (SveltosCluster first, then Secret).
#[derive(Debug, Clone)]
pub struct Delete {
    /// Profile key.
    pub key: String,
    /// `(namespace, name)` of the SveltosCluster, if it exists.
    pub sveltos_cluster: Option<(String, String)>,
    /// `(namespace, name)` of the Secret, if it exists.
    pub secret: Option<(String, String)>,
}

fn split(id: &str) -> (String, String) {
    let (ns, name) = id.split_once('/').unwrap_or(("", id));
    (ns.to_string(), name.to_string())
}

/// What apply must do to turn `world` into `plan`: only objects that differ are written, only owned objects
/// that are no longer wanted are deleted.
pub fn actions(plan: &Plan, world: &World) -> (Vec<Write>, Vec<Delete>) {
    let mut writes = Vec::new();
    for (key, d) in &plan.desired {
        let current = world.owned.get(key);
        let cur_secret = current.and_then(|c| c.secret.as_ref());
        let cur_sc = current.and_then(|c| c.sveltos_cluster.as_ref());
        let exec = plan.exec.get(key).cloned();
        let secret = d.secret.as_ref().filter(|_| {
            cur_secret.is_none_or(|s| {
                s.kubeconfig_sha256 != d.entry.kubeconfig_sha256
                    || s.credential_source.as_deref() != Some(d.entry.credential_source.as_str())
                    || s.expires_at != d.entry.credential_expires_at
            })
        });
        let record = d
            .sveltos_cluster
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(super::BRIDGE_CONFIG_ANNOTATION));
        let sc_stale = cur_sc.is_none_or(|s| {
            s.labels != d.entry.labels
                || s.config_sha256 != d.entry.config_sha256
                || s.record.as_ref() != record
        });
        if secret.is_some() || exec.is_some() || sc_stale {
            writes.push(Write {
                key: key.clone(),
                secret: secret.cloned(),
                sveltos_cluster: sc_stale.then(|| d.sveltos_cluster.clone()),
                exec,
                adopt_sveltos_cluster: world.foreign_clusters.contains_key(key),
                adopt_secret: d
                    .entry
                    .secret
                    .as_ref()
                    .is_some_and(|s| world.foreign_secrets.contains_key(s)),
            });
        }
    }
    let deletes = world
        .owned
        .iter()
        .filter(|(k, _)| !plan.desired.contains_key(*k) && !plan.kept.contains_key(*k))
        .map(|(k, o)| Delete {
            key: k.clone(),
            sveltos_cluster: o.sveltos_cluster.as_ref().map(|s| split(&s.id)),
            secret: o.secret.as_ref().map(|s| split(&s.id)),
        })
        .collect();
    (writes, deletes)
}

/// Compares what apply is about to produce with what plan promised. Returns the keys that differ, with the
/// first differing field, ignoring values plan left unknown.
pub fn drift_since_plan(
    planned: &BTreeMap<String, Option<ClusterEntry>>,
    now: &BTreeMap<String, ClusterEntry>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, p) in planned {
        let Some(n) = now.get(k) else {
            out.push((
                k.clone(),
                "the cluster is no longer selected or has no credentials".into(),
            ));
            continue;
        };
        let Some(p) = p else { continue };
        let field = if p.sveltos_cluster != n.sveltos_cluster || p.secret != n.secret {
            Some("objects")
        } else if p.credential_source != n.credential_source {
            Some("credential_source")
        } else if p.labels != n.labels {
            Some("labels")
        } else if p.config_sha256 != n.config_sha256 {
            Some("config_sha256")
        } else if !p.credential_pending && p.kubeconfig_sha256 != n.kubeconfig_sha256 {
            Some("kubeconfig_sha256")
        } else {
            None
        };
        if let Some(f) = field {
            out.push((k.clone(), format!("{f} changed")));
        }
    }
    for k in now.keys().filter(|k| !planned.contains_key(*k)) {
        out.push((k.clone(), "a new cluster appeared".into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::{Override, Selection, observed::World, selector::Selector, testutil::*};

    struct Fixture {
        spec: BridgeSpec,
        profiles: Vec<ClusterProfile>,
        secrets: Vec<Secret>,
        ns_labels: BTreeMap<String, BTreeMap<String, String>>,
        world: World,
        providers: Option<ProvidersFile>,
    }

    impl Fixture {
        fn new() -> Self {
            Self {
                spec: BridgeSpec {
                    name: "main".into(),
                    ..Default::default()
                },
                profiles: vec![
                    profile("a", "c1", &[("env", "prod")]),
                    profile("b", "c1", &[("env", "dev")]),
                ],
                secrets: vec![
                    labelled_secret("a", "s1", "c1", None, &[("Config", KUBECONFIG)]),
                    labelled_secret("b", "s2", "c1", None, &[("config", KUBECONFIG)]),
                ],
                ns_labels: BTreeMap::new(),
                world: World::default(),
                providers: None,
            }
        }

        fn run(&self) -> Plan {
            let inputs = Inputs {
                spec: &self.spec,
                profiles: &self.profiles,
                credential_secrets: &self.secrets,
                namespace_labels: &self.ns_labels,
                providers: self.providers.as_ref(),
                world: &self.world,
                now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
            };
            let located = locate_all(&inputs);
            plan(&inputs, &located, &BTreeMap::new())
        }
    }

    /// The world as it is after applying `plan` faithfully.
    fn world_after(plan: &Plan, bridge: &str) -> World {
        let scs: Vec<SveltosCluster> = plan
            .desired
            .values()
            .map(|d| {
                let mut sc = d.sveltos_cluster.clone();
                let f = |m: &Option<BTreeMap<String, String>>| {
                    serde_json::Value::Object(m.iter().flatten().map(|(k, _)| (format!("f:{k}"), serde_json::json!({}))).collect())
                };
                sc.metadata.managed_fields = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
                    manager: Some(crate::bridge::FIELD_MANAGER.into()),
                    operation: Some("Apply".into()),
                    fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                        serde_json::json!({"f:metadata": {"f:labels": f(&sc.metadata.labels), "f:annotations": f(&sc.metadata.annotations)},
                "f:spec": crate::bridge::observed::tests::spec_fields(&sc)}),
                    )),
                    ..Default::default()
                }]);
                sc
            })
            .collect();
        let secrets: Vec<Secret> = plan
            .desired
            .values()
            .filter_map(|d| d.secret.clone())
            .collect();
        World::build(bridge, &scs, &secrets)
    }

    #[test]
    fn creation_targets_are_the_unowned_objects_of_selected_profiles() {
        let mut f = Fixture::new();
        f.profiles.push(profile("a", "c2", &[]));
        f.spec.overrides.insert(
            "a/c2".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        let inputs = |f: &Fixture| -> Located {
            locate_all(&Inputs {
                spec: &f.spec,
                profiles: &f.profiles,
                credential_secrets: &f.secrets,
                namespace_labels: &f.ns_labels,
                providers: None,
                world: &f.world,
                now: jiff::Timestamp::from_second(1_800_000_000).unwrap(),
            })
        };
        let t = inputs(&f).creation_targets(&f.profiles, &f.world);
        let pairs = |v: &[(&str, &str)]| -> BTreeSet<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            t.clusters,
            pairs(&[("a", "c1"), ("b", "c1")]),
            "skipped profiles are not targets"
        );
        assert_eq!(
            t.secrets,
            pairs(&[
                ("a", "c1-sveltos-kubeconfig"),
                ("b", "c1-sveltos-kubeconfig")
            ])
        );
        assert_eq!(t.namespaces().into_iter().collect::<Vec<_>>(), ["a", "b"]);

        // After apply, nothing is left to check; a deleted Secret of ours is a target again.
        f.world = world_after(&f.run(), "main");
        assert!(
            inputs(&f)
                .creation_targets(&f.profiles, &f.world)
                .is_empty()
        );
        f.world.owned.get_mut("b/c1").unwrap().secret = None;
        let t = inputs(&f).creation_targets(&f.profiles, &f.world);
        assert_eq!((t.clusters.len(), t.secrets.len()), (0, 1));
    }

    #[test]
    fn same_name_in_two_namespaces_are_two_clusters() {
        let p = Fixture::new().run();
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.entries().keys().collect::<Vec<_>>(), ["a/c1", "b/c1"]);
    }

    #[test]
    fn apply_then_plan_converges_with_no_writes() {
        let f = Fixture::new();
        let p = f.run();
        let (writes, deletes) = actions(&p, &World::default());
        assert_eq!((writes.len(), deletes.len()), (2, 0));
        assert!(
            writes
                .iter()
                .all(|w| w.secret.is_some() && w.sveltos_cluster.is_some())
        );
        let world = world_after(&p, "main");
        assert_eq!(
            world.entries(),
            p.entries(),
            "read after apply equals the plan"
        );
        let mut f2 = Fixture::new();
        f2.world = world.clone();
        let p2 = f2.run();
        let (writes, deletes) = actions(&p2, &world);
        assert!(writes.is_empty() && deletes.is_empty());
    }

    #[test]
    fn removed_profile_deletes_only_owned_objects() {
        let f = Fixture::new();
        let world = world_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.profiles.pop();
        f2.world = world.clone();
        let (writes, deletes) = actions(&f2.run(), &world);
        assert!(writes.is_empty());
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].sveltos_cluster, Some(("b".into(), "c1".into())));
        assert_eq!(
            deletes[0].secret,
            Some(("b".into(), "c1-sveltos-kubeconfig".into()))
        );
    }

    #[test]
    fn label_change_rewrites_only_the_cluster() {
        let f = Fixture::new();
        let world = world_after(&f.run(), "main");
        let mut f2 = Fixture::new();
        f2.profiles[0]
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("env".into(), "staging".into());
        f2.world = world.clone();
        let (writes, _) = actions(&f2.run(), &world);
        assert_eq!(writes.len(), 1);
        assert!(writes[0].secret.is_none() && writes[0].sveltos_cluster.is_some());
    }

    #[test]
    fn argument_changes_refresh_the_record_without_changing_entries() {
        let mut f = Fixture::new();
        f.spec.config_record = Some("{\"v\":1}".into());
        let p = f.run();
        let world = world_after(&p, "main");
        let mut f2 = Fixture::new();
        f2.spec.config_record = Some("{\"v\":2}".into());
        f2.world = world.clone();
        let p2 = f2.run();
        assert_eq!(p2.entries(), p.entries(), "plan shows no cluster change");
        let (writes, _) = actions(&p2, &world);
        assert_eq!(writes.len(), 2, "apply refreshes the record");
        assert!(
            writes
                .iter()
                .all(|w| w.secret.is_none() && w.sveltos_cluster.is_some())
        );
    }

    #[test]
    fn selection_filters() {
        let mut f = Fixture::new();
        f.spec.selection = Selection {
            label_selector: Some(Selector::parse("env=prod").unwrap()),
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["a/c1"]);
        f.spec.selection = Selection {
            namespaces: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection {
            require_healthy: true,
            ..Default::default()
        };
        set_healthy(&mut f.profiles[1], true);
        set_healthy(&mut f.profiles[0], false);
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
        f.spec.selection = Selection::default();
        f.spec.overrides.insert(
            "a/c1".into(),
            Override {
                skip: true,
                ..Default::default()
            },
        );
        assert_eq!(f.run().entries().keys().collect::<Vec<_>>(), ["b/c1"]);
    }

    #[test]
    fn foreign_objects_block_without_adopt() {
        let mut f = Fixture::new();
        f.world.foreign_clusters.insert("a/c1".into(), None);
        f.world
            .foreign_secrets
            .insert("b/c1-sveltos-kubeconfig".into(), Some("other".into()));
        let p = f.run();
        let errors: Vec<_> = p
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 2);
        assert!(
            errors[0].summary.contains("SveltosCluster a/c1"),
            "{errors:?}"
        );
        assert!(errors[1].detail.contains("bridge \"other\""), "{errors:?}");
        assert_eq!(errors[0].path, vec![Step::Attr("adopt")]);
        f.spec.adopt = true;
        assert!(!f.run().has_errors());
    }

    #[test]
    fn missing_credentials_warn_or_fail_and_keep_existing() {
        let mut f = Fixture::new();
        f.secrets.pop();
        let p = f.run();
        assert_eq!(p.entries().len(), 1);
        assert!(
            p.problems
                .iter()
                .any(|x| x.severity == Severity::Warning && x.summary.contains("b/c1"))
        );
        f.spec.require_credentials = true;
        assert!(f.run().has_errors());
        // Already bridged: kept (never deleted because a credential went missing).
        let mut f = Fixture::new();
        let world = world_after(&f.run(), "main");
        f.secrets.pop();
        f.world = world.clone();
        let p = f.run();
        assert!(p.kept.contains_key("b/c1"));
        let (_, deletes) = actions(&p, &world);
        assert!(deletes.is_empty());
    }

    #[test]
    fn ambiguous_secrets_name_both() {
        let mut f = Fixture::new();
        f.secrets.push(labelled_secret(
            "a",
            "s9",
            "c1",
            None,
            &[("Config", KUBECONFIG)],
        ));
        let p = f.run();
        let e = p
            .problems
            .iter()
            .find(|x| x.severity == Severity::Error)
            .unwrap();
        assert!(
            e.detail.contains("a/s1") && e.detail.contains("a/s9"),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_override_key_warns() {
        let mut f = Fixture::new();
        f.spec
            .overrides
            .insert("x/none".into(), Override::default());
        f.spec.overrides.insert("bad".into(), Override::default());
        let p = f.run();
        assert!(p.problems.iter().any(|x| x.severity == Severity::Warning && x.path[1] == Step::Key("x/none".into())));
        assert!(
            p.problems
                .iter()
                .any(|x| x.severity == Severity::Error && x.path[1] == Step::Key("bad".into()))
        );
    }

    #[test]
    fn exec_credentials_are_reused_until_refresh_window() {
        let mut f = Fixture::new();
        f.secrets.clear();
        f.profiles.truncate(1);
        add_provider(&mut f.profiles[0], "tok", serde_json::json!({}));
        f.providers = Some(
            ProvidersFile::parse(br#"{"providers":[{"name":"tok","execConfig":{"apiVersion":"client.authentication.k8s.io/v1","command":"get-token"}}]}"#)
                .unwrap(),
        );
        let p = f.run();
        assert!(p.desired["a/c1"].entry.credential_pending);
        let inv = p.exec["a/c1"].clone();
        // Simulate apply having minted a credential that expires in 1 h.
        let now = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let mut world = World::default();
        let mut observed = crate::bridge::observed::Observed {
            secret: Some(crate::bridge::observed::ObservedSecret {
                id: "a/c1-sveltos-kubeconfig".into(),
                kubeconfig_sha256: Some("h1".into()),
                expires_at: Some((now + jiff::SignedDuration::from_hours(1)).to_string()),
                credential_source: Some("exec:tok".into()),
                credential_config_sha256: Some(invocation_sha256(&inv)),
            }),
            ..Default::default()
        };
        world.owned.insert("a/c1".into(), observed.clone());
        f.world = world.clone();
        let p = f.run();
        assert!(!p.desired["a/c1"].entry.credential_pending);
        assert_eq!(
            p.desired["a/c1"].entry.kubeconfig_sha256.as_deref(),
            Some("h1")
        );
        // Inside refresh_before (default 10 min) of expiry: a new credential is planned.
        observed.secret.as_mut().unwrap().expires_at =
            Some((now + jiff::SignedDuration::from_mins(5)).to_string());
        f.world.owned.insert("a/c1".into(), observed);
        assert!(f.run().desired["a/c1"].entry.credential_pending);
    }

    #[test]
    fn drift_since_plan_ignores_pending_hashes() {
        let p = Fixture::new().run();
        let mut planned: BTreeMap<String, Option<ClusterEntry>> =
            p.entries().into_iter().map(|(k, e)| (k, Some(e))).collect();
        assert!(drift_since_plan(&planned, &p.entries()).is_empty());
        let mut now = p.entries();
        now.get_mut("a/c1").unwrap().kubeconfig_sha256 = Some("rotated".into());
        assert_eq!(drift_since_plan(&planned, &now)[0].0, "a/c1");
        planned
            .get_mut("a/c1")
            .unwrap()
            .as_mut()
            .unwrap()
            .credential_pending = true;
        assert!(drift_since_plan(&planned, &now).is_empty());
    }
}
