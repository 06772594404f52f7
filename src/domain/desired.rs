//! What the bridge writes for one ClusterProfile: a SveltosCluster `ns/name` and a Secret
//! `ns/name-sveltos-kubeconfig`, and the state entry Terraform records for them.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString, api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use super::{
    BridgeSpec, CREDENTIAL_CONFIG_ANNOTATION, CREDENTIAL_SOURCE_ANNOTATION, Override, SECRET_KEY,
    SECRET_SUFFIX, TOKEN_RENEWAL_ANNOTATION, TokenRenewal,
    credentials::CredentialSource,
    managed_view::ManagedView,
    ownership::WrittenCredential,
    properties::{self, Facts},
    renewal::{Verdict, judge},
    sha256_hex,
};
use crate::api::{
    ClusterProfile, SveltosCluster, SveltosClusterSpec, TokenRequestRenewalOption, keys,
};

/// One cluster's entry in the resource's `clusters` attribute: identities, hashes and the managed fields in words,
/// never credential bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterEntry {
    /// `namespace/name` of the SveltosCluster, `None` if it does not exist.
    pub sveltos_cluster: Option<String>,
    /// `namespace/name` of the kubeconfig Secret, `None` if it does not exist.
    pub secret: Option<String>,
    /// Where the kubeconfig came from (see [`CredentialSource`]'s `Display`).
    pub credential_source: String,
    /// SHA-256 of the kubeconfig; `None` if unknown (no Secret, or a credential to be minted at apply).
    pub kubeconfig_sha256: Option<String>,
    /// Credential expiry (RFC 3339), when known.
    pub credential_expires_at: Option<String>,
    /// Labels the bridge sets on the SveltosCluster (without the ownership label).
    pub labels: BTreeMap<String, String>,
    /// SHA-256 of the SveltosCluster spec fields and annotations the bridge manages.
    pub config_sha256: String,
    /// Those fields in words (escaped and bounded), for the plan's reader.
    pub managed: ManagedView,
    /// The credential is minted at apply: `kubeconfig_sha256` and `credential_expires_at` are unknown.
    pub credential_pending: bool,
}

/// The kubeconfig material for one cluster, as far as plan knows it. `Debug` shows the length of the bytes only.
#[derive(Clone, PartialEq, Eq)]
pub enum Material {
    /// The bytes to write (and the credential's expiry when it has one).
    Bytes {
        /// Kubeconfig bytes. Never logged, never in state.
        bytes: Vec<u8>,
        /// Expiry, RFC 3339.
        expires_at: Option<String>,
        /// Hash of the exec provider settings that minted it.
        config_sha256: Option<String>,
    },
    /// Keep the Secret that exists (a still-valid exec credential).
    Reuse {
        /// Its kubeconfig hash.
        kubeconfig_sha256: String,
        /// Its expiry.
        expires_at: Option<String>,
    },
    /// Mint at apply (exec plugin).
    Pending,
    /// At a plan only: copy the kubeconfig the last apply checked and wrote, known by the hash of what it wrote
    /// (the source has the same bytes under the same build and policy: see
    /// [`WrittenCredential::source_sha256`]). Apply always checks the source and copies [`Material::Bytes`].
    Recorded {
        /// The hash of what apply writes.
        kubeconfig_sha256: String,
    },
}

impl Material {
    /// The kubeconfig bytes, when plan knows them.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes { bytes, .. } => Some(bytes),
            Self::Reuse { .. } | Self::Pending | Self::Recorded { .. } => None,
        }
    }
}

impl std::fmt::Debug for Material {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bytes {
                bytes,
                expires_at,
                config_sha256,
            } => f
                .debug_struct("Bytes")
                .field("bytes", &format_args!("<{} bytes redacted>", bytes.len()))
                .field("expires_at", expires_at)
                .field("config_sha256", config_sha256)
                .finish(),
            Self::Reuse {
                kubeconfig_sha256,
                expires_at,
            } => f
                .debug_struct("Reuse")
                .field("kubeconfig_sha256", kubeconfig_sha256)
                .field("expires_at", expires_at)
                .finish(),
            Self::Pending => f.write_str("Pending"),
            Self::Recorded { kubeconfig_sha256 } => f
                .debug_struct("Recorded")
                .field("kubeconfig_sha256", kubeconfig_sha256)
                .finish(),
        }
    }
}

/// Names a Secret in `Debug` output without its data.
pub(crate) struct SecretName<'a>(pub Option<&'a Secret>);

impl std::fmt::Debug for SecretName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("None"),
            Some(s) => write!(
                f,
                "Secret({}/{}, data redacted)",
                s.metadata.namespace.as_deref().unwrap_or_default(),
                s.metadata.name.as_deref().unwrap_or_default()
            ),
        }
    }
}

impl std::fmt::Debug for DesiredCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DesiredCluster")
            .field("key", &self.key)
            .field("entry", &self.entry)
            .field("secret", &SecretName(self.secret.as_deref()))
            .field("sveltos_cluster", &self.sveltos_cluster)
            .field("packed", &self.packed)
            .finish()
    }
}

/// Everything written for one profile. `Debug` never shows the Secret's data.
#[derive(Clone)]
pub struct DesiredCluster {
    /// `namespace/name`.
    pub key: String,
    /// The state entry.
    pub entry: ClusterEntry,
    /// The Secret to apply (`None` when an existing one is kept or the credential is minted at apply, and in a
    /// plan that writes nothing: see [`DesiredCluster::entry_only`]).
    pub secret: Option<Box<Secret>>,
    /// The SveltosCluster to apply (`None` in a plan that writes nothing).
    pub sveltos_cluster: Option<Box<SveltosCluster>>,
    /// In a plan made for apply's writes ([`crate::domain::plan::Inputs::pack`]): the objects to write, packed (the
    /// two fields above are then `None`).
    pub packed: Option<Box<Packed>>,
}

