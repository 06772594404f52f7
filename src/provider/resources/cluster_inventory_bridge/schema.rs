//! The resource's schema: its attributes and blocks with their descriptions (the registry docs are rendered from
//! them), the type of one `clusters` entry, and the state values built on it (the null state an import starts
//! from, a state with its `clusters`).

use crate::tfplugin::{
    Schema, Type, Value,
    schema::{Attribute, Block, NestedBlock, Nesting},
};

use super::timeouts;
use crate::domain::plan::Skipped;
use std::collections::BTreeMap;

/// Resource type name.
pub const TYPE_NAME: &str = "sveltos_cluster_inventory_bridge";

/// The type of one value of `skipped`.
pub fn skipped_type() -> Type {
    Type::object([("cause", Type::String), ("kept", Type::Bool)])
}

/// The `skipped` attribute's value.
pub fn skipped_value(skipped: &BTreeMap<String, Skipped>) -> Value {
    Value::map(skipped.iter().map(|(k, s)| {
        (
            k.clone(),
            Value::object([
                ("cause", Value::string(&s.cause)),
                ("kept", Value::bool(s.kept)),
            ]),
        )
    }))
}

/// The `skipped` attribute of `state` (`None` when it is null or not known, or does not read).
pub fn skipped_of(state: &Value) -> Option<BTreeMap<String, Skipped>> {
    let Value::Map(m) = state.get_attr("skipped") else {
        return None;
    };
    m.iter()
        .map(|(k, v)| {
            let cause = v.get_attr("cause").as_str()?.to_string();
            let kept = v.get_attr("kept").as_bool()?;
            let reason = None;
            Some((
                k.clone(),
                Skipped {
                    cause,
                    kept,
                    reason,
                },
            ))
        })
        .collect()
}

/// The type of one `clusters` entry.
pub fn cluster_entry_type() -> Type {
    Type::object([
        ("sveltos_cluster", Type::String),
        ("secret", Type::String),
        ("credential_source", Type::String),
        ("kubeconfig_sha256", Type::String),
        ("credential_expires_at", Type::String),
        ("labels", Type::map(Type::String)),
        ("annotations", Type::map(Type::String)),
        ("paused", Type::Bool),
        ("consecutive_failure_threshold", Type::Number),
        (
            "active_window",
            Type::object([("from", Type::String), ("to", Type::String)]),
        ),
        ("data", Type::map(Type::String)),
        ("config_sha256", Type::String),
    ])
}

/// The attributes of `token_renewal` (the block, and the object in `overrides`).
fn token_renewal_attributes() -> Vec<Attribute> {
    let md = |a: Attribute, d: &str| a.markdown_description(d);
    vec![
        md(
            Attribute::string("interval").required(),
            "`renewTokenRequestInterval`: how often Sveltos renews the token (Go duration, e.g. `1h`).",
        ),
        md(
            Attribute::string("token_duration").optional(),
            "`tokenDuration`: how long each token is valid (Go duration; default: the interval). Longer than the \
             interval leaves a buffer for connectivity loss.",
        ),
        md(
            Attribute::string("service_account").optional(),
            "`saNamespace/saName` of the ServiceAccount on the member cluster to mint tokens for. Without it, \
             Sveltos renews only a credential that is itself a ServiceAccount token (it asks the member cluster \
             whom the credential authenticates); every plan warns, naming each cluster whose credential is \
             anything else.",
        ),
    ]
}