/// The objects apply writes for one cluster, held serialized (JSON) until their write rather than as objects with
/// their maps (at ten thousand clusters, tens of megabytes less), unpacked one write at a time.
/// Only what is written is held: the Secret when it differs, the SveltosCluster when it is stale. `Debug` shows
/// sizes only.
#[derive(Clone, PartialEq, Eq)]
pub struct Packed {
    secret: Option<Box<[u8]>>,
    sveltos_cluster: Option<Box<[u8]>>,
}

impl Packed {
    /// Packs the objects to write.
    pub fn pack(secret: Option<&Secret>, sveltos_cluster: Option<&SveltosCluster>) -> Self {
        fn bytes<T: serde::Serialize>(t: &T) -> Box<[u8]> {
            // Serialising a Secret or a SveltosCluster (strings, maps, numbers) cannot fail.
            serde_json::to_vec(t)
                .expect("an object serialises")
                .into_boxed_slice()
        }
        Self {
            secret: secret.map(bytes),
            sveltos_cluster: sveltos_cluster.map(bytes),
        }
    }

    /// Whether the Secret is written.
    pub fn has_secret(&self) -> bool {
        self.secret.is_some()
    }

    /// Whether the SveltosCluster is written.
    pub fn has_sveltos_cluster(&self) -> bool {
        self.sveltos_cluster.is_some()
    }

    /// The objects as they were packed.
    pub fn unpack(&self) -> (Option<Secret>, Option<SveltosCluster>) {
        fn object<T: serde::de::DeserializeOwned>(b: &[u8]) -> T {
            // What `pack` wrote reads back.
            serde_json::from_slice(b).expect("a packed object reads back")
        }
        (
            self.secret.as_deref().map(object),
            self.sveltos_cluster.as_deref().map(object),
        )
    }
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packed")
            .field("secret_bytes", &self.secret.as_ref().map(|b| b.len()))
            .field(
                "sveltos_cluster_bytes",
                &self.sveltos_cluster.as_ref().map(|b| b.len()),
            )
            .finish()
    }
}

impl DesiredCluster {
    /// The cluster as a plan that writes nothing needs it: its state entry, without the objects (a kubeconfig and
    /// two objects per cluster, about 5.5 KB each: 55 MB at ten thousand clusters). Apply plans again and builds
    /// them ([`crate::domain::plan::Phase::Apply`]).
    pub fn entry_only(self) -> Self {
        Self {
            secret: None,
            sveltos_cluster: None,
            packed: None,
            ..self
        }
    }
}

/// The name of the bridged Secret for a profile name.
pub fn secret_name(profile_name: &str) -> String {
    format!("{profile_name}{SECRET_SUFFIX}")
}

/// Hash of the managed SveltosCluster fields: spec fields the bridge sets and the given annotations.
///
/// The bridge-config record is left out: it changes with every edit of the resource's arguments, and those edits
/// show in plan as changes of the arguments themselves, not of every cluster (apply still refreshes the record).
///
/// For a cluster whose credentials Sveltos renews (it carries [`TOKEN_RENEWAL_ANNOTATION`]), `kubeconfigKeyName`
/// and `tokenRequestRenewalOption` are left out as well: sveltoscluster-manager rewrites them on renewal. The
/// renewal settings as configured are in that annotation, so changing them still shows.
pub fn config_sha256(annotations: &BTreeMap<String, String>, spec: &SveltosClusterSpec) -> String {
    let renewed = annotations.contains_key(TOKEN_RENEWAL_ANNOTATION);
    let doc = ConfigDoc {
        annotations: ConfigAnnotations(annotations),
        kubeconfig_name: spec.kubeconfig_name.as_deref(),
        kubeconfig_key_name: if renewed {
            None
        } else {
            spec.kubeconfig_key_name.as_deref()
        },
        paused: spec.paused,
        consecutive_failure_threshold: spec.consecutive_failure_threshold,
        active_window: spec.active_window.as_ref(),
        data: spec.data.as_ref(),
        readiness_checks: spec.readiness_checks.as_ref(),
        liveness_checks: spec.liveness_checks.as_ref(),
        pull_mode: spec.pull_mode,
        workload_identity: spec.workload_identity.as_ref(),
    };
    sha256_hex(&serde_json::to_vec(&doc).unwrap_or_default())
}

/// The JSON document [`config_sha256`] hashes, written straight from the objects (no `serde_json::Value` built for
/// each of ten thousand clusters). States record the hash, so its bytes never change: the fields in this order,
/// the first six always (`null` when unset), the others only when set, so that the hash of a cluster without them
/// is what it was before they were added (checked against the document as first written, in this module's tests).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigDoc<'a> {
    annotations: ConfigAnnotations<'a>,
    kubeconfig_name: Option<&'a str>,
    kubeconfig_key_name: Option<&'a str>,
    paused: Option<bool>,
    consecutive_failure_threshold: Option<i64>,
    active_window: Option<&'a crate::api::ActiveWindow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    readiness_checks: Option<&'a Vec<crate::api::ClusterCheck>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    liveness_checks: Option<&'a Vec<crate::api::ClusterCheck>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pull_mode: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workload_identity: Option<&'a crate::api::WorkloadIdentity>,
}

/// The annotations [`config_sha256`] hashes: all but the bridge's record of its configuration and the run mark
/// (which run wrote the object is not configuration: it changes with every apply that writes it).
struct ConfigAnnotations<'a>(&'a BTreeMap<String, String>);

impl serde::Serialize for ConfigAnnotations<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().filter(|(k, _)| {
            *k != super::BRIDGE_CONFIG_ANNOTATION && *k != super::ownership::MARK_ANNOTATION
        }))
    }
}

/// Most labels copied from one ClusterProfile (the API server bounds neither their number nor their size; each
/// one is stored in the state and written to the SveltosCluster).
pub const MAX_COPIED_LABELS: usize = 64;
/// Most bytes of copied label keys and values from one ClusterProfile.
pub const MAX_COPIED_LABEL_BYTES: usize = 16 * 1024;

/// The profile's labels that `copy_labels` lets through (never the labels Sveltos or the bridge own, nor those
/// `copy_properties` decides).
fn copied_labels(spec: &BridgeSpec, profile: &ClusterProfile) -> BTreeMap<String, String> {
    let mut labels = profile.labels_map();
    labels.retain(|k, _| spec.copy_labels.copies(k) && !spec.properties.reserves(k));
    labels.remove(keys::SVELTOS_K8S_VERSION_LABEL);
    labels.remove(keys::BRIDGE_LABEL);
    labels
}

/// Why the labels the bridge would copy from `profile` are more than it copies ([`MAX_COPIED_LABELS`],
/// [`MAX_COPIED_LABEL_BYTES`]), or `None` when they are within bounds.
pub fn copied_labels_out_of_bounds(spec: &BridgeSpec, profile: &ClusterProfile) -> Option<String> {
    let labels = copied_labels(spec, profile);
    let bytes: usize = labels.iter().map(|(k, v)| k.len() + v.len()).sum();
    (labels.len() > MAX_COPIED_LABELS || bytes > MAX_COPIED_LABEL_BYTES).then(|| {
        format!(
            "{} labels of {bytes} bytes to copy (at most {MAX_COPIED_LABELS} labels and {MAX_COPIED_LABEL_BYTES} \
             bytes)",
            labels.len()
        )
    })
}

/// Labels the SveltosCluster gets (without the ownership label): the profile's labels that `copy_labels`
/// lets through (never the labels Sveltos or the bridge own), the labels of its properties (`copy_properties`),
/// plus the bridge-wide and per-cluster extras (validation refuses an extra label with a property's key).
pub fn cluster_labels(
    spec: &BridgeSpec,
    profile: &ClusterProfile,
    facts: &Facts,
) -> BTreeMap<String, String> {
    let mut labels = copied_labels(spec, profile);
    labels.extend(facts.labels.clone());
    labels.extend(spec.extra_labels.clone());
    if let Some(o) = spec.overrides.get(&profile.key()) {
        labels.extend(o.extra_labels.clone());
    }
    labels
}

/// Builds the objects and entry for one profile with its credential; `health_pause` pauses the SveltosCluster
/// whatever the configuration says (an unhealthy profile under `unhealthy = "pause"`).
pub fn desired(
    spec: &BridgeSpec,
    profile: &ClusterProfile,
    source: &CredentialSource,
    material: &Material,
    health_pause: bool,
) -> DesiredCluster {
    build(spec, profile, source, material, (health_pause, true))
}

/// [`desired`] as a plan that writes nothing needs it ([`DesiredCluster::entry_only`]): the same entry, the
/// objects never built (a kubeconfig copy and two objects per cluster, every plan).
pub fn desired_entry(
    spec: &BridgeSpec,
    profile: &ClusterProfile,
    source: &CredentialSource,
    material: &Material,
    health_pause: bool,
) -> DesiredCluster {
    build(spec, profile, source, material, (health_pause, false))
}

/// [`desired`], its objects built when `objects`.
fn build(
    spec: &BridgeSpec,
    profile: &ClusterProfile,
    source: &CredentialSource,
    material: &Material,
    (health_pause, objects): (bool, bool),
) -> DesiredCluster {
    let key = profile.key();
    let ns = profile.metadata.namespace.clone().unwrap_or_default();
    let name = profile.metadata.name.clone().unwrap_or_default();
    let over = spec.overrides.get(&key);
    // A cluster whose properties cannot be mapped is kept as it is by the plan, never built.
    let facts = properties::facts(&spec.properties, profile).unwrap_or_default();
    let labels = cluster_labels(spec, profile, &facts);
    // Not enabled where a renewal would break the connection (the plan warns: `crate::domain::renewal`).
    let renewal = renewal_of(spec, &key)
        .filter(|r| {
            !matches!(
                judge(r, profile, source, material.bytes()),
                Verdict::Withheld(_)
            )
        })
        .cloned();
    let renewal_record = renewal
        .as_ref()
        .map(|r| serde_json::to_string(r).unwrap_or_default());
    let annotations = cluster_annotations(spec, over, profile, &key, renewal_record.as_deref());
    let mut sc_spec = cluster_spec(spec, over, &name, health_pause, renewal);
    sc_spec.data = with_property_data(sc_spec.data, facts.data);
    let config = config_sha256(&annotations, &sc_spec);
    let managed = ManagedView::of(&annotations, &sc_spec);
    let sc = objects.then(|| sveltos_cluster(spec, &ns, &name, &labels, annotations, sc_spec));
    let part = SecretPart::of(
        SecretTarget {
            spec,
            ns: &ns,
            name: &name,
            key: &key,
            source,
            renewal_record: renewal_record.as_deref(),
        },
        material,
        objects,
    );
    DesiredCluster {
        entry: ClusterEntry {
            sveltos_cluster: Some(key.clone()),
            secret: Some(format!("{ns}/{}", secret_name(&name))),
            credential_source: source.to_string(),
            kubeconfig_sha256: part.kubeconfig_sha256,
            credential_expires_at: part.expires_at,
            labels,
            config_sha256: config,
            managed,
            credential_pending: part.pending,
        },
        key,
        secret: part.secret.map(Box::new),
        sveltos_cluster: sc.map(Box::new),
        packed: None,
    }
}

/// The SveltosCluster `ns/name`: `labels` with the bridge's ownership label, `annotations` and `sc_spec`.
fn sveltos_cluster(
    spec: &BridgeSpec,
    ns: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    sc_spec: SveltosClusterSpec,
) -> SveltosCluster {
    let mut sc_labels = labels.clone();
    sc_labels.insert(keys::BRIDGE_LABEL.into(), spec.name.clone());
    let mut sc = SveltosCluster::new(name, sc_spec);
    sc.metadata.namespace = Some(ns.to_string());
    sc.metadata.labels = Some(sc_labels);
    sc.metadata.annotations = Some(annotations);
    sc
}

/// Which cluster a kubeconfig Secret is for, and what its annotations record besides the kubeconfig.
struct SecretTarget<'a> {
    /// The bridge.
    spec: &'a BridgeSpec,
    /// The profile's namespace.
    ns: &'a str,
    /// The profile's name.
    name: &'a str,
    /// `namespace/name` of the profile.
    key: &'a str,
    /// Where the kubeconfig came from.
    source: &'a CredentialSource,
    /// The token renewal record, when renewal is configured.
    renewal_record: Option<&'a str>,
}