/// The resource schema.
pub fn schema() -> Schema {
    let attributes = [
        identity_and_selection_attributes(),
        sveltos_cluster_attributes(),
        safety_attributes(),
    ];
    let mut schema = Schema::new(0)
        .markdown_description(
            "Registers the ClusterProfiles of a [Cluster Inventory](https://github.com/kubernetes/enhancements/tree/master/keps/sig-multicluster/4322-cluster-inventory) \
             as Sveltos `SveltosCluster`s: for profile `ns/name` it writes SveltosCluster `ns/name` and Secret \
             `ns/name-sveltos-kubeconfig` (key `kubeconfig`). One resource manages many clusters; `plan` shows each \
             added, changed or removed cluster. State holds identities, hashes and the managed SveltosCluster fields, never credentials.",
        );
    for a in attributes.into_iter().flatten() {
        schema = schema.attribute(a);
    }
    schema
        .attribute(overrides_attribute())
        .attribute(md(
            Attribute::map("clusters", cluster_entry_type()).computed(),
            "The bridged clusters keyed `namespace/name`: `sveltos_cluster` and `secret` (`namespace/name`), \
             `credential_source`, `kubeconfig_sha256`, `credential_expires_at`; the managed SveltosCluster fields \
             `labels`, `annotations` (those the bridge sets: `extra_annotations`, the display name, the token \
             renewal record; each value escaped and cut to 256 characters, at most 64), `paused`, \
             `consecutive_failure_threshold`, `active_window` (`from`, `to`) and `data` (`spec.data`: `data`, \
             `overrides`' and `copy_properties`' entries, keys and values escaped and cut to 256 characters, at most \
             64), so that a plan shows each change old -> new; and `config_sha256` (hash of every managed field, in \
             full). Identities, hashes and those \
             fields only, never credentials.",
        ))
        .attribute(md(
            Attribute::map("skipped", skipped_type()).computed(),
            "The clusters this bridge leaves out or keeps as they are because of a problem confined to them, keyed \
             `namespace/name`: `cause` (the cause in words, as the plan's warning summary says it; never credential \
             content) and `kept` (`true`: its SveltosCluster and Secret stay as they are; `false`: it is not \
             registered). Empty when every selected ClusterProfile is bridged. A newly skipped cluster is a change \
             in the plan, so `plan -detailed-exitcode` returns 2. To fail a pipeline on skipped clusters: \
             `fail_on_skipped = true` fails the run once every other cluster is applied; a `postcondition` \
             (`length(self.skipped) == 0`) fails it at plan, before anything is applied; `strict = true` makes every \
             such problem an error that stops the plan. A `check` block only warns.",
        ))
        .block(crate::provider::blocks::credentials::block())
        .block(crate::provider::blocks::inventory::resource_block())
        .block(copy_labels_block())
        .block(copy_properties_block())
        .block(timeouts::block())
        .block(token_renewal_block())
        .block(active_window_block())
        .block(workload_identity_block())
}

/// The bridge's identity and which ClusterProfiles it selects.
fn identity_and_selection_attributes() -> Vec<Attribute> {
    vec![
        md(Attribute::string("id").computed(), "The bridge name."),
        md(
            Attribute::string("name").required(),
            "The bridge's identity, written as the value of the `sveltos.clusterinventory.io/bridge` label on every \
             object it creates. Changing it replaces the bridge.",
        ),
        md(
            Attribute::list("namespaces", Type::String).optional(),
            "Only ClusterProfiles in these namespaces (default: all). Required, and not empty, with an \
             `inventory` block: the hub's namespace names are where the bridge writes on the management cluster.",
        ),
        md(
            Attribute::list("names", Type::String).optional(),
            "Only ClusterProfiles with these names (`name` or `namespace/name`).",
        ),
        md(
            Attribute::string("label_selector").optional(),
            "Only ClusterProfiles matching this label selector (`env=prod,tier in (a,b)`).",
        ),
        md(
            Attribute::string("cluster_manager").optional(),
            "Only ClusterProfiles whose `spec.clusterManager.name` is this.",
        ),
        md(
            Attribute::bool("require_healthy").optional(),
            "Register only ClusterProfiles whose `ControlPlaneHealthy` condition is `True` (default false). What \
             happens to an already bridged cluster whose profile turns unhealthy is set by `unhealthy`.",
        ),
        md(
            Attribute::bool("require_credentials").optional(),
            "Fail the plan when a selected ClusterProfile that is not bridged yet has no usable credentials, \
             instead of skipping it with a warning (default false). An already bridged cluster whose credentials \
             became unusable is always kept as it is.",
        ),
    ]
}