/// The kubeconfig Secret's part of a desired cluster: the Secret to write, and what the state entry records of
/// the kubeconfig.
struct SecretPart {
    /// The Secret to write (`None` when the existing one is kept or the credential is minted at apply).
    secret: Option<Secret>,
    /// The kubeconfig's hash (`None` while the credential is pending).
    kubeconfig_sha256: Option<String>,
    /// The credential's expiry, when known.
    expires_at: Option<String>,
    /// The credential is minted at apply.
    pending: bool,
}

impl SecretPart {
    /// What `material` makes of the Secret: a new Secret for bytes (built when `objects`), the existing one's
    /// hash for a reused credential, nothing known yet for one minted at apply.
    fn of(target: SecretTarget<'_>, material: &Material, objects: bool) -> Self {
        match material {
            Material::Bytes {
                bytes,
                expires_at,
                config_sha256,
            } => {
                let sha = sha256_hex(bytes);
                let secret = objects.then(|| {
                    let ann = SecretAnnotations {
                        key: target.key,
                        kubeconfig_sha256: &sha,
                        source: target.source,
                        expires_at: expires_at.as_deref(),
                        config_sha256: config_sha256.as_deref(),
                        renewal_record: target.renewal_record,
                    }
                    .build();
                    kubeconfig_secret(target.spec, target.ns, target.name, ann, bytes)
                });
                Self {
                    secret,
                    kubeconfig_sha256: Some(sha),
                    expires_at: expires_at.clone(),
                    pending: false,
                }
            }
            Material::Reuse {
                kubeconfig_sha256,
                expires_at,
            } => Self {
                secret: None,
                kubeconfig_sha256: Some(kubeconfig_sha256.clone()),
                expires_at: expires_at.clone(),
                pending: false,
            },
            Material::Pending => Self {
                secret: None,
                kubeconfig_sha256: None,
                expires_at: None,
                pending: true,
            },
            Material::Recorded { kubeconfig_sha256 } => Self {
                secret: None,
                kubeconfig_sha256: Some(kubeconfig_sha256.clone()),
                expires_at: None,
                pending: false,
            },
        }
    }
}

/// What the bridge records on a Secret it writes: the profile, the kubeconfig's hash, the credential source, and
/// when known the expiry, the exec settings' hash and the token renewal record.
struct SecretAnnotations<'a> {
    key: &'a str,
    kubeconfig_sha256: &'a str,
    source: &'a CredentialSource,
    expires_at: Option<&'a str>,
    config_sha256: Option<&'a str>,
    renewal_record: Option<&'a str>,
}

impl SecretAnnotations<'_> {
    /// The annotations, by key.
    fn build(self) -> BTreeMap<String, String> {
        let mut ann = BTreeMap::from([
            (keys::SOURCE_ANNOTATION.to_string(), self.key.to_string()),
            (
                keys::KUBECONFIG_SHA_ANNOTATION.to_string(),
                self.kubeconfig_sha256.to_string(),
            ),
            (
                CREDENTIAL_SOURCE_ANNOTATION.to_string(),
                self.source.to_string(),
            ),
        ]);
        if let Some(e) = self.expires_at {
            ann.insert(keys::EXPIRES_ANNOTATION.into(), e.to_string());
        }
        if let Some(c) = self.config_sha256 {
            ann.insert(CREDENTIAL_CONFIG_ANNOTATION.into(), c.to_string());
        }
        if let Some(r) = self.renewal_record {
            ann.insert(TOKEN_RENEWAL_ANNOTATION.into(), r.to_string());
        }
        ann
    }
}

/// The SveltosCluster's annotations: the extra ones (the override's over the bridge's), the source
/// profile, its display name and the token renewal record.
fn cluster_annotations(
    spec: &BridgeSpec,
    over: Option<&Override>,
    profile: &ClusterProfile,
    key: &str,
    renewal_record: Option<&str>,
) -> BTreeMap<String, String> {
    let mut annotations = spec.extra_annotations.clone();
    if let Some(o) = over {
        annotations.extend(o.extra_annotations.clone());
    }
    annotations.insert(keys::SOURCE_ANNOTATION.into(), key.to_string());
    if let Some(d) = profile.spec.display_name.as_ref().filter(|d| !d.is_empty()) {
        annotations.insert(keys::DISPLAY_NAME_ANNOTATION.into(), d.clone());
    }
    if let Some(r) = renewal_record {
        annotations.insert(TOKEN_RENEWAL_ANNOTATION.into(), r.to_string());
    }
    annotations
}

/// A list of checks for one cluster: the override's list replaces the bridge-wide one (an empty list: none).
fn checks_of(
    bridge: &[crate::api::ClusterCheck],
    over: Option<&Option<Vec<crate::api::ClusterCheck>>>,
) -> Option<Vec<crate::api::ClusterCheck>> {
    let chosen = over.and_then(Option::as_ref).map_or(bridge, Vec::as_slice);
    Some(chosen.to_vec()).filter(|c| !c.is_empty())
}