/// What every SveltosCluster gets.
fn sveltos_cluster_attributes() -> Vec<Attribute> {
    vec![
        md(
            Attribute::map("extra_labels", Type::String).optional(),
            "Labels added to every SveltosCluster (on top of the ClusterProfile's labels).",
        ),
        md(
            Attribute::map("extra_annotations", Type::String).optional(),
            "Annotations added to every SveltosCluster.",
        ),
        md(
            Attribute::bool("paused").optional(),
            "`spec.paused` of every SveltosCluster. Not with an `active_window` (here or in `overrides`): \
             sveltoscluster-manager owns `spec.paused` of a cluster with a window, and the bridge never writes it \
             there.",
        ),
        md(
            Attribute::number("consecutive_failure_threshold").optional(),
            "`spec.consecutiveFailureThreshold` of every SveltosCluster.",
        ),
        md(
            Attribute::map("data", Type::String).optional(),
            "`spec.data` of every SveltosCluster (an override's `data` adds to it and wins per key): values Sveltos \
             templates read as `.Cluster.spec.data.<key>` (e.g. in an add-on's `policyRefs` with \
             `projectsveltos.io/template`).",
        ),
        md(
            Attribute::bool("pull_mode").optional(),
            &format!("{PULL_MODE} For every SveltosCluster."),
        ),
        md(
            Attribute::string("readiness_checks").optional(),
            "`spec.readinessChecks` of every SveltosCluster (an override's `readiness_checks` replaces it): checks sveltoscluster-manager runs on the cluster before \
             it marks it Ready (until they pass, the cluster is not Ready and Sveltos deploys nothing to it; the \
             failing check is in `status.failureMessage`). JSON text of a list of checks written exactly as in the \
             upstream SveltosCluster CRD, with its field names: `jsonencode([{ name, condition, resourceSelectors = \
             [{ group, version, kind, name, namespace, evaluate, evaluateCEL, labelFilters, selector }] }])`, or \
             `jsonencode(yamldecode(...))` of upstream YAML; `condition` a Lua function `evaluate` over the selected resources \
             (the global `resources`) returning a table with `pass` (a bool; the CRD's description says `result`, \
             the manager reads `pass`) and `message`. Checked at validation as the CRD checks it (required fields, \
             `kind` not empty, `labelFilters[].operation` one of `Equal`, `Different`, `Has`, `DoesNotHave`), and \
             no field the CRD does not have; names unique.",
        ),
        md(
            Attribute::string("liveness_checks").optional(),
            "`spec.livenessChecks` of every SveltosCluster (an override's `liveness_checks` replaces it): checks (JSON text, as `readiness_checks`) sveltoscluster-manager \
             runs on every reconcile (about once a minute) once the cluster is Ready; each failure counts as a \
             failed connection, and after `consecutive_failure_threshold` of them in a row the cluster's \
             `connectionStatus` is `Down` (Sveltos keeps `ready = true`).",
        ),
    ]
}