/// The SveltosCluster's spec: the override's settings over the bridge's, paused while unhealthy when
/// `health_pause`. With an active window, `spec.paused` is sveltoscluster-manager's (it pauses and unpauses the
/// cluster on every flip of the window) and never written here; validation refuses `paused` and
/// `unhealthy = "pause"` for such a cluster.
fn cluster_spec(
    spec: &BridgeSpec,
    over: Option<&Override>,
    name: &str,
    health_pause: bool,
    renewal: Option<TokenRenewal>,
) -> SveltosClusterSpec {
    let active_window = over
        .and_then(|o| o.active_window.clone())
        .or_else(|| spec.active_window.clone());
    let paused = if active_window.is_some() {
        None
    } else if health_pause {
        Some(true)
    } else {
        over.and_then(|o| o.paused).or(spec.paused)
    };
    // With workload identity Sveltos reads no kubeconfig, and the CRD refuses `kubeconfigName` beside it.
    let workload_identity = over
        .and_then(|o| o.workload_identity.clone())
        .or_else(|| spec.workload_identity.clone());
    let kubeconfig = workload_identity.is_none();
    SveltosClusterSpec {
        kubeconfig_name: kubeconfig.then(|| secret_name(name)),
        kubeconfig_key_name: kubeconfig.then(|| SECRET_KEY.into()),
        workload_identity,
        paused,
        consecutive_failure_threshold: over
            .and_then(|o| o.consecutive_failure_threshold)
            .or(spec.consecutive_failure_threshold),
        active_window,
        data: Some(data_of(spec, over)).filter(|d| !d.is_empty()),
        readiness_checks: checks_of(&spec.readiness_checks, over.map(|o| &o.readiness_checks)),
        liveness_checks: checks_of(&spec.liveness_checks, over.map(|o| &o.liveness_checks)),
        pull_mode: over.and_then(|o| o.pull_mode).or(spec.pull_mode),
        token_request_renewal_option: renewal.map(|r| TokenRequestRenewalOption {
            renew_token_request_interval: r.interval,
            token_duration: r.token_duration,
            sa_name: r.sa_name,
            sa_namespace: r.sa_namespace,
            kubeconfig_key_name: None,
        }),
    }
}

/// `spec.data` of a cluster: the bridge-wide entries with its override's over them.
fn data_of(spec: &BridgeSpec, over: Option<&Override>) -> BTreeMap<String, String> {
    let mut data = spec.data.clone();
    if let Some(o) = over {
        data.extend(o.data.clone());
    }
    data
}

/// `spec.data` with the properties' entries (`copy_properties`) added; the configured entries win (validation
/// refuses a configured key that a property maps).
fn with_property_data(
    data: Option<BTreeMap<String, String>>,
    properties: BTreeMap<String, String>,
) -> Option<BTreeMap<String, String>> {
    let mut all = properties;
    all.extend(data.unwrap_or_default());
    Some(all).filter(|d| !d.is_empty())
}

/// The kubeconfig Secret for cluster `ns/name`, holding `bytes`, with the ownership label and `annotations`.
fn kubeconfig_secret(
    spec: &BridgeSpec,
    ns: &str,
    name: &str,
    annotations: BTreeMap<String, String>,
    bytes: &[u8],
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(secret_name(name)),
            namespace: Some(ns.to_string()),
            labels: Some(BTreeMap::from([(
                keys::BRIDGE_LABEL.to_string(),
                spec.name.clone(),
            )])),
            annotations: Some(annotations),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            SECRET_KEY.to_string(),
            ByteString(bytes.to_vec()),
        )])),
        ..Default::default()
    }
}

/// What the ledger records of a kubeconfig Secret the bridge is about to write (one [`desired`] built): the
/// kubeconfig's hash, and the expiry and exec settings hash the bridge set on it. `None` for a Secret without a
/// kubeconfig.
pub fn written_credential(secret: &Secret) -> Option<WrittenCredential> {
    let bytes = secret.data.as_ref()?.get(SECRET_KEY)?;
    let ann = |k: &str| secret.metadata.annotations.as_ref()?.get(k).cloned();
    Some(WrittenCredential {
        kubeconfig_sha256: sha256_hex(&bytes.0),
        expires_at: ann(keys::EXPIRES_ANNOTATION),
        config_sha256: ann(CREDENTIAL_CONFIG_ANNOTATION),
        renewal: ann(TOKEN_RENEWAL_ANNOTATION).is_some(),
        resource_version: None,
        source_sha256: None,
    })
}