/// The claim, and how the bridge treats problems, unhealthy profiles, removals and existing objects.
fn safety_attributes() -> Vec<Attribute> {
    vec![
        md(
            Attribute::string("claim_namespace").optional(),
            "Namespace of the bridge's claim, a ConfigMap `sveltos-bridge-<name>` holding this state's instance id and \
             the bridge's configuration (for `import`). A second Terraform state that uses the same `name` on the same \
             management cluster fails at plan instead of deleting this bridge's clusters. Default `default`.",
        ),
        md(
            Attribute::string("instance_id").computed(),
            "Random id of this bridge instance, also held by its claim.",
        ),
        md(
            Attribute::bool("strict").optional(),
            "Make every problem confined to one cluster (two candidate Secrets, no usable or a refused \
             credential, a name collision, ...) an error that stops the plan. Default false: that cluster is kept \
             exactly as it is (or not registered), every other cluster is planned and applied, and one warning \
             per cause lists the clusters concerned.",
        ),
        md(
            Attribute::bool("fail_on_skipped").optional(),
            "Fail the run when clusters are skipped (see `skipped`), once every other cluster is applied: the apply \
             registers, updates and deregisters every other cluster as planned, records them in the state, then \
             fails with an error listing the skipped clusters and their causes. Default false. While a cluster is \
             skipped, `skipped` is known only after apply, so every plan shows a change and every apply fails. \
             Terraform marks a resource whose creation fails tainted, so the plan that creates the bridge (or \
             replaces it) fails instead, and nothing is applied. `strict = true` stops the plan instead.",
        ),
        md(
            Attribute::string("unhealthy").optional(),
            "With `require_healthy`: what happens to an already bridged cluster whose ClusterProfile is no longer \
             healthy. `keep` (default) leaves it registered as it is, `pause` sets `spec.paused = true` on its \
             SveltosCluster until it is healthy again (not with an `active_window`, here or in `overrides`: \
             sveltoscluster-manager owns `spec.paused` there), `remove` deregisters it. New clusters are registered \
             only when healthy.",
        ),
        md(
            Attribute::string("duplicate_members").optional(),
            "What happens to ClusterProfiles that describe one member cluster: those carrying the same \
             `multicluster.x-k8s.io/inventory-member-id` label (the same cluster in several inventories), and with \
             `duplicate_members_by_server` those naming the same server URL. `warn` (default) registers each and \
             warns, naming them: a namespaced Sveltos `Profile` only sees the clusters of its own namespace, so the \
             bridge does not choose. `register_one` registers the first of each member cluster (in the order of \
             `namespaces`, else by namespace name, then by name; one that cannot be registered gives way to the \
             next) and skips the others: they are in `skipped`, their cause naming the cluster registered, and one \
             registered before is deregistered. The label's value is compared as an opaque string (at most 63 \
             characters).",
        ),
        md(
            Attribute::bool("duplicate_members_by_server").optional(),
            "Also treat ClusterProfiles whose access providers name the same server URL (scheme and host compared \
             case-insensitively, a trailing `/` ignored) as one member cluster, for inventories that do not set \
             `multicluster.x-k8s.io/inventory-member-id`. Default false: one gateway URL may front several \
             clusters.",
        ),
        md(
            Attribute::bool("skip_cluster_api_clusters").optional(),
            "Leave out each ClusterProfile that has a Cluster API `Cluster` (`cluster.x-k8s.io`) of the same \
             namespace and name on the management cluster (the provider's own connection, where the \
             SveltosClusters are written; never the `inventory` block's hub): Sveltos manages Cluster API \
             clusters natively (cluster type `Capi`), so registering such a profile too would deploy its add-ons \
             twice. A skipped profile is in `skipped` and in a warning naming it and the Cluster, and one \
             registered before is deregistered, as `duplicate_members = \"register_one\"` does. Each plan and apply \
             then lists the metadata of the Clusters of `namespaces` (the version the API server prefers, \
             `v1beta2` or `v1beta1`): the provider's identity needs `list` on `clusters.cluster.x-k8s.io`, and a cluster \
             without Cluster API (the group not served) has nothing to check. Default false.",
        ),
        md(
            Attribute::number("max_removals").optional(),
            "A plan that would deregister more clusters than this fails, naming the count and the first clusters; \
             nothing is written. Unset, the limit is 10 clusters or 25 % of the clusters bridged, whichever is \
             more (set it for an apply that should deregister more). Destroy, a new `name` and `-replace` are not \
             limited (use `lifecycle { prevent_destroy = true }`). Every plan that deregisters clusters carries a \
             warning listing them.",
        ),
        md(
            Attribute::number("max_updates").optional(),
            "A plan that would change the SveltosClusters (labels, annotations or spec) of more already registered \
             clusters than this fails, naming the count and the first clusters; nothing is written. Unset, the \
             limit is 10 clusters or 25 % of the clusters bridged, whichever is more (set it for an apply that \
             should update more). Registrations, removals and credential changes (a rotated kubeconfig, a renewed \
             exec credential) are not counted. Every plan that registers, updates or deregisters clusters carries a \
             one-line warning counting them (`Warning: Bridge plan: 0 to register, 60 to update, 0 to deregister, 0 skipped, 0 unchanged`).",
        ),
        md(
            Attribute::string("deregistration").optional(),
            "What deregistering a cluster (a removal, destroy) does with the add-ons Sveltos deployed to it. \
             `withdraw` (default, like Sveltos' own `stopMatchingBehavior`): the cluster first stops matching \
             Sveltos profiles (the labels the bridge wrote on its SveltosCluster are removed; its ownership label \
             stays), the bridge waits until addon-controller has withdrawn its add-ons (no `ClusterSummary` left \
             for the cluster), then deletes the SveltosCluster, then its kubeconfig Secret. Add-ons not withdrawn \
             within `deregistration_timeout` (a paused or unreachable cluster, a Sveltos profile selecting it by \
             `clusterRefs` or by a label the bridge does not write) keep the cluster registered, reported in a \
             warning naming it (an error with `strict`), and the next apply checks again without waiting. Without \
             Sveltos' add-on API (no addon-controller) there is nothing to withdraw. `orphan`: the SveltosCluster \
             and its Secret are deleted at once, and the add-ons stay on the cluster, managed by no one \
             (addon-controller does not withdraw them when a SveltosCluster is deleted).",
        ),
        md(
            Attribute::string("deregistration_timeout").optional(),
            "How long deregistration waits for one cluster: for its add-ons to be withdrawn (`deregistration = \
             \"withdraw\"`), then for its SveltosCluster to be gone (a finalizer may hold it), before it deletes the \
             kubeconfig Secret (Go duration, default `5m`). On timeout the cluster keeps its SveltosCluster or Secret \
             and is reported in a warning naming it (an error with `strict`), every other cluster is applied, and \
             the next apply resumes without waiting for it again.",
        ),
        md(
            Attribute::bool("wait_for_ready").optional(),
            "Wait at apply until sveltoscluster-manager reports every cluster this apply registered or changed \
             Ready (default false: apply returns once the objects are written). Ready as the manager writes it in the \
             SveltosCluster's status: `ready = true` (it reached the cluster's `/version` and the `readiness_checks` \
             passed) and a `connectionStatus` that is not `Down`. A cluster not Ready within `ready_timeout` is a \
             warning naming it with the manager's last `failureMessage` (an error with `strict`); every cluster is \
             written and recorded either way, and the wait never outlasts the apply's `timeouts`. Clusters an apply \
             does not write are not waited for.",
        ),
        md(
            Attribute::string("ready_timeout").optional(),
            "With `wait_for_ready`: how long apply waits, for all the clusters together (Go duration, default `5m`; \
             also bounded by what is left of the apply's `timeouts`).",
        ),
        md(
            Attribute::bool("adopt").optional(),
            "Take over existing SveltosClusters and Secrets with the same names that this bridge did not create \
             (default false: such a cluster is left alone, nothing is written to those objects, and a warning \
             names them; with `strict = true` it is an error).",
        ),
    ]
}

/// A provider block of a `workload_identity`: its name, attributes and what it is for.
type ProviderBlock = (&'static str, Vec<Attribute>, &'static str);

/// The attributes of a `workload_identity` (`provider`, `endpoint`, `ca_secret`) and of its provider blocks, by
/// block name, with what each block is for.
fn workload_identity_parts() -> (Vec<Attribute>, Vec<ProviderBlock>) {
    let s = |n: &str, d: &str| md(Attribute::string(n).required(), d);
    let o = |n: &str, d: &str| md(Attribute::string(n).optional(), d);
    let aws = vec![
        s("cluster_name", "`clusterName`: the EKS cluster's name."),
        o(
            "region",
            "`region` (default: the `AWS_REGION` Sveltos runs with).",
        ),
        o(
            "role_arn",
            "`roleARN`: the IAM role Sveltos assumes (default: its own IRSA credentials).",
        ),
    ];
    let gcp = vec![
        s("cluster_name", "`clusterName`: the GKE cluster's name."),
        s("location", "`location`: its region or zone."),
        s("project_id", "`projectID`: its project."),
    ];
    let azure = vec![
        s(
            "client_id",
            "`clientID` of the managed identity or app registration federated with Sveltos' ServiceAccount.",
        ),
        s("tenant_id", "`tenantID`."),
        o(
            "cluster_name",
            "`clusterName` (kept by Sveltos for later use).",
        ),
        o(
            "resource_group",
            "`resourceGroup` (kept by Sveltos for later use).",
        ),
        o(
            "subscription_id",
            "`subscriptionID` (kept by Sveltos for later use).",
        ),
    ];
    let top = vec![
        s("provider", "`provider`: `AWS`, `GCP` or `Azure`."),
        s("endpoint", "`endpoint`: the cluster's API server URL."),
        o(
            "ca_secret",
            "`caSecretRef.name`: a Secret in the cluster's namespace holding the API server's CA under `ca.crt` \
             (default: the system's CAs).",
        ),
    ];
    let blocks = vec![
        ("aws", aws, "With `provider = \"AWS\"` (and only then)."),
        ("gcp", gcp, "With `provider = \"GCP\"` (and only then)."),
        (
            "azure",
            azure,
            "With `provider = \"Azure\"` (and only then).",
        ),
    ];
    (top, blocks)
}