/// The token renewal settings of cluster `key`: its override's, else the bridge-wide ones.
pub fn renewal_of<'s>(spec: &'s BridgeSpec, key: &str) -> Option<&'s crate::domain::TokenRenewal> {
    spec.overrides
        .get(key)
        .and_then(|o| o.token_renewal.as_ref())
        .or(spec.token_renewal.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Override, testutil::*};

    /// [`config_sha256`]'s document as it was first written (a `serde_json::Value` built field by field): the
    /// hash recorded in every state. The hash written straight from the objects is the same for a cluster with
    /// nothing optional set, with each optional field set, with renewal, and with the record and the mark among its
    /// annotations (left out of both).
    #[test]
    fn the_configuration_hash_is_the_one_states_record() {
        fn as_first_written(
            annotations: &BTreeMap<String, String>,
            spec: &SveltosClusterSpec,
        ) -> String {
            let mut annotations = annotations.clone();
            annotations.remove(crate::domain::BRIDGE_CONFIG_ANNOTATION);
            annotations.remove(crate::domain::ownership::MARK_ANNOTATION);
            let renewed = annotations.contains_key(TOKEN_RENEWAL_ANNOTATION);
            let mut doc = serde_json::json!({
                "annotations": annotations,
                "kubeconfigName": spec.kubeconfig_name,
                "kubeconfigKeyName": if renewed { None } else { spec.kubeconfig_key_name.as_deref() },
                "paused": spec.paused,
                "consecutiveFailureThreshold": spec.consecutive_failure_threshold,
                "activeWindow": spec.active_window,
            });
            if let Some(d) = &spec.data {
                doc["data"] = serde_json::json!(d);
            }
            if let Some(c) = &spec.readiness_checks {
                doc["readinessChecks"] = serde_json::json!(c);
            }
            if let Some(c) = &spec.liveness_checks {
                doc["livenessChecks"] = serde_json::json!(c);
            }
            if let Some(p) = spec.pull_mode {
                doc["pullMode"] = serde_json::json!(p);
            }
            if let Some(w) = &spec.workload_identity {
                doc["workloadIdentity"] = serde_json::json!(w);
            }
            sha256_hex(doc.to_string().as_bytes())
        }
        let bare = SveltosClusterSpec::default();
        let set: SveltosClusterSpec = serde_json::from_value(serde_json::json!({
            "kubeconfigName": "c1-sveltos-kubeconfig",
            "kubeconfigKeyName": "kubeconfig",
            "paused": true,
            "data": {"b": "2", "a": "1"},
            "activeWindow": {"from": "0 22 * * 5", "to": "0 6 * * 1"},
            "consecutiveFailureThreshold": 7,
            "pullMode": false,
            "readinessChecks": [{"name": "r", "resourceSelectors": [{"group": "", "version": "v1",
                "kind": "Namespace"}], "condition": "function evaluate() end"}],
            "livenessChecks": [{"name": "l", "resourceSelectors": [{"group": "apps", "version": "v1",
                "kind": "Deployment", "namespace": "x"}], "condition": "c"}],
            "workloadIdentity": {"provider": "aws", "endpoint": "https://e", "caSecretRef": {"name": "ca"},
                "aws": {"clusterName": "c", "region": "eu-west-1"}},
        }))
        .expect("a SveltosCluster spec");
        let mut each: Vec<SveltosClusterSpec> = vec![bare.clone(), set.clone()];
        for strip in 0..5 {
            let mut one = set.clone();
            match strip {
                0 => one.data = None,
                1 => one.readiness_checks = None,
                2 => one.liveness_checks = None,
                3 => one.pull_mode = None,
                _ => one.workload_identity = None,
            }
            each.push(one);
        }
        let plain = BTreeMap::from([("team".to_string(), "a\u{1b}\"é".to_string())]);
        let mut recorded = plain.clone();
        recorded.insert(crate::domain::BRIDGE_CONFIG_ANNOTATION.into(), "{}".into());
        recorded.insert(crate::domain::ownership::MARK_ANNOTATION.into(), "m".into());
        let mut renewed = recorded.clone();
        renewed.insert(TOKEN_RENEWAL_ANNOTATION.into(), "{}".into());
        for annotations in [BTreeMap::new(), plain, recorded, renewed] {
            for spec in &each {
                assert_eq!(
                    config_sha256(&annotations, spec),
                    as_first_written(&annotations, spec),
                    "{annotations:?} {spec:?}"
                );
            }
        }
        // And one value as recorded, so that a change of both at once shows too.
        assert_eq!(
            config_sha256(&BTreeMap::new(), &bare),
            "e99397b32ecfa68667c35ad7ce211e6925590ab45563b55cd843cacff893be15"
        );
    }

    fn src() -> CredentialSource {
        CredentialSource::LabelledSecret {
            namespace: "a".into(),
            name: "s".into(),
            key: "Config".into(),
        }
    }

    fn bytes() -> Material {
        Material::Bytes {
            bytes: KUBECONFIG.as_bytes().to_vec(),
            expires_at: None,
            config_sha256: None,
        }
    }

    #[test]
    fn writes_cluster_and_secret_in_the_profile_namespace() {
        let spec = BridgeSpec {
            name: "main".into(),
            extra_labels: BTreeMap::from([("env".into(), "prod".into())]),
            ..Default::default()
        };
        let mut p = profile(
            "team-a",
            "c1",
            &[
                ("enabled", "true"),
                ("empty", ""),
                (keys::SVELTOS_K8S_VERSION_LABEL, "v1"),
            ],
        );
        p.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("x".into(), "1".into());
        let d = desired(&spec, &p, &src(), &bytes(), false);
        let sc = d.sveltos_cluster.as_ref().unwrap();
        assert_eq!(sc.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(
            sc.spec.kubeconfig_name.as_deref(),
            Some("c1-sveltos-kubeconfig")
        );
        assert_eq!(sc.spec.kubeconfig_key_name.as_deref(), Some("kubeconfig"));
        let labels = sc.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["enabled"], "true");
        assert_eq!(labels["empty"], "");
        assert_eq!(labels["env"], "prod");
        assert_eq!(labels[keys::BRIDGE_LABEL], "main");
        assert!(!labels.contains_key(keys::SVELTOS_K8S_VERSION_LABEL));
        assert!(!d.entry.labels.contains_key(keys::BRIDGE_LABEL));
        assert_eq!(
            sc.metadata.annotations.as_ref().unwrap()[keys::DISPLAY_NAME_ANNOTATION],
            "c1 display"
        );
        let secret = d.secret.as_ref().unwrap();
        assert_eq!(secret.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(
            secret.data.as_ref().unwrap()["kubeconfig"].0,
            KUBECONFIG.as_bytes()
        );
        assert_eq!(
            d.entry.kubeconfig_sha256.as_deref(),
            Some(sha256_hex(KUBECONFIG.as_bytes()).as_str())
        );
        assert_eq!(
            d.entry.secret.as_deref(),
            Some("team-a/c1-sveltos-kubeconfig")
        );
        // Nothing sensitive leaves the Secret.
        let sc_json = serde_json::to_string(d.sveltos_cluster.as_ref().unwrap()).unwrap();
        assert!(!sc_json.contains("canary"));
        assert!(!format!("{:?}", d.entry).contains("canary"));
    }

    #[test]
    fn overrides_win_and_change_the_config_hash() {
        let p = profile("team-a", "c1", &[]);
        let base = BridgeSpec {
            name: "main".into(),
            paused: Some(false),
            ..Default::default()
        };
        let mut spec = base.clone();
        spec.overrides.insert(
            "team-a/c1".into(),
            Override {
                paused: Some(true),
                extra_labels: BTreeMap::from([("tier".into(), "gold".into())]),
                ..Default::default()
            },
        );
        let a = desired(&base, &p, &src(), &bytes(), false);
        let b = desired(&spec, &p, &src(), &bytes(), false);
        assert_eq!(b.sveltos_cluster.unwrap().spec.paused, Some(true));
        assert_eq!(b.entry.labels["tier"], "gold");
        assert_ne!(a.entry.config_sha256, b.entry.config_sha256);
    }

    #[test]
    fn data_merges_per_key_and_the_new_fields_count_only_when_set() {
        let p = profile("team-a", "c1", &[]);
        let mut spec = BridgeSpec {
            name: "main".into(),
            data: BTreeMap::from([
                ("region".into(), "eu-1".into()),
                ("tier".into(), "silver".into()),
            ]),
            ..Default::default()
        };
        spec.overrides.insert(
            "team-a/c1".into(),
            Override {
                data: BTreeMap::from([("tier".into(), "gold".into())]),
                ..Default::default()
            },
        );
        let with = desired(&spec, &p, &src(), &bytes(), false);
        let data = with
            .sveltos_cluster
            .as_ref()
            .unwrap()
            .spec
            .data
            .clone()
            .unwrap();
        assert_eq!(
            (data["region"].as_str(), data["tier"].as_str()),
            ("eu-1", "gold")
        );
        // Without them, the hash is the one computed before these fields existed: no change after an upgrade.
        let without = desired(
            &BridgeSpec {
                name: "main".into(),
                ..Default::default()
            },
            &p,
            &src(),
            &bytes(),
            false,
        );
        let sc = without.sveltos_cluster.unwrap();
        let ann = sc.metadata.annotations.clone().unwrap();
        let s = &sc.spec;
        let before = serde_json::json!({
            "annotations": ann,
            "kubeconfigName": s.kubeconfig_name,
            "kubeconfigKeyName": s.kubeconfig_key_name,
            "paused": s.paused,
            "consecutiveFailureThreshold": s.consecutive_failure_threshold,
            "activeWindow": s.active_window,
        });
        assert_eq!(
            without.entry.config_sha256,
            sha256_hex(before.to_string().as_bytes())
        );
        assert_ne!(without.entry.config_sha256, with.entry.config_sha256);
    }

    #[test]
    fn paused_is_never_written_where_a_window_is() {
        let p = profile("team-a", "c1", &[]);
        let window = crate::api::ActiveWindow {
            from: "0 20 * * 5".into(),
            to: "0 7 * * 1".into(),
        };
        // Bridge-wide window, paused from everywhere (validation refuses these; the spec never carries them).
        let mut spec = BridgeSpec {
            name: "main".into(),
            paused: Some(false),
            active_window: Some(window.clone()),
            ..Default::default()
        };
        spec.overrides.insert(
            "team-a/c1".into(),
            Override {
                paused: Some(true),
                ..Default::default()
            },
        );
        for health_pause in [false, true] {
            let sc = desired(&spec, &p, &src(), &bytes(), health_pause)
                .sveltos_cluster
                .unwrap();
            assert_eq!(sc.spec.paused, None, "health_pause = {health_pause}");
            assert_eq!(sc.spec.active_window.as_ref(), Some(&window));
        }
        // A window of this cluster alone.
        spec.active_window = None;
        spec.overrides.get_mut("team-a/c1").unwrap().active_window = Some(window);
        let sc = desired(&spec, &p, &src(), &bytes(), false)
            .sveltos_cluster
            .unwrap();
        assert_eq!(sc.spec.paused, None);
    }

    #[test]
    fn an_override_replaces_the_bridge_wide_checks_and_workload_identity() {
        use crate::api::{ClusterCheck, WorkloadIdentity};
        let check = |name: &str| ClusterCheck {
            name: name.into(),
            ..Default::default()
        };
        let identity = |endpoint: &str| WorkloadIdentity {
            provider: "GCP".into(),
            endpoint: endpoint.into(),
            ..Default::default()
        };
        let mut spec = BridgeSpec {
            name: "main".into(),
            readiness_checks: vec![check("bridge-ready"), check("bridge-2")],
            liveness_checks: vec![check("bridge-alive")],
            workload_identity: Some(identity("https://bridge")),
            ..Default::default()
        };
        spec.overrides.insert(
            "team-a/c1".into(),
            Override {
                readiness_checks: Some(vec![check("own-ready")]),
                liveness_checks: Some(vec![]),
                workload_identity: Some(identity("https://own")),
                ..Default::default()
            },
        );
        let sc = |name: &str| {
            desired(
                &spec,
                &profile("team-a", name, &[]),
                &src(),
                &bytes(),
                false,
            )
            .sveltos_cluster
            .unwrap()
            .spec
        };
        // The override's lists replace the bridge-wide ones (not merged); an empty list: none.
        let own = sc("c1");
        assert_eq!(own.readiness_checks, Some(vec![check("own-ready")]));
        assert_eq!(own.liveness_checks, None);
        assert_eq!(own.workload_identity, Some(identity("https://own")));
        assert_eq!(own.kubeconfig_name, None);
        // A cluster without an override gets the bridge-wide ones, and no kubeconfig beside the identity.
        let other = sc("c2");
        assert_eq!(other.readiness_checks, Some(spec.readiness_checks.clone()));
        assert_eq!(other.liveness_checks, Some(vec![check("bridge-alive")]));
        assert_eq!(other.workload_identity, Some(identity("https://bridge")));
        assert_eq!(
            (other.kubeconfig_name, other.kubeconfig_key_name),
            (None, None)
        );
    }

    #[test]
    fn label_copying_is_under_control() {
        let p = profile(
            "team-a",
            "c1",
            &[
                ("env", "prod"),
                ("projectsveltos.io/cluster-profile", "gold"),
                ("team.example.com/owner", "x"),
            ],
        );
        // Default: everything but Sveltos' and the bridge's own prefixes. Attack: a profile writer cannot pick
        // Sveltos profiles through `projectsveltos.io/` labels.
        let d = desired(&BridgeSpec::default(), &p, &src(), &bytes(), false);
        assert!(d.entry.labels.contains_key("env"));
        assert!(
            !d.entry
                .labels
                .contains_key("projectsveltos.io/cluster-profile")
        );
        // Only a known set; extras still win.
        let spec = BridgeSpec {
            copy_labels: crate::domain::LabelCopy {
                include: vec!["team.example.com/*".into()],
                exclude: vec![],
                remove_foreign: false,
            },
            extra_labels: BTreeMap::from([("env".into(), "fixed".into())]),
            ..Default::default()
        };
        let d = desired(&spec, &p, &src(), &bytes(), false);
        assert_eq!(
            d.entry.labels,
            BTreeMap::from([
                ("env".to_string(), "fixed".to_string()),
                ("team.example.com/owner".to_string(), "x".to_string())
            ])
        );
    }

    #[test]
    fn properties_become_labels_and_data_and_a_profile_label_cannot_stand_in_for_one() {
        let mut p = profile(
            "team-a",
            "c1",
            &[
                ("property.clusterinventory.io/location", "forged"),
                ("property.clusterinventory.io/tier", "forged"),
                ("env", "prod"),
            ],
        );
        let status = p.status.get_or_insert_with(Default::default);
        for (name, value) in [("location", "eu-west-1"), ("zone", "eu west")] {
            status.properties.push(crate::api::Property {
                name: name.into(),
                value: value.into(),
                ..Default::default()
            });
        }
        let spec = BridgeSpec {
            name: "main".into(),
            data: BTreeMap::from([("region".into(), "configured".into())]),
            properties: properties::PropertyCopy {
                names: vec!["location".into(), "zone".into(), "tier".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let d = desired(&spec, &p, &src(), &bytes(), false);
        // The property's label, never the profile's forged ones (`tier` is not reported: no label at all).
        assert_eq!(
            d.entry.labels,
            BTreeMap::from([
                ("env".to_string(), "prod".to_string()),
                (
                    "property.clusterinventory.io/location".to_string(),
                    "eu-west-1".to_string()
                ),
            ])
        );
        let data = d.sveltos_cluster.unwrap().spec.data.unwrap();
        assert_eq!(
            data,
            BTreeMap::from([
                ("location".to_string(), "eu-west-1".to_string()),
                ("region".to_string(), "configured".to_string()),
                ("zone".to_string(), "eu west".to_string()),
            ])
        );
        assert_eq!(d.entry.managed.data, data, "the plan shows the data");
        // Without copy_properties the profile's labels are copied as before.
        let plain = desired(&BridgeSpec::default(), &p, &src(), &bytes(), false);
        assert_eq!(
            plain.entry.labels["property.clusterinventory.io/location"],
            "forged"
        );
    }

    #[test]
    fn debug_output_never_shows_kubeconfig_bytes() {
        let p = profile("n", "c", &[]);
        let d = desired(&BridgeSpec::default(), &p, &src(), &bytes(), false);
        for dump in [
            format!("{d:?}"),
            format!("{:?}", bytes()),
            format!("{d:#?}"),
        ] {
            assert!(!dump.contains("canary-secret-token"), "{dump}");
        }
    }

    #[test]
    fn pending_and_reused_credentials_write_no_secret() {
        let p = profile("n", "c", &[]);
        let spec = BridgeSpec::default();
        let d = desired(&spec, &p, &src(), &Material::Pending, false);
        assert!(
            d.secret.is_none() && d.entry.credential_pending && d.entry.kubeconfig_sha256.is_none()
        );
        let d = desired(
            &spec,
            &p,
            &src(),
            &Material::Reuse {
                kubeconfig_sha256: "abc".into(),
                expires_at: Some("2030-01-01T00:00:00Z".into()),
            },
            false,
        );
        assert!(d.secret.is_none() && !d.entry.credential_pending);
        assert_eq!(d.entry.kubeconfig_sha256.as_deref(), Some("abc"));
    }

    #[test]
    fn a_plan_that_writes_nothing_gets_the_same_entry_without_building_objects() {
        let p = profile("team-a", "c1", &[("env", "prod")]);
        let renewal = TokenRenewal {
            interval: "10m".into(),
            token_duration: None,
            sa_namespace: Some("sa".into()),
            sa_name: Some("renewer".into()),
        };
        let mut spec = BridgeSpec {
            name: "main".into(),
            extra_labels: BTreeMap::from([("team".into(), "a".into())]),
            data: BTreeMap::from([("region".into(), "eu-1".into())]),
            token_renewal: Some(renewal),
            ..Default::default()
        };
        spec.overrides.insert(
            "team-a/c1".into(),
            Override {
                paused: Some(true),
                extra_annotations: BTreeMap::from([("note".into(), "x".into())]),
                ..Default::default()
            },
        );
        let reuse = Material::Reuse {
            kubeconfig_sha256: "abc".into(),
            expires_at: Some("2030-01-01T00:00:00Z".into()),
        };
        for spec in [BridgeSpec::default(), spec] {
            for material in [bytes(), Material::Pending, reuse.clone()] {
                for pause in [false, true] {
                    let full = desired(&spec, &p, &src(), &material, pause);
                    let entry = desired_entry(&spec, &p, &src(), &material, pause);
                    assert_eq!((&entry.key, &entry.entry), (&full.key, &full.entry));
                    assert!(entry.secret.is_none() && entry.sveltos_cluster.is_none());
                    assert!(full.sveltos_cluster.is_some());
                }
            }
        }
    }

    #[test]
    fn packed_objects_read_back_as_they_were_built() {
        // Label and annotation values a tenant chose (copied from the profile), spec data, a renewal whose
        // interval was left out of the apply body (an empty string is not serialised).
        let hostile = "\u{0}\"}{\\n\u{202e}\u{1F600}";
        let p = profile("team-a", "c1", &[("env", hostile), ("tier", "")]);
        let spec = BridgeSpec {
            name: "main".into(),
            data: BTreeMap::from([("k".into(), hostile.into())]),
            token_renewal: Some(TokenRenewal {
                interval: "10m".into(),
                token_duration: None,
                sa_namespace: Some("sa".into()),
                sa_name: Some("renewer".into()),
            }),
            ..Default::default()
        };
        let d = desired(&spec, &p, &src(), &bytes(), false);
        let secret = *d.secret.clone().unwrap();
        let mut sc = *d.sveltos_cluster.clone().unwrap();
        for sc in [sc.clone(), {
            sc.spec
                .token_request_renewal_option
                .as_mut()
                .unwrap()
                .renew_token_request_interval = String::new();
            sc
        }] {
            let packed = Packed::pack(Some(&secret), Some(&sc));
            let (s, c) = packed.unpack();
            assert_eq!(s.as_ref(), Some(&secret));
            let c = c.unwrap();
            assert_eq!(c.metadata, sc.metadata);
            assert_eq!(c.spec, sc.spec);
        }
        let (s, c) = Packed::pack(None, None).unpack();
        assert!(s.is_none() && c.is_none());
    }
}