/// What a `workload_identity` does; `per_cluster`: an override's.
fn workload_identity_description(per_cluster: bool) -> String {
    format!(
        "{} (Sveltos ≥ 1.12): sveltoscluster-manager and addon-controller get the cluster's credentials from the \
         cloud provider, with the identity they run as, instead of a kubeconfig; the SveltosCluster then has no \
         `kubeconfigName` or `kubeconfigKeyName` (the upstream CRD refuses `kubeconfigName` beside it). The fields \
         and rules are the upstream CRD's. The bridge still needs the inventory's credentials for the cluster and \
         writes its kubeconfig Secret, which Sveltos does not read. Not with `token_renewal` (renewal rewrites a \
         kubeconfig) for any cluster it applies to.",
        if per_cluster {
            "`spec.workloadIdentity` for this cluster, replacing the bridge-wide `workload_identity` (not merged \
             with it)"
        } else {
            "`spec.workloadIdentity` of every SveltosCluster without an override's `workload_identity` (which \
             replaces it), the same `endpoint` for each"
        }
    )
}

/// An override's `workload_identity`: a single nested attribute.
fn workload_identity_attribute() -> Attribute {
    let (mut attrs, blocks) = workload_identity_parts();
    for (name, inner, d) in blocks {
        attrs.push(md(
            Attribute::nested(name, Nesting::Single, inner).optional(),
            d,
        ));
    }
    md(
        Attribute::nested("workload_identity", Nesting::Single, attrs).optional(),
        &workload_identity_description(true),
    )
}

/// The bridge-wide `workload_identity` block (a block, as the other bridge-wide settings: Terraform 1.0.3 cannot
/// plan an unknown value in a top-level nested attribute).
fn workload_identity_block() -> NestedBlock {
    let (attrs, blocks) = workload_identity_parts();
    let mut b = Block::new().markdown_description(workload_identity_description(false));
    for a in attrs {
        b = b.attribute(a);
    }
    for (name, inner, d) in blocks {
        let mut nested = Block::new().markdown_description(d);
        for a in inner {
            nested = nested.attribute(a);
        }
        b = b.block(NestedBlock::single(name, nested));
    }
    NestedBlock::single("workload_identity", b)
}

/// What `pull_mode` does (the bridge-wide attribute and the override's).
const PULL_MODE: &str = "`spec.pullMode`: the cluster's own Sveltos agent (sveltos-applier, installed on it) fetches \
             its configuration, and sveltoscluster-manager does not connect to it (it reads no kubeconfig; the \
             bridge still writes the Secret from the inventory's credentials, and a cluster without usable ones is \
             skipped as any other); the cluster is Ready once the agent reports. Immutable (a rule of the upstream \
             CRD): the API server refuses a change for a registered cluster, a warning naming it (an error with \
             `strict`), the cluster kept as it is; deregister it and register it again to switch.";

/// Adds the `markdown_description` to an attribute.
fn md(a: Attribute, d: &str) -> Attribute {
    a.markdown_description(d)
}

/// The `from` and `to` attributes of an active window.
fn window_attributes() -> [Attribute; 2] {
    [
        md(
            Attribute::string("from").required(),
            "Cron schedule opening the window (standard five fields, UTC, or a descriptor such as `@every 2h`): \
             when it fires, the cluster is unpaused.",
        ),
        md(
            Attribute::string("to").required(),
            "Cron schedule closing the window (same format): when it fires, the cluster is paused.",
        ),
    ]
}

/// The `overrides` attribute: per-cluster settings.
fn overrides_attribute() -> Attribute {
    md(
        Attribute::nested(
            "overrides",
            Nesting::Map,
            [
                md(Attribute::map("extra_labels", Type::String).optional(), "Extra labels for this cluster."),
                md(
                    Attribute::map("extra_annotations", Type::String).optional(),
                    "Extra annotations for this cluster.",
                ),
                md(
                    Attribute::bool("paused").optional(),
                    "`spec.paused` for this cluster. Not when the cluster has an `active_window` (its own or the \
                     bridge-wide one).",
                ),
                md(Attribute::bool("skip").optional(), "Do not bridge this cluster."),
                md(
                    Attribute::nested("token_renewal", Nesting::Single, token_renewal_attributes()).optional(),
                    "Sveltos-side credential renewal for this cluster (wins over the bridge-wide `token_renewal`).",
                ),
                md(
                    Attribute::nested("active_window", Nesting::Single, window_attributes()).optional(),
                    "`spec.activeWindow` for this cluster (wins over the bridge-wide `active_window`): \
                     sveltoscluster-manager then owns its `spec.paused`.",
                ),
                md(
                    Attribute::number("consecutive_failure_threshold").optional(),
                    "`spec.consecutiveFailureThreshold` for this cluster.",
                ),
                md(
                    Attribute::map("data", Type::String).optional(),
                    "`spec.data` entries for this cluster, added to the bridge-wide `data` (winning per key).",
                ),
                md(
                    Attribute::bool("pull_mode").optional(),
                    &format!("{PULL_MODE} For this cluster (wins over the bridge-wide `pull_mode`)."),
                ),
                workload_identity_attribute(),
                md(
                    Attribute::string("readiness_checks").optional(),
                    "`spec.readinessChecks` for this cluster (JSON text, checked as the bridge-wide \
                     `readiness_checks`): replaces the bridge-wide list for this cluster (not merged with it; \
                     `jsonencode([])`: no readiness checks for it).",
                ),
                md(
                    Attribute::string("liveness_checks").optional(),
                    "`spec.livenessChecks` for this cluster (JSON text, checked as the bridge-wide \
                     `liveness_checks`): replaces the bridge-wide list for this cluster (not merged with it; \
                     `jsonencode([])`: no liveness checks for it).",
                ),
            ],
        )
        .optional(),
        "Per-cluster settings keyed `namespace/name` of the ClusterProfile.",
    )
}

/// The `copy_labels` block.
fn copy_labels_block() -> NestedBlock {
    NestedBlock::single(
        "copy_labels",
        Block::new()
            .markdown_description(
                "Which ClusterProfile labels are copied onto SveltosClusters. Default: every label except those \
                 under `projectsveltos.io/` and `sveltos.clusterinventory.io/` (whoever labels a ClusterProfile \
                 would otherwise choose which Sveltos profiles, add-ons and Secrets the cluster receives). \
                 `extra_labels` always win.",
            )
            .attribute(md(
                Attribute::list("include", Type::String).optional(),
                "Copy only labels whose key matches one of these (a key, or a prefix ending in `*`). Default: all.",
            ))
            .attribute(md(
                Attribute::list("exclude", Type::String).optional(),
                "Never copy labels whose key matches one of these (a key, or a prefix ending in `*`). Default \
                 `[\"projectsveltos.io/*\", \"sveltos.clusterinventory.io/*\"]`; setting it replaces the default.",
            ))
            .attribute(md(
                Attribute::bool("remove_foreign").optional(),
                "Labels under `exclude` that someone else added to a SveltosCluster the bridge owns (whoever may \
                 patch it, e.g. a tenant) are reported by every plan, naming the cluster and the label keys. With \
                 `true`, apply removes those labels (guarded by the object's UID), and a cluster on which they are \
                 found again shows as changing in plan; Sveltos' own `projectsveltos.io/k8s-version` is never \
                 removed. Default: `false` (reported only).",
            )),
    )
}

/// The `copy_properties` block.
fn copy_properties_block() -> NestedBlock {
    NestedBlock::single(
        "copy_properties",
        Block::new()
            .markdown_description(
                "Inventory facts into Sveltos: the properties a ClusterProfile reports in `status.properties` (KEP-4322, \
                 such as its location) and its `status.version.kubernetes` become labels of its SveltosCluster (which \
                 Sveltos profiles select by) and entries of its `spec.data` (which Sveltos templates read as \
                 `.Cluster.spec.data.<name>`). Only the properties named here are read. For property `location` of \
                 value `eu-west-1` the SveltosCluster gets the label `property.clusterinventory.io/location: eu-west-1` \
                 and `spec.data.location: eu-west-1`. A value that is not a valid label value (more than 63 \
                 characters, or a character other than letters, digits, `-`, `_` and `.` inside, a letter or digit at \
                 either end) gets no label (it is dropped, never rewritten or hashed), with a warning naming the \
                 cluster; its `spec.data` entry holds it in full. A property reported more than once, with an empty \
                 value or one of more than 1024 bytes, or an entry of `status.properties` that cannot be read, keeps \
                 its cluster as it is (a warning naming the cluster and the property; an error with `strict`), every \
                 other cluster planned and applied. A property not reported has no label and no entry. Labels of \
                 the ClusterProfile under `label_prefix` are never copied (the properties decide them, reported or \
                 not); `extra_labels` and `data` (bridge-wide or in `overrides`) may not set a key a property maps \
                 (an error at that key).",
            )
            .attribute(md(
                Attribute::list("names", Type::String).optional(),
                "Names of the properties to map, exactly as `status.properties[].name` (at most 64, each at most 253 \
                 characters); the label key `label_prefix` + name must be a valid label key outside Sveltos' \
                 (`projectsveltos.io/`, `sveltos-agent`) and the bridge's (`sveltos.clusterinventory.io/`) own.",
            ))
            .attribute(md(
                Attribute::string("label_prefix").optional(),
                "Prepended to a property's name to make its label key (default `property.clusterinventory.io/`).",
            ))
            .attribute(md(
                Attribute::string("kubernetes_version_as").optional(),
                "Also map `status.version.kubernetes`, as if it were a property of this name (e.g. \
                 `kubernetes-version`: label `property.clusterinventory.io/kubernetes-version`, \
                 `spec.data.kubernetes-version`). Not one of `names`. Default: not mapped.",
            )),
    )
}

/// The bridge-wide `token_renewal` block.
fn token_renewal_block() -> NestedBlock {
    let mut b = Block::new().markdown_description(
        "Let Sveltos renew every bridged cluster's credentials (`spec.tokenRequestRenewalOption`): the bridge \
         registers the cluster with the source kubeconfig, then sveltoscluster-manager mints ServiceAccount \
         tokens on the member cluster on this interval and rewrites the kubeconfig Secret. What Sveltos \
         rewrites on renewal (the Secret's data, a new key such as `re-kubeconfig`, `spec.kubeconfigKeyName`, \
         a shortened interval) never shows as drift and is never reverted; a rotated source credential still \
         shows in plan and is written (and the SveltosCluster pointed back at it). A cluster whose connection \
         needs `insecure-skip-tls-verify`, `tls-server-name` or `proxy-url` is registered without renewal, with a \
         warning naming it: a renewal keeps only the server and the CA. See the guide \
         \"Continuous credentials with Sveltos token renewal\".",
    );
    for a in token_renewal_attributes() {
        b = b.attribute(a);
    }
    NestedBlock::single("token_renewal", b)
}

/// The bridge-wide `active_window` block.
fn active_window_block() -> NestedBlock {
    let mut b = Block::new().markdown_description(
        "`spec.activeWindow` of every SveltosCluster: sveltoscluster-manager pauses the cluster (`spec.paused = true`) \
         when `to` fires and unpauses it (removing `spec.paused`) when `from` fires, checking about once a minute. \
         It then owns `spec.paused`: the bridge never writes it for a cluster with a window, and refuses `paused` and \
         `unhealthy = \"pause\"` next to one.",
    );
    for a in window_attributes() {
        b = b.attribute(a);
    }
    NestedBlock::single("active_window", b)
}

/// A state value with every attribute null.
pub fn null_state() -> Value {
    let s = schema();
    let mut attrs: Vec<(String, Value)> = s
        .block
        .attributes
        .iter()
        .map(|a| (a.name.clone(), Value::Null))
        .collect();
    attrs.extend(
        s.block
            .blocks
            .iter()
            .map(|b| (b.type_name.clone(), Value::Null)),
    );
    Value::object(attrs)
}

/// `state` with its `id` and `clusters` set.
pub fn with_clusters(mut state: Value, name: &str, clusters: Value) -> Value {
    state.set_attr("id", Value::string(name));
    state.set_attr("clusters", clusters);
    // A state that never recorded `skipped` (written before it existed, imported, or read back) records none.
    if state.get_attr("skipped").is_null() {
        state.set_attr("skipped", Value::map(Vec::<(String, Value)>::new()));
    }
    state
}
